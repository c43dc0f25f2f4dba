# gitops-engine: wavesmith's sync waves synced by Argo CD's own sync engine
# (github.com/argoproj/gitops-engine) against envtest, in the nested module
# test/gitops-engine (gitops-engine pins k8s.io/* to v0.34.0, which the root
# go.mod cannot take). Its test reads WAVESMITH_BIN and KUBEBUILDER_ASSETS;
# mk/status.mk exports the latter and adds bin/kube-apiserver and bin/etcd
# to TEST_TOOLS. It is read after this file, so the rule below names those
# binaries by path. The Argo CD Applications themselves are written by the
# package gitops/argocd of the root module.
MODULE_TESTS += test/gitops-engine

.PHONY: test-gitops-engine
test-gitops-engine: $(WAVESMITH) $(BIN)/kube-apiserver $(BIN)/etcd ## sync the examples wave by wave with Argo CD's gitops-engine on envtest
	cd test/gitops-engine && $(GO) vet ./... && $(GO) test -count=1 -timeout 20m ./...
