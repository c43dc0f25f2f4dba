package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// hugePageHeap marks the next n bytes the heap will grow into as
// eligible for transparent huge pages (madvise MADV_HUGEPAGE), where the
// system leaves that to each program (the "madvise" mode, the default of
// many distributions). A render touches its whole heap for the first
// time once: with 4 KiB pages that is one page fault per page, about
// 50,000 at 10,000 Kaotos, and on virtual machines a fault costs 2 to
// 10 µs (docs/performance.md); with 2 MiB pages it is a few hundred.
//
// The Go runtime owns the heap and gives no way to ask for huge pages, so
// this takes the address space from it once: allocations the runtime
// maps fresh and does not touch are marked, freed and given back, and
// later allocations reuse their pages first (the runtime's page allocator
// takes the lowest free addresses). Nothing is touched here and nothing is
// kept: the resident memory grows only as the heap is used, by up to 2 MiB
// a step. Skipped where GODEBUG=disablethp=1 asks the runtime for the
// opposite, on 32-bit platforms, under a strict commit limit or an
// address-space limit, and where the kernel refuses the advice; at most
// half of a GOMEMLIMIT. It costs 5 to 10 ms: largeRender calls it for
// large renders only.
func hugePageHeap(getenv func(string) string, n int) {
	if strconv.IntSize < 64 || godebugDisablesTHP(getenv("GODEBUG")) || !overcommits() || addressSpaceLimited() {
		return
	}
	// Within half the memory limit the user may have set (GOMEMLIMIT):
	// above it the runtime collects whatever GOGC says, once a piece.
	if n = min(n, int(min(debug.SetMemoryLimit(-1)/2, math.MaxInt))); n <= 0 {
		return
	}
	// In pieces: a piece the runtime must zero (it reuses memory freed
	// at start-up) is touched before the advice can apply, and only that
	// piece is lost (one allocation of n was zeroed whole in one start
	// of 20). No collection while they are taken: each would mark them.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var pieces [][]byte
	for got := 0; got < n; got += hugePiece {
		b := make([]byte, hugePiece)
		if unix.Madvise(b, unix.MADV_HUGEPAGE) != nil {
			return
		}
		pieces = append(pieces, b)
	}
	runtime.KeepAlive(pieces) // each piece held until all are taken: none reused by the next
	// Freed and given back to the system (untouched, nothing to write
	// back), so that it does not count against the memory limit before
	// the heap grows into it: one complete collection (any collection
	// running when it is called is finished first), then the release.
	debug.FreeOSMemory()
}

// hugePiece is the size of the allocations that take the address space.
const hugePiece = 4 << 20

// overcommits reports whether the kernel lets a program map memory it has
// not used without counting it against a commit limit
// (vm.overcommit_memory 0 or 1). Under a strict limit (2) the address
// space taken ahead would count as used and could leave the runtime
// unable to map its heap later; unknown (no /proc) counts as strict.
func overcommits() bool {
	const dir = "/proc/sys/vm"
	b, err := fsroot.ReadFile(dir, dir+"/overcommit_memory")
	v := strings.TrimSpace(string(b))
	return err == nil && (v == "0" || v == "1")
}

// addressSpaceLimited reports whether the process's address space or
// data segment is limited (ulimit -v, ulimit -d; RLIMIT_DATA counts
// private anonymous mappings, the heap's, since Linux 4.7). The runtime
// never unmaps heap address space: under such a limit the region would
// count as used to the end, on top of the heap when it is taken after
// the inputs were read (240 MiB of inputs then ran out of a 2 GiB limit).
func addressSpaceLimited() bool {
	for _, res := range []int{unix.RLIMIT_AS, unix.RLIMIT_DATA} {
		var l unix.Rlimit
		if err := unix.Getrlimit(res, &l); err != nil || l.Cur != unix.RLIM_INFINITY {
			return true
		}
	}
	return false
}

// godebugDisablesTHP reports whether GODEBUG sets disablethp=1 (the last
// setting of a key wins, as in the runtime).
func godebugDisablesTHP(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "disablethp" {
			off = v == "1"
		}
	}
	return off
}
