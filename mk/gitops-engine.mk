# gitops-engine: wavesmith's sync waves synced by Argo CD's own sync engine
# (github.com/argoproj/gitops-engine) against envtest, in production order:
# wavesmith-status runs from before the first sync, and the sync judges Kaoto
# and Component by the Lua checks Argo CD reads from argocd-cm
# (kustomize/argocd/argocd-cm-patch.yaml). The nested module
# test/gitops-engine holds it (gitops-engine and argo-cd pin k8s.io/* to
# v0.34.0, which the root go.mod cannot take); its tests read WAVESMITH_BIN,
# WAVESMITH_STATUS_BIN and KUBEBUILDER_ASSETS. The Argo CD Applications
# themselves are written by the package gitops/argocd of the root module.
MODULE_TESTS += test/gitops-engine

# The tools are defined by other files (the root Makefile, mk/status.mk),
# which make may read before or after this one. A rule's prerequisites are
# expanded when make reads the rule, its recipe only when it runs, after
# every file is read: so the tools are named in the recipe, through this
# recursive variable, and built by a sub-make, whatever the include order.
GITOPS_ENGINE_TOOLS = $(WAVESMITH) $(WAVESMITH_STATUS) $(KUBE_APISERVER) $(ETCD)

.PHONY: test-gitops-engine
test-gitops-engine: ## sync the examples wave by wave with Argo CD's gitops-engine on envtest, wavesmith-status running
	$(if $(and $(WAVESMITH),$(WAVESMITH_STATUS),$(KUBE_APISERVER),$(ETCD)),,$(error test-gitops-engine: WAVESMITH, WAVESMITH_STATUS, KUBE_APISERVER or ETCD is not defined by any mk/*.mk))
	$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $(GITOPS_ENGINE_TOOLS)
	@set -e; export $(TEST_INPUTS); cd test/gitops-engine && $(GO) vet ./... && $(GO) test -count=1 -timeout 20m ./...
