# Hostile input: the bad-input suite and the kill and concurrency
# experiments (test/hostile, a nested module that drives bin/wavesmith as a
# process: see its testdata/README.md), and the fuzz targets of the root
# module's packages (seed corpora in each package's testdata/fuzz/).

MODULE_TESTS += test/hostile

# Each fuzz target runs for FUZZTIME in 'make fuzz'; 'make test' runs each
# for FUZZ_BRIEF, so that CI exercises every target.
FUZZTIME   ?= 30s
FUZZ_BRIEF ?= 5s
# package:target
FUZZ_TARGETS := manifest:FuzzDecode render:FuzzRender functions:FuzzRun argocdcmp:FuzzLayers

.PHONY: hostile
hostile: $(WAVESMITH) ## the bad-input suite: every case of test/hostile through every door of bin/wavesmith, plus the kill and concurrency experiments
	cd test/hostile && $(GO) vet ./... && $(GO) test -count=1 -timeout 30m ./...

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (default 30s); a crash is saved under the package's testdata/fuzz/
	@failed=""; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name in ./$$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$pkg/ || failed="$$failed $$name"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets failed:$$failed"; exit 1; fi

.PHONY: fuzz-brief
fuzz-brief: ## run each fuzz target for FUZZ_BRIEF (default 5s): part of make test
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_BRIEF)

test: fuzz-brief
