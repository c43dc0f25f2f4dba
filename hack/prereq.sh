#!/usr/bin/env bash
# Checks, in a second, what make test needs that it cannot build itself:
# Go (the version go.mod asks for), git, a C compiler (-race needs cgo) and
# kpt (the KRM function tests run the real kpt; it is not on the Go module
# proxy). Everything else is built into bin/ from the Go module proxy.
# Prints every missing prerequisite at once and exits 1 if any is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
missing=()

want=$(awk '$1 == "go" { print $2; exit }' go.mod)
if ! command -v "${GO:-go}" >/dev/null 2>&1; then
	missing+=("go $want or later: https://go.dev/doc/install")
else
	have=$("${GO:-go}" env GOVERSION 2>/dev/null | sed 's/^go//; s/[^0-9.].*$//')
	if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" != "$want" ]; then
		missing+=("go $want or later (found go$have): https://go.dev/doc/install")
	fi
fi
command -v git >/dev/null 2>&1 || missing+=("git: your system's package manager (apt install git)")
cc=${CC:-gcc}
command -v "$cc" >/dev/null 2>&1 || missing+=("a C compiler ($cc) for go test -race: apt install gcc, or set CC")
kpt=${KPT_BIN:-kpt}
command -v "$kpt" >/dev/null 2>&1 || missing+=("kpt ($kpt) for the KRM function tests: https://kpt.dev/installation/ (or set KPT_BIN)")

if [ ${#missing[@]} -gt 0 ]; then
	echo "make test cannot start; missing prerequisites:" >&2
	for m in "${missing[@]}"; do echo "  - $m" >&2; done
	exit 1
fi
