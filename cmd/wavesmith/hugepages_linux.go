package main

import (
	"math"
	"os"
	"path/filepath"
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
// address-space limit, where the kernel refuses the advice, and where
// small pages cost less (smallPagesBacked); at most half of a
// GOMEMLIMIT. It costs 5 to 10 ms: largeRender calls it for
// large renders only.
func hugePageHeap(getenv func(string) string, n int) {
	if strconv.IntSize < 64 || godebugDisablesTHP(getenv("GODEBUG")) || !overcommits() || addressSpaceLimited() || smallPagesFirst(n) {
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

// smallPagesFirst reports whether small pages would cost less than huge
// pages for a heap of n bytes here (smallPagesBacked); tests replace it.
var smallPagesFirst = func(n int) bool { return smallPagesBacked("/sys", "/proc", n) }

// smallPagesBacked reports whether this is a virtual machine that hands
// its free memory back to the host (virtio-balloon free page reporting)
// and has n bytes free in blocks smaller than those it reports, reading
// the kernel's files under sysDir and procDir (/sys and /proc). The
// kernel reports a free block of the reporting order (2 MiB, a huge
// page's size, by default) or larger once it has been free a while (2
// seconds), and the host must back such a block anew when it is used
// again: about 3 ms for 2 MiB on the VM of docs/performance.md. A huge
// page needs a whole block of that order, so a render that starts a
// second or more after the last one frees its memory takes reported
// blocks for its heap; small pages come first from the free blocks below
// that order, which are never reported. There the region made the
// 10,000-Kaoto stream 30% dearer in CPU, a one-spec re-render 20%.
// Elsewhere (no reporting, or too little free below its order: a fresh
// VM's free memory lies in large blocks, and small pages come from
// reported ones too) the region saves a fault per 4 KiB.
func smallPagesBacked(sysDir, procDir string, n int) bool {
	sys, err := fsroot.OpenRoot(sysDir)
	if err != nil {
		return false
	}
	defer sys.Close()
	b, err := sys.ReadFile(filepath.Join(sysDir, "module/page_reporting/parameters/page_reporting_order"))
	if err != nil {
		return false
	}
	order, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || order <= 0 || !reportingBalloon(sys) {
		return false
	}
	b, err = fsroot.ReadFile(procDir, filepath.Join(procDir, "buddyinfo"))
	return err == nil && freeBelow(b, order, os.Getpagesize()) >= int64(n)
}

// reportingBalloon reports whether a virtio device under sys is a memory
// balloon (device ID 5) that offers free page reporting (feature bit 5,
// VIRTIO_BALLOON_F_REPORTING; the virtio specification, 5.5): the kernel
// reports free memory only to such a device.
func reportingBalloon(sys *fsroot.Root) bool {
	devices := filepath.Join(sys.Dir(), "bus/virtio/devices")
	entries, err := sys.ReadDir(devices)
	if err != nil {
		return false
	}
	for _, e := range entries {
		dev := filepath.Join(devices, e.Name())
		id, err := sys.ReadFile(filepath.Join(dev, "device"))
		if err != nil || strings.TrimSpace(string(id)) != "0x0005" {
			continue
		}
		if f, err := sys.ReadFile(filepath.Join(dev, "features")); err == nil && len(f) > 5 && f[5] == '1' {
			return true
		}
	}
	return false
}

// freeBelow returns the free bytes that buddyinfo (the text of
// /proc/buddyinfo: a line per zone, the number of free blocks of each
// order, 0 first) counts in blocks of an order below order.
func freeBelow(buddyinfo []byte, order, pageSize int) int64 {
	var pages int64
	for _, line := range strings.Split(string(buddyinfo), "\n") {
		f := strings.Fields(line)
		// "Node 0, zone Normal c0 c1 ...": the counts follow the zone.
		if len(f) < 5 || f[0] != "Node" || f[2] != "zone" {
			continue
		}
		for o, c := range f[4:min(len(f), 4+order)] {
			if n, err := strconv.ParseInt(c, 10, 64); err == nil && n > 0 {
				pages += n << o
			}
		}
	}
	return pages * int64(pageSize)
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
