# Flux: the flux CLI, kustomize-controller and the CRDs of the Flux kinds it
# reads, all at the versions Flux v2.9.5 ships, for the test module that runs
# them on envtest (test/flux), plus the end-to-end test (make e2e).

FLUX_VERSION := v2.9.5
# flux2 v2.9.5 manifests/bases/{kustomize,source}-controller/kustomization.yaml
# pin these; the $(FLUX_CRDS) rule checks it. hack/tools/flux/go.mod (one module
# for the CLI and the controller) requires the same kustomize-controller version.
KUSTOMIZE_CONTROLLER_VERSION := v1.9.5
SOURCE_CONTROLLER_VERSION    := v1.9.5

FLUX                 := $(BIN)/flux
FLUX2_SRC            := $(BIN)/flux2-src
KUSTOMIZE_CONTROLLER := $(BIN)/kustomize-controller
FLUX_CRDS            := $(BIN)/flux-crds

export FLUX_BIN                 := $(FLUX)
export KUSTOMIZE_CONTROLLER_BIN := $(KUSTOMIZE_CONTROLLER)
export FLUX_CRDS_DIR            := $(FLUX_CRDS)

TEST_TOOLS   += $(FLUX) $(KUSTOMIZE_CONTROLLER) $(FLUX_CRDS)
MODULE_TESTS += test/flux

# flux_moddir prints the module cache folder of module@version (downloading it).
flux_moddir = $$(cd / && GOFLAGS= $(GO) mod download -json $(1) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p')

# The flux CLI embeds install manifests that flux2's Makefile generates and
# its module zip lacks, and the go command refuses overlays of the module
# cache: the tool module hack/tools/flux builds from a copy of the module
# with a placeholder (only 'flux install' and 'flux bootstrap' need the real
# ones).
$(FLUX2_SRC):
	@rm -rf $@ $@.tmp
	dir=$(call flux_moddir,github.com/fluxcd/flux2/v2@$(FLUX_VERSION)); \
	test -n "$$dir" && cp -r "$$dir" $@.tmp
	chmod -R u+w $@.tmp
	mkdir -p $@.tmp/cmd/flux/manifests
	echo '# placeholder: flux install is not used by the tests' > $@.tmp/cmd/flux/manifests/placeholder.yaml
	mv $@.tmp $@

# The flux CLI and kustomize-controller are built without -trimpath, as
# test/flux compiles its tests: their module versions are the ones
# test/flux pins (k8s.io v0.36.4, controller-runtime v0.24.1, the fluxcd
# packages): 629 of the 644 packages outside the standard library that
# test/flux compiles have, down to every dependency, the module versions
# of one of the two builds (go list -deps), so they compile once; with
# -trimpath every one compiled twice, the standard library too.
$(FLUX): | $(FLUX2_SRC)
	cd hack/tools/flux && $(GO) build -o $@ github.com/fluxcd/flux2/v2/cmd/flux

# About 4 minutes cold on 2 cores (SOPS and the cloud KMS clients come along),
# less after bin/flux: one module builds both, so what they share compiles once.
$(KUSTOMIZE_CONTROLLER): | $(FLUX2_SRC)
	cd hack/tools/flux && $(GO) build -o $@ github.com/fluxcd/kustomize-controller

# The CRDs of the kinds kustomize-controller watches (Kustomization, and the
# source kinds: it fails to start without them), from the controllers'
# modules at the versions flux2 pins.
$(FLUX_CRDS):
	@set -e; f=$(call flux_moddir,github.com/fluxcd/flux2/v2@$(FLUX_VERSION)); \
	for cv in kustomize:$(KUSTOMIZE_CONTROLLER_VERSION) source:$(SOURCE_CONTROLLER_VERSION); do \
		c=$${cv%%:*} v=$${cv#*:}; \
		grep -q "/$$c-controller/releases/download/$$v/" "$$f/manifests/bases/$$c-controller/kustomization.yaml" || \
			{ echo "flux $(FLUX_VERSION) does not ship $$c-controller $$v: update mk/flux.mk"; exit 1; }; \
	done
	@rm -rf $@ $@.tmp && mkdir -p $@.tmp
	kc=$(call flux_moddir,github.com/fluxcd/kustomize-controller@$(KUSTOMIZE_CONTROLLER_VERSION)); \
	sc=$(call flux_moddir,github.com/fluxcd/source-controller@$(SOURCE_CONTROLLER_VERSION)); \
	test -n "$$kc" && test -n "$$sc" && cp "$$kc"/config/crd/bases/*.yaml "$$sc"/config/crd/bases/*.yaml $@.tmp/
	chmod -R u+w $@.tmp
	mv $@.tmp $@

.PHONY: e2e
# The tools are named in the recipe: in a prerequisite list $(TEST_TOOLS)
# would expand now, before mk/status.mk (read after this file) adds
# wavesmith-status and the control plane.
e2e: ## end to end on envtest: wavesmith-status running, kustomize-controller applies the Flux waves, status reports back
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $(TEST_TOOLS)
	@set -e; export $(TEST_INPUTS); cd test/flux && $(GO) test -count=1 -run 'TestEndToEnd|TestInputs' -v -timeout 15m ./...
