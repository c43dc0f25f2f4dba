package main

import (
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The garbage collector's settings for a render, unless GOGC or
// GOMEMLIMIT say otherwise. A render is short and allocation-heavy, and
// what it holds only grows (the encoded output): each collection marks
// all of it again. So the collector runs only when the heap nears a soft
// memory limit (GOGC off under the limit: 3 collections at 10,000
// Kaotos instead of 11 with GOGC=200, about 5% less CPU, the same peak
// RSS of about 230 MB, below helm template's 280-340 MB on the same work;
// a floor of 176 MiB gave 205 MB and about 5% more CPU, 150 MiB 185 MB
// and 15% more). A render holding more than the limit allows raises the
// limit after each collection to what the runtime holds then and as much
// as the heap holds (raisedLimit), so it collects as with GOGC=100
// instead of continuously. With GOMEMLIMIT set and GOGC unset, GOGC is
// gcPercent: the collector never waits on a limit the user may have
// lifted.
const (
	gcPercent   = 200
	memoryFloor = 200 << 20 // bytes; with the binary's own ~40 MB, about 230 MB of RSS
)

// The size of a command's inputs from which it takes the huge-page region
// (hugePageHeap): a render's heap grows with its inputs, about 20 KB for
// a Kaoto (240 bytes of YAML: 200 MB of heap at 10,000), and below about
// 1,000 Kaotos the region's 5 to 10 ms at start cost more than the page
// faults it saves. Small renders, what the Argo CD plugin and kpt run on
// most packages, do not pay for it.
const (
	hugePageInputs = 1000      // files listed, before any is read
	hugePageBytes  = 256 << 10 // bytes read, for inputs of few large files or a stream
)

// hugePageHeapSize is how much of the heap hugePageHeap (Linux) backs
// with huge pages: the heap of a 10,000-Kaoto render (about 200 MB), of a
// one-spec re-render of its tree (about 160 MB: on Linux the tree cache's
// records are mapped, not read; holdMemory) and of the KRM function on a
// ResourceList of 10,000 Kaotos (about 450 MB). Taking it costs about
// 5 ms at start (docs/performance.md).
const hugePageHeapSize = 512 << 20

// setMemoryPolicy applies the settings above where the environment does
// not set them, and raises the limit with the live heap (watchLiveHeap).
func setMemoryPolicy(getenv func(string) string) {
	if gen, on := applyMemoryPolicy(getenv, memoryFloor); on {
		watchLiveHeap(gen)
	}
}

// policy is the limit the policy set, when it set one (on: GOMEMLIMIT
// unset). gen counts the policies applied in this process: a watch of an
// earlier one (tests apply several) ends at its next call.
var policy struct {
	sync.Mutex
	on           bool
	gen          int
	floor, limit int64
}

// applyMemoryPolicy sets the collector's settings for floor and reports
// the policy's generation and whether it set a limit.
func applyMemoryPolicy(getenv func(string) string, floor int64) (gen int, on bool) {
	policy.Lock()
	defer policy.Unlock()
	policy.gen++
	policy.on = false
	if getenv("GOMEMLIMIT") != "" {
		if getenv("GOGC") == "" {
			debug.SetGCPercent(gcPercent)
		}
		return policy.gen, false
	}
	policy.on, policy.floor, policy.limit = true, floor, floor
	debug.SetMemoryLimit(floor)
	if getenv("GOGC") == "" {
		debug.SetGCPercent(-1) // after the limit is set: the limit alone triggers a collection
	}
	return policy.gen, true
}

// watchLiveHeap raises the policy's limit after each collection
// (raisedLimit) while policy gen is in force.
func watchLiveHeap(gen int) {
	// What the heap holds, and what the runtime holds but free pages:
	// all it maps but what it gave back and what it can give back.
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	var watch func()
	watch = func() {
		// Called once a collection found the sentinel unreachable: read
		// what the heap holds and arm the next call.
		metrics.Read(sample)
		policy.Lock()
		defer policy.Unlock()
		if !policy.on || policy.gen != gen {
			return
		}
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live, held := int64(sample[0].Value.Uint64()), int64(0)
			if sample[1].Value.Kind() == metrics.KindUint64 && sample[2].Value.Kind() == metrics.KindUint64 && sample[3].Value.Kind() == metrics.KindUint64 {
				held = int64(sample[1].Value.Uint64() - sample[2].Value.Uint64() - sample[3].Value.Uint64())
			}
			if next := raisedLimit(policy.limit, live, held); next != policy.limit {
				policy.limit = next
				debug.SetMemoryLimit(next)
			}
		}
		armAfterGC(watch)
	}
	armAfterGC(watch)
}

