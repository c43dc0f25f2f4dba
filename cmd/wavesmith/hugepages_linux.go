package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hugePageHeap marks the first n bytes the heap will grow into as
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
// opposite, on 32-bit platforms, under a strict commit limit, and where
// the kernel refuses the advice; at most half of a GOMEMLIMIT.
func hugePageHeap(getenv func(string) string, n int) {
	if strconv.IntSize < 64 || godebugDisablesTHP(getenv("GODEBUG")) || !overcommits() {
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
	runtime.KeepAlive(pieces)
	pieces = nil
	// Freed and given back to the system (untouched, nothing to write
	// back), so that it does not count against the memory limit before
	// the heap grows into it; a second time if a collection the
	// allocations started had already marked them.
	for range 2 {
		debug.FreeOSMemory()
		if heapFree() >= uint64(n) {
			break
		}
	}
}

// hugePiece is the size of the allocations that take the address space.
const hugePiece = 4 << 20

// overcommits reports whether the kernel lets a program map memory it has
// not used without counting it against a commit limit
// (vm.overcommit_memory 0 or 1). Under a strict limit (2) the address
// space taken ahead would count as used and could leave the runtime
// unable to map its heap later; unknown (no /proc) counts as strict.
func overcommits() bool {
	b, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	v := strings.TrimSpace(string(b))
	return err == nil && (v == "0" || v == "1")
}

// heapFree is the heap memory free for reuse, released to the system or
// not.
func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
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
