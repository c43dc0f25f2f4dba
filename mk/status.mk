# wavesmith-status: envtest binaries, CRD generation.

KUBE_APISERVER := $(BIN)/kube-apiserver
ETCD           := $(BIN)/etcd
CONTROLLER_GEN_VERSION ?= v0.23.0

# controller-runtime envtest finds kube-apiserver and etcd here.
export KUBEBUILDER_ASSETS := $(BIN)

TEST_TOOLS += $(KUBE_APISERVER) $(ETCD)

# Built from the Go module proxy by one tool module (hack/tools/envtest),
# reused when present. kube-apiserver takes about 4 minutes on 2 cores, less
# after go vet: the module resolves what it shares with wavesmith and etcd to
# the same versions, so those packages compile once.
# No -trimpath, as for every test tool: a -trimpath build compiles the
# standard library a second time.
$(KUBE_APISERVER):
	cd hack/tools/envtest && $(GO) build -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(ETCD):
	cd hack/tools/envtest && $(GO) build -o $@ go.etcd.io/etcd/server/v3

.PHONY: envtest
envtest: $(KUBE_APISERVER) $(ETCD) ## build the envtest API server and etcd into bin/

# The RenderConfig is never installed: its CRD, generated with the others,
# is kept in hack/schemagen/crd only as the source of schemas/renderconfig.json.
.PHONY: generate
generate: ## regenerate deepcopy functions, CRDs and the editors' JSON schemas (schemas/) from api/
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	echo "controller-gen $(CONTROLLER_GEN_VERSION): deepcopy, CRDs"; \
	$(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION) object paths=./api/... crd:crdVersions=v1 output:crd:artifacts:config="$$tmp"; \
	mv "$$tmp/wavesmith.io_renderconfigs.yaml" hack/schemagen/crd/; \
	cp "$$tmp"/*.yaml kustomize/crd/bases/; \
	cp "$$tmp"/*.yaml charts/wavesmith/crds/
	$(GO) run ./hack/schemagen -o schemas kustomize/crd/bases/*.yaml hack/schemagen/crd/*.yaml

WAVESMITH_STATUS := $(BIN)/wavesmith-status
export WAVESMITH_STATUS_BIN := $(WAVESMITH_STATUS)
TEST_TOOLS += $(WAVESMITH_STATUS)

.PHONY: build-status
build-status: $(WAVESMITH_STATUS) ## build bin/wavesmith-status

$(WAVESMITH_STATUS): $(BUILD_SOURCES)
	$(GO) build -o $@ ./cmd/wavesmith-status
