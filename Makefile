# wavesmith: two commands on a fresh machine.
#   make render   renders the bundled examples into out/
#   make test     builds every tool the tests need into bin/ and runs every test
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO        ?= go
BIN       := $(CURDIR)/bin
OUT       := $(CURDIR)/out
export PATH := $(BIN):$(PATH)

KUSTOMIZE_VERSION ?= v5.8.2
HELM_VERSION      ?= v3.22.0

WAVESMITH := $(BIN)/wavesmith
KUSTOMIZE := $(BIN)/kustomize
HELM      := $(BIN)/helm

# Test-time tool locations, read by the tests. Every make target requires
# its tools: a tool-driven test whose tool is missing fails instead of
# skipping as it does under a plain 'go test' (internal/testtool,
# test/testkit). make unit, the inner loop, clears it.
export WAVESMITH_REQUIRE_TOOLS := 1
export WAVESMITH_BIN := $(WAVESMITH)
export KUSTOMIZE_BIN := $(KUSTOMIZE)
export HELM_BIN      := $(HELM)

TEST_TOOLS := $(WAVESMITH) $(KUSTOMIZE) $(HELM)

# Nested Go modules (test/*) whose tests drive real GitOps engines (Argo CD,
# Flux): their dependency trees pin other k8s.io versions, so they cannot
# live in go.mod. Fragments append their folder; make test runs go vet and
# go test in each (without -race: they drive binaries and control planes,
# and a race build of Argo CD and Flux would compile each dependency
# twice). test/testkit is their one test kit.
MODULE_TESTS := test/testkit

# Packages of the root module that only drive the built binaries
# (test/hostile, test/parity): make test runs them after the -race run,
# without -race (their code under test is the binaries) and with a longer
# timeout. Fragments append them.
DRIVER_TESTS :=

# go test reuses a package's passing result while nothing it depends on has
# changed: its code, the files and environment its tests read, and make's
# digest of what go test cannot see (the tools in bin/ by content, the
# repository's files other than package Go sources: hack/test-inputs.sh,
# passed as WAVESMITH_TEST_INPUTS). TESTFLAGS=-count=1 runs every test
# anew (CI does).
TESTFLAGS ?=
TEST_INPUTS = WAVESMITH_TEST_INPUTS=$$(bash hack/test-inputs.sh)

GO_SOURCES := $(shell find . -name '*.go' -not -path './bin/*' -not -path './out/*' -not -path './hack/tools/*' -not -path './test/*') go.mod go.sum

