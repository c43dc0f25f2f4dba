# Flux: the flux CLI and the test module that drives Flux's apply engine
# (test/flux), plus the end-to-end test (make e2e).

FLUX_VERSION := v2.9.5
FLUX         := $(BIN)/flux
FLUX2_SRC    := $(BIN)/flux2-src

export FLUX_BIN := $(FLUX)

TEST_TOOLS   += $(FLUX)
MODULE_TESTS += test/flux

# The flux CLI embeds install manifests that flux2's Makefile generates and
# its module zip lacks: build from a copy of the module with a placeholder
# (only 'flux install' and 'flux bootstrap' need the real ones).
$(FLUX2_SRC):
	@rm -rf $@ $@.tmp
	dir=$$(cd / && GOFLAGS= $(GO) mod download -json github.com/fluxcd/flux2/v2@$(FLUX_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	test -n "$$dir" && cp -r "$$dir" $@.tmp
	chmod -R u+w $@.tmp
	mkdir -p $@.tmp/cmd/flux/manifests
	echo '# placeholder: flux install is not used by the tests' > $@.tmp/cmd/flux/manifests/placeholder.yaml
	mv $@.tmp $@

$(FLUX): | $(FLUX2_SRC)
	cd test/flux && $(GO) build -trimpath -o $@ github.com/fluxcd/flux2/v2/cmd/flux

.PHONY: e2e
e2e: $(TEST_TOOLS) ## end to end on envtest: render, apply wave by wave with Flux's engine, status reports back
	cd test/flux && $(GO) test -count=1 -run 'TestEndToEnd' -v -timeout 15m ./...
