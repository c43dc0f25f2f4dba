package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wavesmith/wavesmith/internal/treecache"
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

// TestLargeRenderDoors: the commands take the region through their own
// doors, as a user runs them (hugePageChild's "render" and "fn" modes:
// run in a fresh process): render once its folder lists hugePageInputs
// specs, not one fewer (those come to far less than hugePageBytes), and
// the KRM function once its ResourceList reaches hugePageBytes, not for
// a small one.
func TestLargeRenderDoors(t *testing.T) {
	kaoto := func(i int) string {
		return fmt.Sprintf("apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: k%05d\n  namespace: demo\n", i)
	}
	// folder holds files specs in specs/, one a file, and a ResourceList
	// of listed Kaotos beside it (resourcelist.yaml).
	folder := func(t *testing.T, files, listed int) (dir string, listBytes int) {
		dir = t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "specs"), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range files {
			if err := os.WriteFile(filepath.Join(dir, "specs", fmt.Sprintf("k%05d.yaml", i)), []byte(kaoto(i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var rl strings.Builder
		rl.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
		for i := range listed {
			rl.WriteString("- " + strings.ReplaceAll(strings.TrimSuffix(kaoto(i), "\n"), "\n", "\n  ") + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, "resourcelist.yaml"), []byte(rl.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir, rl.Len()
	}
	for _, tc := range []struct {
		name, mode    string
		files, listed int
		large         bool // the region is taken
	}{
		{"render: hugePageInputs files", "render", hugePageInputs, 0, true},
		{"render: one fewer", "render", hugePageInputs - 1, 0, false},
		{"fn: hugePageBytes of ResourceList", "fn", 0, 3000, true},
		{"fn: a small ResourceList", "fn", 0, 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, listBytes := folder(t, tc.files, tc.listed)
			if tc.mode == "fn" && tc.large != (listBytes >= hugePageBytes) {
				t.Fatalf("the ResourceList holds %d bytes: not what the case is about (hugePageBytes %d)", listBytes, hugePageBytes)
			}
			n := runChild(t, tc.mode, hugePageDirEnv+"="+dir, treecache.Env+"=off", "GODEBUG=", "GOMEMLIMIT=")
			if tc.large && (n < 16 || n > 32) || !tc.large && n != 0 {
				t.Errorf("%d of 32 allocations after the command lie in memory advised for huge pages, want %s", n, map[bool]string{true: "16 to 32", false: "none"}[tc.large])
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
