# make release: reproducible archives of wavesmith for each platform, and
# SHA256SUMS, into dist/ (git-ignored). The same commit gives the same
# bytes: static binaries (CGO_ENABLED=0) built with -trimpath, no build
# ID and no VCS stamp beyond the version; archives written by hack/archive
# (entries sorted, owner 0:0, every time the commit's, gzip without name
# or time).

# git describe: the tag, else the commit's short hash; -dirty with changes.
RELEASE_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
DIST := $(CURDIR)/dist
# The time of every archive entry: the commit's.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

RELEASE_GOFLAGS = -trimpath -buildvcs=false -ldflags "-s -w -buildid= -X main.version=$(RELEASE_VERSION)"

.PHONY: release
release: ## reproducible archives (linux, darwin: amd64, arm64; windows/amd64) and SHA256SUMS into dist/
	@set -e; rm -rf $(DIST); mkdir -p $(DIST)/.build; \
	for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=tar.gz; exe=""; \
		if [ "$$os" = windows ]; then ext=zip; exe=.exe; fi; \
		dir=$(DIST)/.build/$${os}_$${arch}; mkdir -p $$dir; \
		echo "== wavesmith $(RELEASE_VERSION) $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(RELEASE_GOFLAGS) -o $$dir/wavesmith$$exe ./cmd/wavesmith; \
		$(GO) run ./hack/archive -o $(DIST)/wavesmith_$(RELEASE_VERSION)_$${os}_$${arch}.$$ext -mtime $(SOURCE_DATE_EPOCH) \
			$$dir/wavesmith$$exe README.md; \
	done; \
	rm -rf $(DIST)/.build; \
	cd $(DIST) && LC_ALL=C sha256sum wavesmith_* > SHA256SUMS && cat SHA256SUMS

# make cross (part of make test): the CLI builds for every other system
# make release ships (amd64 each: the system's own code is what differs),
# and the module vets, tests included, for macOS and FreeBSD, where the
# tree walk, the in-place update, the folder listing and the cache's
# identities are the Linux code built for them. No test runs there; on
# Windows every tree file is read and no flock is taken (docs/tree.md).
CROSS_SYSTEMS = $(filter-out linux,$(sort $(foreach p,$(RELEASE_PLATFORMS),$(firstword $(subst /, ,$(p))))))

.PHONY: cross
cross: ## the CLI builds for the other systems make release ships (macOS, Windows)
	@set -e; for os in $(CROSS_SYSTEMS); do \
		echo "CGO_ENABLED=0 GOOS=$$os GOARCH=amd64 $(GO) build -o /dev/null ./cmd/wavesmith"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=amd64 $(GO) build -o /dev/null ./cmd/wavesmith; \
	done; \
	for os in darwin freebsd; do \
		echo "CGO_ENABLED=0 GOOS=$$os GOARCH=amd64 $(GO) vet ./..."; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=amd64 $(GO) vet ./...; \
	done
