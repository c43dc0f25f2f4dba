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
		// A VM that reports free memory to its host and holds enough
		// free below the order it reports (smallPagesBacked).
		{"small pages served first", "served", "", "", 0, 0},
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

// TestFreeBelow: the free bytes /proc/buddyinfo counts below an order,
// on the text of a 2-core VM with 24 GiB (kernel 6.18) and on text that
// is not buddyinfo's.
func TestFreeBelow(t *testing.T) {
	const vm = `Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 
Node 0, zone    DMA32     53    140    134    115     92     47     32     30     22     14    731 
Node 0, zone   Normal   4626   4047   4333   4227   3172   2137   1657   1193    837    655   3918 
`
	// Below order 9, in pages: DMA 256 (one block of order 8); DMA32
	// 53+280+536+920+1472+1504+2048+3840+5632 = 16,285; Normal
	// 4626+8094+17332+33816+50752+68384+106048+152704+214272 = 656,028.
	// Orders 9 and 10 add DMA 3,584, DMA32 755,712, Normal 4,347,392.
	for _, tc := range []struct {
		name, text string
		order      int
		want       int64
	}{
		{"order 9", vm, 9, (256 + 16285 + 656028) * 4096},
		{"order 1: single pages", vm, 1, (53 + 4626) * 4096},
		{"order 0: nothing below", vm, 0, 0},
		{"order past the counts: every block", vm, 20, (256 + 16285 + 656028 + 3584 + 755712 + 4347392) * 4096},
		{"empty", "", 9, 0},
		{"not buddyinfo", "MemTotal: 24684084 kB\nNode 0, Normal 1 2 3\n", 9, 0},
		{"a count that is not a number", "Node 0, zone Normal 1 x 4\n", 9, (1 + 16) * 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := freeBelow([]byte(tc.text), tc.order, 4096); got != tc.want {
				t.Errorf("freeBelow(order %d) = %d, want %d", tc.order, got, tc.want)
			}
		})
	}
}

// TestSmallPagesBacked: small pages first only where all three hold:
// the kernel reports free pages, a balloon offers reporting, and enough
// is free below the reported order. On copies of the kernel's files
// (the VM's of docs/performance.md, as read), each taken away in turn.
func TestSmallPagesBacked(t *testing.T) {
	const buddyinfo = "Node 0, zone   Normal   4626   4047   4333   4227   3172   2137   1657   1193    837    655   3918\n" // 2,562 MiB below order 9
	vm := map[string]string{
		"sys/module/page_reporting/parameters/page_reporting_order": "9\n",
		"sys/bus/virtio/devices/virtio0/device":                     "0x0002\n", // a block device first
		"sys/bus/virtio/devices/virtio0/features":                   "0010001001100100000000000000000100100000\n",
		"sys/bus/virtio/devices/virtio1/device":                     "0x0005\n",
		"sys/bus/virtio/devices/virtio1/features":                   "0110010100000000000000000000000010000000\n",
		"proc/buddyinfo": buddyinfo,
	}
	for _, tc := range []struct {
		name   string
		change map[string]string // "" removes the file
		n      int
		want   bool
	}{
		{"the VM", nil, hugePageHeapSize, true},
		{"more than is free below the order", nil, 3 << 30, false},
		{"no page reporting", map[string]string{"sys/module/page_reporting/parameters/page_reporting_order": ""}, hugePageHeapSize, false},
		{"a reporting order that is no number", map[string]string{"sys/module/page_reporting/parameters/page_reporting_order": "x\n"}, hugePageHeapSize, false},
		{"a balloon without reporting", map[string]string{"sys/bus/virtio/devices/virtio1/features": "0110000100000000000000000000000010000000\n"}, hugePageHeapSize, false},
		{"no balloon", map[string]string{"sys/bus/virtio/devices/virtio1/device": "0x0001\n"}, hugePageHeapSize, false},
		{"no buddyinfo", map[string]string{"proc/buddyinfo": ""}, hugePageHeapSize, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range vm {
				if c, ok := tc.change[name]; ok {
					if text = c; text == "" {
						continue
					}
				}
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := smallPagesBacked(filepath.Join(dir, "sys"), filepath.Join(dir, "proc"), tc.n); got != tc.want {
				t.Errorf("smallPagesBacked(%d) = %v, want %v", tc.n, got, tc.want)
			}
		})
	}
	// This machine's own answer, for the record of the run.
	t.Logf("this machine: small pages first for %d MiB: %v", hugePageHeapSize>>20, smallPagesFirst(hugePageHeapSize))
}
