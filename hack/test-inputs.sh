#!/usr/bin/env bash
# test-inputs.sh prints one digest of the test inputs that go test's result
# cache cannot see by itself:
#   - the tools in bin/ (and kpt) that tests run as processes, by content;
#   - the repository's files (tracked, and untracked but not ignored) that
#     tests or the tools they run may read, by content: go test keys a
#     package's result on its own compiled code and on the files its test
#     process opens inside its module, but a nested module (test/*) does
#     not see files outside its folder, and no test sees what a child
#     process reads. Left out: the Go sources of packages (go test tracks
#     them; Go files under testdata/, programs tests build, are kept), and
#     what no test hands a tool: documentation (*.md outside testdata/:
#     the tests that check docs, README.md and docs/*.md, are root module
#     tests that open them themselves, which go test tracks), the CI entry
#     point (.ci/) and staticcheck.conf. A README or docs edit therefore
#     reruns no tool suite (internal/testtool's TestInputsDigest checks it).
# make test passes it to go test as WAVESMITH_TEST_INPUTS. The tests that
# run tools or read files outside their module read that variable, which
# puts the digest into the key of their cached result: a rebuilt tool, a
# changed example or a changed test case reruns them; a change to a Go
# package reruns what imports it (go test's own rule) and, through the
# rebuilt binaries, the suites that run them.
set -euo pipefail
cd "$(dirname "$0")/.."
memo=bin/.test-inputs.sums

{
	# Tools, by content (bin/flux2-src is the source bin/flux is built
	# from). Hashing a gigabyte of binaries takes seconds: a file whose size
	# and modification time are those of the last run keeps its digest.
	declare -A known=()
	if [ -f "$memo" ]; then
		while read -r size mtime sum path; do known["$path"]="$size $mtime $sum"; done <"$memo"
	fi
	# The memo is rewritten only when it changes: tests that list bin/ or
	# the repository root see the modification times of their entries.
	fresh=$(mktemp)
	trap 'rm -f "$fresh"' EXIT
	while IFS= read -r -d '' f; do
		read -r size mtime < <(stat -c '%s %Y' "$f")
		k=${known["$f"]:-}
		if [ "${k% *}" = "$size $mtime" ]; then
			sum=${k##* }
		else
			sum=$(sha256sum <"$f" | cut -d' ' -f1)
		fi
		echo "$size $mtime $sum $f" >>"$fresh"
		echo "$sum $f"
	done < <(find bin \( -path bin/flux2-src -o -path "$memo" \) -prune -o -type f -print0 2>/dev/null | sort -z)
	if [ -d bin ] && ! cmp -s "$fresh" "$memo"; then
		cp "$fresh" "$memo"
	fi
	if kpt=$(command -v "${KPT_BIN:-kpt}"); then
		echo "kpt $kpt"
		sha256sum <"$kpt"
	fi

	# The repository, without the Go sources of packages.
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z --cached --others --exclude-standard
	else
		find . \( -path ./.git -o -path ./bin -o -path ./out \) -prune -o \( -type f -o -type l \) -print0 | sed -z 's|^\./||'
	fi | sort -zu | {
		files=()
		while IFS= read -r -d '' f; do
			case "/$f" in
			*/testdata/*) ;;
			*.go | *.md | /.ci/* | /staticcheck.conf) continue ;;
			esac
			if [ -L "$f" ]; then
				printf 'link %s -> %s\n' "$f" "$(readlink "$f")"
			elif [ -f "$f" ]; then
				files+=("$f")
			elif [ ! -e "$f" ]; then
				printf 'gone %s\n' "$f"
			fi
		done
		if [ ${#files[@]} -gt 0 ]; then
			printf '%s\0' "${files[@]}" | xargs -0 sha256sum
		fi
	}
} | sha256sum | cut -d' ' -f1
