package main

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestHugePageHeap: after hugePageHeap, what the program allocates next
// lies in memory advised for huge pages, in a fresh process. The controls:
// without the call nothing does (the test can fail), nor with
// GODEBUG=disablethp=1, which asks the runtime for the opposite.
func TestHugePageHeap(t *testing.T) {
	for _, tc := range []struct {
		name, mode, godebug, memlimit string
		min, max                      int
	}{
		{"called", "call", "", "", 16, 32},
		{"not called", "skip", "", "", 0, 0},
		{"GODEBUG=disablethp=1", "call", "disablethp=1", "", 0, 0},
		// Under ulimit -v the region would count as used to the end.
		{"address-space limit", "limited", "", "", 0, 0},
		// Under a low GOMEMLIMIT it takes half the limit (8 MiB of the 64
		// asked): 4 collections (debug.FreeOSMemory's, and the limit's
		// near it), not one a piece beyond the limit (21 without the cap).
		{"GOMEMLIMIT=16MiB: collections", "collections", "", "16MiB", 1, 6},
		// largeRender takes it for inputs of hugePageInputs files or
		// hugePageBytes bytes, not below, with one collection
		// (debug.FreeOSMemory's), and whole: the policy's limit is not
		// the user's and is lifted while it takes the region (else half
		// of 200 MiB). A 32 MiB mapping outside the heap, not one of the
		// pieces, is advised after it as well: 544 seen.
		{"largeRender: large", "large", "", "", 16, 32},
		{"largeRender: small", "small", "", "", 0, 0},
		{"largeRender: stream", "stream", "", "", 16, 32},
		{"largeRender: collections", "policy collections", "", "", 1, 2},
		{"largeRender: MiB advised", "policy size", "", "", hugePageHeapSize>>20 - 8, 2 * hugePageHeapSize >> 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := runChild(t, tc.mode, "GODEBUG="+tc.godebug, "GOMEMLIMIT="+tc.memlimit)
			if n < tc.min || n > tc.max {
				t.Errorf("child printed %d (mode %s: allocations of 32 in memory advised for huge pages, or collections), want %d to %d", n, tc.mode, tc.min, tc.max)
			}
		})
	}
}

func TestGodebugDisablesTHP(t *testing.T) {
	for in, want := range map[string]bool{
		"":                             false,
		"disablethp=1":                 true,
		"disablethp=0":                 false,
		"gctrace=1, disablethp=1":      true,
		"disablethp=1,disablethp=0":    false, // the last setting wins
		"madvdontneed=1,disablethp=10": false,
		"xdisablethp=1":                false,
	} {
		if got := godebugDisablesTHP(in); got != want {
			t.Errorf("godebugDisablesTHP(%q) = %v, want %v", in, got, want)
		}
	}
}

// limitAddressSpace sets this process's RLIMIT_AS (ulimit -v) to n bytes.
func limitAddressSpace(n uint64) error {
	return unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: n, Max: n})
}
