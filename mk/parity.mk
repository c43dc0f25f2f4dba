# Parity: public charts and kustomizations from the Go module proxy,
# rendered by wavesmith and by the real helm template and kustomize build
# and compared object for object (test/parity, a package of the root
# module that drives the binaries, DRIVER_TESTS; see its README.md).

# helm as released: helm's release Makefile stamps the version and the
# default Kubernetes version offered to charts (.Capabilities.KubeVersion,
# kubeVersion checks) from the k8s.io/client-go of its go.mod, v0.37.0 for
# v3.22.0. bin/helm ('go install', no ldflags) keeps helm's source
# defaults (v3.22, Kubernetes v1.20.0). test/parity checks both facts.
PARITY_HELM            := $(BIN)/helm-$(HELM_VERSION)-release
PARITY_HELM_K8S_MINOR  := 37
PARITY_HELM_LDFLAGS    := -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	-X helm.sh/helm/v3/internal/version.metadata= \
	-X helm.sh/helm/v3/internal/version.gitTreeState=clean \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$(PARITY_HELM_K8S_MINOR) \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$(PARITY_HELM_K8S_MINOR)

# Read by test/parity (it fails when the binary is missing).
export PARITY_HELM_BIN := $(PARITY_HELM)

TEST_TOOLS   += $(PARITY_HELM)
DRIVER_TESTS += ./test/parity/

# Same packages as bin/helm: once those are in the build cache only the
# link runs (about 40 s on 2 busy cores).
$(PARITY_HELM): | $(HELM)
	@rm -rf $@.tmp
	GOBIN=$@.tmp $(GO) install -ldflags '$(PARITY_HELM_LDFLAGS)' helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv $@.tmp/helm $@
	rm -rf $@.tmp

.PHONY: parity-helm
parity-helm: $(PARITY_HELM) ## build bin/helm-v3.22.0-release (helm with its release ldflags, for test/parity)

# The corpus is downloaded by the test itself (go mod download); about a
# minute and 78 MB cold, see test/parity/README.md.
.PHONY: parity
parity: $(WAVESMITH) $(KUSTOMIZE) $(PARITY_HELM) ## render public charts and kustomizations with wavesmith and with helm/kustomize, compare (test/parity)
	@set -e; export $(TEST_INPUTS); $(GO) vet ./test/parity/ && $(GO) test -count=1 -timeout 20m -v ./test/parity/
