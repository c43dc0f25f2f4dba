package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// hugePageChildEnv makes the test binary a child (TestMain, runChild):
// it runs hugePageChild in a fresh process, whose heap no other test has
// grown, and exits.
const hugePageChildEnv = "WAVESMITH_TEST_HUGEPAGE_CHILD"

// hugePageChild runs one mode in a fresh process of the test binary and
// prints a number (TestHugePageHeap, TestMemoryPolicyGrowth):
//   - "collections" and "policy collections": how many collections
//     hugePageHeap, or largeRender under the memory policy, ran;
//   - "policy size": how many MiB largeRender advised under the policy;
//   - "growth": how many collections the policy ran while a heap grew;
//   - every other mode readies the process as its name says (prepare),
//     then allocates 32 MiB in 1 MiB pieces and prints how many of them
//     lie in memory marked for huge pages (the "hg" flag of
//     /proc/self/smaps).
func hugePageChild(mode string) int {
	if err := hugePageChildRun(mode); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func hugePageChildRun(mode string) error {
	// What the region does, not whether this machine's free memory
	// calls for it (smallPagesBacked): only "served" is told that small
	// pages cost less here.
	smallPagesFirst = func(int) bool { return mode == "served" }
	switch mode {
	case "collections":
		fmt.Println(collectionsDuring(func() { hugePageHeap(os.Getenv, 64<<20) }))
		return nil
	case "policy collections":
		setMemoryPolicy(os.Getenv)
		fmt.Println(collectionsDuring(func() { largeRender(hugePageInputs, 0) }))
		return nil
	case "policy size": // MiB of address space advised for huge pages
		setMemoryPolicy(os.Getenv)
		largeRender(hugePageInputs, 0)
		hg, err := hugePageVMAs()
		if err != nil {
			return err
		}
		var n uintptr
		for _, v := range hg {
			n += v.hi - v.lo
		}
		fmt.Println(n >> 20)
		return nil
	case "growth": // collections under the policy while 150 MiB become live
		setMemoryPolicy(os.Getenv)
		// Each kept object among three dropped ones of its size: once
		// collected, the spans in use are three-quarters free slots, which
		// the memory limit counts (as the KRM function's heap at 30,000
		// Kaotos, a quarter there).
		var live [][]byte
		fmt.Println(collectionsDuring(func() {
			for i := 0; i < 150<<20/(1<<10); i++ {
				garbageSink = make([]byte, 1<<10)
				live = append(live, make([]byte, 1<<10))
				garbageSink = make([]byte, 1<<10)
				garbageSink = make([]byte, 1<<10)
			}
		}))
		runtime.KeepAlive(live)
		return nil
	}
	if err := prepare(mode); err != nil {
		return err
	}
	var keep [][]byte
	for range 32 {
		keep = append(keep, make([]byte, 1<<20))
	}
	marked, err := hugePageMarked()
	if err != nil {
		return err
	}
	n := 0
	for _, b := range keep {
		if marked(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) {
			n++
		}
	}
	fmt.Println(n)
	return nil
}

// hugePageDirEnv names the folder of specs the "render" modes render.
const hugePageDirEnv = "WAVESMITH_TEST_HUGEPAGE_DIR"

// prepare readies the child as mode says before its allocations are
// probed: hugePageHeap called ("call"; "served": where small pages
// cost less), under an address-space limit
// ("limited"), or not at all (any other mode); under the memory policy
// as main sets it, largeRender told of inputs at and just below the
// thresholds ("large", "small"), hugePageBytes read through readHint
// ("stream"), or a whole command run through run, as a user runs it:
// "render" renders the folder specs in the folder hugePageDirEnv names,
// "fn" the ResourceList there (resourcelist.yaml) on standard input.
func prepare(mode string) error {
	switch mode {
	case "call", "served":
		hugePageHeap(os.Getenv, 64<<20)
	case "limited": // under an address-space limit, however large
		if err := limitAddressSpace(1 << 40); err != nil {
			return err
		}
		hugePageHeap(os.Getenv, 64<<20)
	case "large", "small", "stream", "render", "fn":
		setMemoryPolicy(os.Getenv)
		switch mode {
		case "large":
			largeRender(hugePageInputs, 0)
		case "small":
			largeRender(hugePageInputs-1, hugePageBytes-1)
		case "stream":
			if _, err := io.Copy(io.Discard, &readHint{r: bytes.NewReader(make([]byte, hugePageBytes))}); err != nil {
				return err
			}
		case "render", "fn":
			dir := os.Getenv(hugePageDirEnv)
			args, stdin := []string{"render", filepath.Join(dir, "specs")}, io.Reader(strings.NewReader(""))
			if mode == "fn" {
				f, err := os.Open(filepath.Join(dir, "resourcelist.yaml"))
				if err != nil {
					return err
				}
				defer f.Close()
				args, stdin = []string{"fn"}, f
			}
			var stderr bytes.Buffer
			if code := run(args, stdin, io.Discard, &stderr); code != exitOK {
				return fmt.Errorf("wavesmith %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
			}
		}
		// The lift while the region is taken is undone (a command may
		// have raised the limit since, holdMemory and raisedLimit).
		if got := debug.SetMemoryLimit(-1); got == math.MaxInt64 || mode != "render" && mode != "fn" && got != memoryFloor {
			return fmt.Errorf("memory limit %d after largeRender, want the policy's %d", got, memoryFloor)
		}
	}
	return nil
}

// collectionsDuring returns how many collections ran while fn ran.
func collectionsDuring(fn func()) uint32 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.NumGC - before.NumGC
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
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("child %s: %v\n%s%s", mode, err, out, stderr)
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
