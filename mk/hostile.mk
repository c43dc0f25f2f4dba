# Hostile input: the bad-input suite and the kill and concurrency
# experiments (test/hostile, a package of the root module that drives
# bin/wavesmith as a process: see its testdata/README.md; make test runs
# it with the other suites that drive binaries, DRIVER_TESTS), and the fuzz
# targets of the root module's packages (seed corpora in each package's
# testdata/fuzz/).

DRIVER_TESTS += ./test/hostile/

# 'make fuzz' runs each fuzz target for FUZZTIME. 'make test' fuzzes the
# decoder (FuzzDecode: every byte of every input passes through it) for a
# set number of executions instead (the count after the second colon): a
# count has no wall-clock deadline, so a loaded CI machine only makes it
# slower. The other targets' seed corpora run as ordinary tests in make
# test; fuzzing them there would compile the whole engine a third time
# (after the plain and the -race builds: go test -fuzz instruments every
# package of the test binary, the standard library included), about 3 to 4
# minutes of a cold make test for a few hundred executions. make fuzz
# fuzzes every one. A time-bounded run on Go 1.26 can fail with a bare "context
# deadline exceeded" and no crasher: a race in Go's fuzzing coordinator at
# the end of -fuzztime (go.dev/issue/75804, fixed in Go 1.27), not a finding.
FUZZTIME ?= 30s
# package:target:brief-count
FUZZ_TARGETS := manifest:FuzzDecode:20000x render:FuzzRender:400x functions:FuzzRun:200x internal/argocdplugin:FuzzLayers:20000x internal/outtree:FuzzIndexUnmarshal:20000x
FUZZ_BRIEF   := $(filter manifest:%,$(FUZZ_TARGETS))

# $(1): the fuzz time ("": each target's brief count), $(2): the targets.
define fuzz-loop
	@failed=""; for t in $(2); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; count=$${rest#*:}; \
		budget=$(1); [ -n "$$budget" ] || budget=$$count; \
		echo "== $$name in ./$$pkg for $$budget"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget ./$$pkg/ || failed="$$failed $$name"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets failed:$$failed (a crasher is saved under the package's testdata/fuzz/)"; exit 1; fi
endef

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (default 30s); a crash is saved under the package's testdata/fuzz/
	$(call fuzz-loop,$(FUZZTIME),$(FUZZ_TARGETS))

.PHONY: fuzz-brief
fuzz-brief: ## fuzz the decoder for a fixed number of executions (part of make test; make fuzz fuzzes every target)
	$(call fuzz-loop,,$(FUZZ_BRIEF))

test: fuzz-brief hostile-count

# The suite's size, said where make test runs it (go test shows a passing
# package's log only with -v).
.PHONY: hostile-count
hostile-count:
	@echo "== test/hostile: $$(ls test/hostile/testdata/cases | wc -l) bad inputs, each run through every door its case.yaml lists"

.PHONY: hostile
hostile: $(WAVESMITH) hostile-count ## the bad-input suite and the kill and concurrency experiments (test/hostile), every test run anew
	@set -e; export $(TEST_INPUTS); $(GO) vet ./test/hostile/ && $(GO) test -count=1 -timeout 20m ./test/hostile/