# Area fragments (mk/*.mk) may append to TEST_TOOLS and export variables.
-include mk/*.mk


.PHONY: help
help: ## show the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

.PHONY: build
build: $(WAVESMITH) ## build bin/wavesmith

# Test files change no binary: editing one relinks nothing. The binaries
# built from this repository's modules (wavesmith, wavesmith-status,
# argocd-cmp-server) are built without -trimpath (make image keeps it):
# their packages then compile as go vet and go test compile them, and the
# build cache serves both (measured cold on 2 cores: bin/wavesmith after go
# vet links in 8 s; with -trimpath it compiled every dependency again, 2m17s).
BUILD_SOURCES = $(filter-out %_test.go,$(GO_SOURCES))

# The version stamped into the binaries (wavesmith version, --version):
# HEAD's tag, else its Go pseudo-version, +dirty with changes
# (hack/version.sh). -X changes only the link: the build cache still serves
# every package.
VERSION_LDFLAGS = -ldflags "-X main.version=$$(bash hack/version.sh)"

$(WAVESMITH): $(BUILD_SOURCES)
	$(GO) build $(VERSION_LDFLAGS) -o $@ ./cmd/wavesmith

.PHONY: install
install: ## install wavesmith and wavesmith-status into GOBIN (go env GOBIN, else GOPATH/bin)
	$(GO) install $(VERSION_LDFLAGS) ./cmd/wavesmith ./cmd/wavesmith-status
	@echo "installed into $$($(GO) env GOBIN | grep . || echo $$($(GO) env GOPATH)/bin): $$(bash hack/version.sh)"

$(KUSTOMIZE):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)

$(HELM):
	GOBIN=$(BIN) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

.PHONY: tools
tools: $(WAVESMITH) $(KUSTOMIZE) $(HELM) ## build the tools the tests need into bin/

.PHONY: render
render: $(WAVESMITH) ## render the bundled examples into out/ (stream and GitOps tree)
	@mkdir -p $(OUT)
	@echo "The examples show on purpose what wavesmith warns about (three warnings follow): a chart's test hook"
	@echo "left out, a purge order Flux cannot express, a reconcile-once policy Argo CD cannot express."
	$(WAVESMITH) render testdata/examples > $(OUT)/examples.yaml
	$(WAVESMITH) render -q testdata/examples -o $(OUT)/tree
	$(WAVESMITH) render -q testdata/examples -o $(OUT)/gitops --flux --argocd --argocd-repo https://github.com/wavesmith/wavesmith.git
	@echo "wrote $(OUT)/examples.yaml, $(OUT)/tree/ and $(OUT)/gitops/ (the tree with _flux/ and _argocd/)"

.PHONY: fmt-check
fmt-check:
	@files=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*')); \
	if [ -n "$$files" ]; then echo "gofmt would change: $$files"; exit 1; fi

# No binary is committed (a `go build ./cmd/wavesmith` without -o leaves
# one at the top, and `git add -A` takes it): every tracked file is at most
# 1 MiB and none starts as an executable or archive does (ELF, Mach-O, PE,
# ar). Outside a git checkout there is nothing tracked to check.
.PHONY: tracked-check
tracked-check:
	@bad=$$(git ls-files -z 2>/dev/null | xargs -0 sh -c 'for f; do \
		[ -f "$$f" ] || continue; \
		if [ $$(wc -c < "$$f") -gt 1048576 ]; then echo "$$f (over 1 MiB)"; continue; fi; \
		case $$(head -c 4 "$$f" | od -An -tx1 | tr -d " \n") in \
		7f454c46|cffaedfe|cefaedfe|feedfacf|feedface|cafebabe|213c6172) echo "$$f (an executable or archive)";; \
		4d5a*) echo "$$f (an executable or archive)";; \
		esac; done' sh); \
	if [ -n "$$bad" ]; then echo "tracked files that look built, not written (git rm --cached them):"; echo "$$bad"; exit 1; fi

.PHONY: vet
vet:
	$(GO) vet ./...

# The inner loop: gofmt, go vet and the unit tests of the root module
# (go test -short: every test that runs a tool or a control plane skips),
# no tools to build, no -race. make test is the full proof.
.PHONY: unit
unit: fmt-check tracked-check ## the fast tier: gofmt, go vet, go test -short ./... (no tools, no -race; make test is the full proof)
	$(GO) vet ./...
	WAVESMITH_REQUIRE_TOOLS= $(GO) test -short $(TESTFLAGS) ./...

.PHONY: test
# The tools are built three at a time: on a fresh machine most of a build
# is downloading modules or linking, which use one core or none.
.PHONY: test-tools
test-tools:
	@$(MAKE) --no-print-directory -j3 --output-sync=target $(TEST_TOOLS) $(STATICCHECK)

test: fmt-check tracked-check vet test-tools lint cross ## the full proof: gofmt, go vet, staticcheck, every tool built and required, every test (-race but for the suites that drive binaries; TESTFLAGS=-count=1: no cached results)
	@set -e; export $(TEST_INPUTS); \
	echo "== root module (test inputs $${WAVESMITH_TEST_INPUTS:0:12})"; \
	$(GO) test -race $(TESTFLAGS) $$($(GO) list ./... | grep -vxF "$$($(GO) list $(DRIVER_TESTS))"); \
	echo "== $(DRIVER_TESTS) (drive the binaries, no -race)"; \
	$(GO) test $(TESTFLAGS) -timeout 20m $(DRIVER_TESTS); \
	for m in $(MODULE_TESTS); do \
		echo "== $$m (nested module)"; \
		(cd $$m && $(GO) vet ./... && $(GO) test $(TESTFLAGS) -timeout 20m ./...); \
	done

# The packages whose tests write golden files: those importing
# internal/golden, which defines the -update flag.
GOLDEN_PACKAGES = $(shell $(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | awk '/internal\/golden/ {print $$1}')

.PHONY: update-golden
update-golden: ## regenerate golden files (read the diff before committing!)
	$(GO) test -count=1 $(GOLDEN_PACKAGES) -update

STATICCHECK_VERSION ?= v0.8.2
STATICCHECK         := $(BIN)/staticcheck

$(STATICCHECK):
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

.PHONY: lint
lint: $(STATICCHECK) ## staticcheck with staticcheck.conf (part of make test)
	$(STATICCHECK) ./...

.PHONY: clean
clean:
	rm -rf $(OUT)


BENCH_N    ?= 100,1000,10000
BENCH_RUNS ?= 5

.PHONY: bench
bench: $(WAVESMITH) $(HELM) $(KUSTOMIZE) ## compare wavesmith with helm template and kustomize build on the same work (whole processes)
	$(GO) test -run '^$$' -bench . -benchmem ./render/ ./generators/... ./manifest/
	$(GO) run ./hack/bench -n $(BENCH_N) -runs $(BENCH_RUNS) -wavesmith $(WAVESMITH) -helm $(HELM) -kustomize $(KUSTOMIZE)

# The images carry the release's version (a tag v1.2.3 gives 1.2.3, as the
# chart's appVersion and the pinned install YAML say).
IMAGE_VERSION ?= $(patsubst v%,%,$(RELEASE_VERSION))

.PHONY: image
image: ## build OCI image tarballs of wavesmith and wavesmith-status into out/images (no daemon needed)
	@mkdir -p $(OUT)/images/bin
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(RELEASE_VERSION)" -o $(OUT)/images/bin/wavesmith ./cmd/wavesmith
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(RELEASE_VERSION)" -o $(OUT)/images/bin/wavesmith-status ./cmd/wavesmith-status
	$(GO) run ./hack/image -version $(IMAGE_VERSION) -o $(OUT)/images
