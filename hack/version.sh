#!/usr/bin/env bash
# Prints the version make stamps into wavesmith and wavesmith-status
# (-ldflags -X main.version=...): the tag when HEAD carries one, else the
# Go pseudo-version of HEAD, v0.0.0-<commit time UTC>-<12 hex of the
# commit>; +dirty when the working tree has changes. "dev" outside git.
# (The go command stamps the same from the VCS itself, but not in a git
# worktree nor with -buildvcs=false; make does not depend on either.)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! rev=$(git rev-parse HEAD 2>/dev/null); then
	echo dev
	exit 0
fi
dirty=""
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
	dirty="+dirty"
fi
if tag=$(git describe --tags --exact-match HEAD 2>/dev/null); then
	echo "$tag$dirty"
	exit 0
fi
at=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
echo "v0.0.0-$at-${rev:0:12}$dirty"