// holdMemory raises the policy's limit to its floor and held, the bytes
// a render reads at its start and keeps in the heap to its end: what is
// decoded of the tree cache's records of the last render and of its last
// entry, and the records themselves where they are read rather than
// mapped (treeCache.records). A collection would only mark them again
// (at 10,000 Kaotos a one-spec re-render collected twice, 150 ms of CPU,
// with a 200 MiB limit; with 60 MB of records read the limit is 320 MiB,
// its peak RSS 335 MB, below helm template's on the same specs). Nothing
// when GOMEMLIMIT is set: the user's limit stands.
func holdMemory(held int64) {
	policy.Lock()
	defer policy.Unlock()
	if !policy.on || held <= 0 {
		return
	}
	if want := policy.floor + held; want > policy.limit {
		policy.limit = want
		debug.SetMemoryLimit(want)
	}
}

// raisedLimit is the memory limit after a collection that found live
// bytes in use, the runtime holding held bytes but its free pages (which
// it gives back rather than collect under the limit): held and live, so
// that the heap may grow by what it holds before the next collection, as
// with Go's default GOGC=100; never lower than before. held is more than
// live by the free slots of the spans in use and the runtime's metadata.
// 1.5 times live left room for a tenth of live: at 30,000 Kaotos the KRM
// function collected 125 times, a third of its CPU, and with 90 to 133
// MiB live under the floor it collected every 50 ms. Half of live on top
// of held (GOGC=50) collected 23-25 times there, with twice the CPU of
// GOGC=100's 13-17 collections and the same peak RSS (the end, when the
// output is written, sets it).
func raisedLimit(limit, live, held int64) int64 {
	return max(limit, max(held, live)+live)
}

// armAfterGC calls fn (on its own goroutine) after the next collection.
func armAfterGC(fn func()) {
	sentinel := new([32]byte) // not from the tiny allocator, whose blocks may never be freed
	runtime.AddCleanup(sentinel, func(struct{}) { fn() }, struct{}{})
}

// hugePages is taken once per process (hugePageHeap).
var hugePages sync.Once

// largeRender takes the huge-page region (hugePageHeap) once a command's
// inputs reach hugePageInputs files or hugePageBytes bytes: as early as
// their size is known, before the render grows the heap into the region
// (taken after the inputs were read, a 10,000-Kaoto stream faulted 1,900
// times more). The policy's limit is lifted while the region is taken,
// so that it runs no collection a piece; a GOMEMLIMIT the user set
// stands (the region is then at most half of it).
func largeRender(inputs int, bytes int64) {
	if inputs < hugePageInputs && bytes < hugePageBytes {
		return
	}
	hugePages.Do(func() {
		policy.Lock()
		defer policy.Unlock()
		if policy.on {
			debug.SetMemoryLimit(math.MaxInt64)
			defer debug.SetMemoryLimit(policy.limit)
		}
		hugePageHeap(os.Getenv, hugePageHeapSize)
	})
}

// readHint counts the bytes read from r and calls largeRender once they
// reach hugePageBytes: for inputs read from a stream (stdin, the KRM
// function's ResourceList), whose size is known only as it is read.
type readHint struct {
	r io.Reader
	n int64
}

func (h *readHint) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if h.n < hugePageBytes {
		h.n += int64(n)
		largeRender(0, h.n)
	}
	return n, err
}
