# Hostile input: the bad-input suite and the kill and concurrency
# experiments (test/hostile, a nested module that drives bin/wavesmith as a
# process: see its testdata/README.md).

MODULE_TESTS += test/hostile

.PHONY: hostile
hostile: $(WAVESMITH) ## the bad-input suite: every case of test/hostile through every door of bin/wavesmith, plus the kill and concurrency experiments
	cd test/hostile && $(GO) vet ./... && $(GO) test -count=1 -timeout 30m ./...
