package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// hugePageChildEnv makes the test binary a child of TestHugePageHeap
// (TestMain): it runs hugePageChild in a fresh process, whose heap no
// other test has grown, and exits.
const hugePageChildEnv = "WAVESMITH_TEST_HUGEPAGE_CHILD"

// hugePageChild calls hugePageHeap when mode is "call", then allocates
// 32 MiB in 1 MiB pieces and prints how many of them lie in memory
// marked for huge pages (the "hg" flag of /proc/self/smaps); with mode
// "collections" it prints how many collections the call ran. The modes
// "large", "small" and "stream" set the memory policy as main does and
// tell largeRender of inputs just at, just below the thresholds, and of
// hugePageBytes read through readHint; "policy collections" prints how
// many collections largeRender ran under the policy, "policy size" how
// many MiB it advised; "limited" calls hugePageHeap under a finite
// address-space limit (ulimit -v); "growth" prints how many collections
// the memory policy runs while a heap grows (TestMemoryPolicyGrowth).
func hugePageChild(mode string) int {
	switch mode {
	case "call":
		hugePageHeap(os.Getenv, 64<<20)
	case "limited": // under an address-space limit, however large
		if err := limitAddressSpace(1 << 40); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		hugePageHeap(os.Getenv, 64<<20)
	case "policy size": // MiB of address space advised for huge pages
		setMemoryPolicy(os.Getenv)
		largeRender(hugePageInputs, 0)
		hg, err := hugePageVMAs()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var n uintptr
		for _, v := range hg {
			n += v.hi - v.lo
		}
		fmt.Println(n >> 20)
		return 0
	case "collections", "policy collections": // how many collections the call runs
		call := func() { hugePageHeap(os.Getenv, 64<<20) }
		if mode == "policy collections" {
			setMemoryPolicy(os.Getenv)
			call = func() { largeRender(hugePageInputs, 0) }
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		call()
		runtime.ReadMemStats(&after)
		fmt.Println(after.NumGC - before.NumGC)
		return 0
	case "growth": // collections under the policy while 150 MiB become live
		setMemoryPolicy(os.Getenv)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		// Each kept object among three dropped ones of its size: once
		// collected, the spans in use are three-quarters free slots, which
		// the memory limit counts (as the KRM function's heap at 30,000
		// Kaotos, a quarter there).
		var live [][]byte
		for i := 0; i < 150<<20/(1<<10); i++ {
			garbageSink = make([]byte, 1<<10)
			live = append(live, make([]byte, 1<<10))
			garbageSink = make([]byte, 1<<10)
			garbageSink = make([]byte, 1<<10)
		}
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(live)
		fmt.Println(after.NumGC - before.NumGC)
		return 0
	case "large", "small", "stream":
		setMemoryPolicy(os.Getenv)
		switch mode {
		case "large":
			largeRender(hugePageInputs, 0)
		case "small":
			largeRender(hugePageInputs-1, hugePageBytes-1)
		case "stream":
			if _, err := io.Copy(io.Discard, &readHint{r: bytes.NewReader(make([]byte, hugePageBytes))}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		if got := debug.SetMemoryLimit(-1); got != memoryFloor {
			fmt.Fprintf(os.Stderr, "memory limit %d after largeRender, want the policy's %d\n", got, memoryFloor)
			return 1
		}
	}
	var keep [][]byte
	for range 32 {
		keep = append(keep, make([]byte, 1<<20))
	}
	marked, err := hugePageMarked()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n := 0
	for _, b := range keep {
		if marked(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) {
			n++
		}
	}
	fmt.Println(n)
	return 0
}

// garbageSink makes what hugePageChild drops heap garbage: stored in it,
// an allocation escapes (a local one may live on the stack).
var garbageSink []byte

// runChild runs hugePageChild with mode in a fresh process of the test
// binary, with env added to the environment, and returns the number it
// printed.
func runChild(t *testing.T, mode string, env ...string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), hugePageChildEnv+"="+mode), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	var n int
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &n); err != nil {
		t.Fatalf("child %s printed %q: %v", mode, out, err)
	}
	t.Logf("child %s printed %d", mode, n)
	return n
}

// hugePageMarked reads the process's mappings and returns whether an
// address lies in one advised for huge pages.
func hugePageMarked() (func(uintptr) bool, error) {
	hg, err := hugePageVMAs()
	if err != nil {
		return nil, err
	}
	return func(p uintptr) bool {
		for _, v := range hg {
			if v.lo <= p && p < v.hi {
				return true
			}
		}
		return false
	}, nil
}

// vma is a mapping's address range.
type vma struct{ lo, hi uintptr }

// hugePageVMAs returns the process's mappings advised for huge pages.
func hugePageVMAs() ([]vma, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var hg []vma
	var cur vma
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rng, _, ok := strings.Cut(line, " "); ok && strings.Contains(rng, "-") && !strings.HasSuffix(rng, ":") {
			lo, hi, _ := strings.Cut(rng, "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				cur = vma{uintptr(l), uintptr(h)}
			}
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && strings.Contains(" "+flags+" ", " hg ") {
			hg = append(hg, cur)
		}
	}
	return hg, sc.Err()
}
