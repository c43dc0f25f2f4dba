# Argo CD: the real argocd-cmp-server for the tests in test/argocd (a nested
# module: argo-cd v3.2.11 pins k8s.io/* to v0.34.0). Those tests also build
# the documented install (Argo CD's own manifests/install.yaml, which the go
# command finds in the module cache, plus the kustomize/argocd component)
# with bin/kustomize (KUSTOMIZE_BIN, exported by the root Makefile).

ARGOCD_CMP_SERVER := $(BIN)/argocd-cmp-server

# Read by test/argocd (it fails when the server is missing).
export ARGOCD_CMP_SERVER_BIN := $(ARGOCD_CMP_SERVER)

TEST_TOOLS   += $(ARGOCD_CMP_SERVER)
MODULE_TESTS += test/argocd

# Built from the Go module proxy, reused when present: about 140 s cold on
# 2 cores.
$(ARGOCD_CMP_SERVER):
	cd test/argocd && $(GO) build -o $@ ./cmd/argocd-cmp-server

.PHONY: argocd-cmp-server
argocd-cmp-server: $(ARGOCD_CMP_SERVER) ## build bin/argocd-cmp-server (Argo CD's plugin server, for test/argocd)
