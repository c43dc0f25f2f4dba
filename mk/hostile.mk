# Hostile input: the bad-input suite and the kill and concurrency
# experiments (test/hostile, a package of the root module that drives
# bin/wavesmith as a process: see its testdata/README.md; make test runs
# it with the other suites that drive binaries, DRIVER_TESTS), and the fuzz
# targets of the root module's packages (seed corpora in each package's
# testdata/fuzz/).

DRIVER_TESTS += ./test/hostile/

# 'make fuzz' runs each fuzz target for FUZZTIME. 'make test' runs each for
# a set number of executions instead (the count after the second colon):
# a count has no wall-clock deadline, so a loaded CI machine only makes it
# slower. A time-bounded run on Go 1.26 can fail with a bare "context
# deadline exceeded" and no crasher: a race in Go's fuzzing coordinator at
# the end of -fuzztime (go.dev/issue/75804, fixed in Go 1.27), not a finding.
FUZZTIME ?= 30s
# package:target:brief-count
FUZZ_TARGETS := manifest:FuzzDecode:20000x render:FuzzRender:400x functions:FuzzRun:200x internal/argocdplugin:FuzzLayers:20000x

define fuzz-loop
	@failed=""; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; count=$${rest#*:}; \
		budget=$(1); [ -n "$$budget" ] || budget=$$count; \
		echo "== $$name in ./$$pkg for $$budget"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget ./$$pkg/ || failed="$$failed $$name"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets failed:$$failed (a crasher is saved under the package's testdata/fuzz/)"; exit 1; fi
endef

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (default 30s); a crash is saved under the package's testdata/fuzz/
	$(call fuzz-loop,$(FUZZTIME))

.PHONY: fuzz-brief
fuzz-brief: ## run each fuzz target for a fixed number of executions (part of make test)
	$(call fuzz-loop,)

test: fuzz-brief hostile-count

# The suite's size, said where make test runs it (go test shows a passing
# package's log only with -v).
.PHONY: hostile-count
hostile-count:
	@echo "== test/hostile: $$(ls test/hostile/testdata/cases | wc -l) bad inputs, each run through every door its case.yaml lists"

.PHONY: hostile
hostile: $(WAVESMITH) hostile-count ## the bad-input suite and the kill and concurrency experiments (test/hostile), every test run anew
	@set -e; export $(TEST_INPUTS); $(GO) vet ./test/hostile/ && $(GO) test -count=1 -timeout 20m ./test/hostile/
