package load

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// budgetTree lays out inputs of different sizes under root/in, across
// folders, with a symlink to a file elsewhere in the root, a file over
// fsroot.MaxFileSize (it counts for nothing) and a chart's top-level
// file (a candidate, listed after the walk's files); stdin follows. It
// returns the inputs in input order with their sizes.
func budgetTree(t *testing.T, root string) (order []string, sizes map[string]int) {
	t.Helper()
	sizes = map[string]int{}
	file := func(rel string, size int) {
		writeFile(t, filepath.Join(root, rel), "#"+strings.Repeat("x", size-2)+"\n")
		sizes[rel] = size
	}
	file("in/a/1.yaml", 100)
	file("in/a/2.yaml", 200)
	file("in/a/3.yaml", 50)
	file("in/b/1.yaml", 300)
	file("in/b/2.yaml", 10)
	file("in/b/3.yaml", 150)
	file("in/c.yaml", 120)
	writeFile(t, filepath.Join(root, "in/chart/Chart.yaml"), "name: c\n")
	file("in/chart/cand.yaml", 60)
	f, err := os.Create(filepath.Join(root, "in/huge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(fsroot.MaxFileSize + 1); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	file("other/t.yaml", 90)
	symlink(t, "../other/t.yaml", filepath.Join(root, "in/link.yaml"))
	sizes["in/link.yaml"] = 90
	sizes["-"] = 40
	return []string{"in/a/1.yaml", "in/a/2.yaml", "in/a/3.yaml", "in/b/1.yaml", "in/b/2.yaml", "in/b/3.yaml", "in/c.yaml", "in/huge.yaml", "in/link.yaml", "in/chart/cand.yaml", "-"}, sizes
}

// overAt returns the first input of order (by index, in the order given)
// that takes the running total of sizes over budget, and the total.
func overAt(order []string, sizes map[string]int, budget int) (string, int) {
	total := 0
	for _, p := range order {
		if total += sizes[p]; total > budget {
			return p, total
		}
	}
	return "", total
}

// TestLoadBudgetSameErrorAnyOrder: the sizes are known only as files
// are read, but the error of inputs over the budget names the file and
// the total a check in input order names, whatever order the reads run
// in (one worker or many; runs of files read forwards, backwards,
// shuffled). The control: read backwards, the file that takes the
// running total over is another one, so a budget error taken from the
// running total fails here.
func TestLoadBudgetSameErrorAnyOrder(t *testing.T) {
	root := t.TempDir()
	order, sizes := budgetTree(t, root)
	const budget = 1000
	want, wantTotal := overAt(order, sizes, budget)
	if want != "in/link.yaml" || wantTotal != 1020 {
		t.Fatalf("layout: over at %s with %d", want, wantTotal)
	}
	// Runs are read whole: folder in/a, in/b, then in's own files, the
	// chart's, stdin. Backwards, the running total goes over elsewhere.
	backwards := []string{"-", "in/chart/cand.yaml", "in/c.yaml", "in/huge.yaml", "in/link.yaml", "in/b/1.yaml", "in/b/2.yaml", "in/b/3.yaml", "in/a/1.yaml", "in/a/2.yaml", "in/a/3.yaml"}
	if tip, _ := overAt(backwards, sizes, budget); tip == want {
		t.Fatalf("control: read backwards the running total goes over at %s too", tip)
	}
	orders := map[string]func([]run){
		"forwards":  nil,
		"backwards": func(r []run) { slices.Reverse(r) },
		"shuffled": func(r []run) {
			rng := rand.New(rand.NewPCG(1, 2))
			rng.Shuffle(len(r), func(i, j int) { r[i], r[j] = r[j], r[i] })
		},
	}
	defer func(m int64) { maxInputSize = m }(maxInputSize)
	defer func(o func([]run)) { readOrder = o }(readOrder)
	for _, procs := range []int{1, 8} {
		for name, reorder := range orders {
			// Over at link.yaml, at cand.yaml, at stdin; just within.
			for _, b := range []int{budget, wantTotal, 1079, 1120} {
				t.Run(fmt.Sprintf("GOMAXPROCS=%d/%s/budget=%d", procs, name, b), func(t *testing.T) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					maxInputSize, readOrder = int64(b), reorder
					_, err := loadIn(root, []string{filepath.Join(root, "in"), "-"}, strings.NewReader("#"+strings.Repeat("x", sizes["-"]-2)+"\n"))
					file, over := overAt(order, sizes, b)
					if file == "" {
						if errors.Is(err, ErrInputsTooLarge) {
							t.Fatalf("%d bytes within %d: %v", over, b, err)
						}
						return
					}
					wantErr := &manifest.Error{File: file, Err: inputsTooLarge(int64(over))}
					if file != "-" {
						wantErr.File = filepath.Join(root, file)
					}
					var merr *manifest.Error
					if !errors.Is(err, ErrInputsTooLarge) || !errors.As(err, &merr) || merr.Error() != wantErr.Error() {
						t.Errorf("got %v\nwant %v", err, wantErr)
					}
				})
			}
		}
	}
}

// TestLoadBudgetStopsReading: once the bytes read pass the budget, no
// further file is read (one worker, files read in input order: none
// after the file that took the total over); within the budget, every
// file is.
func TestLoadBudgetStopsReading(t *testing.T) {
	root := t.TempDir()
	order, sizes := budgetTree(t, root)
	defer func(m int64) { maxInputSize = m }(maxInputSize)
	defer func(o func(int)) { onRead = o }(onRead)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, b := range []int{1000, 1120} {
		t.Run(fmt.Sprint(b), func(t *testing.T) {
			maxInputSize = int64(b)
			var read []string
			onRead = func(i int) { read = append(read, order[i]) }
			_, err := loadIn(root, []string{filepath.Join(root, "in"), "-"}, strings.NewReader("#"+strings.Repeat("x", sizes["-"]-2)+"\n"))
			want := order[:len(order)-1] // stdin is not read from a file
			if tip, _ := overAt(order, sizes, b); tip != "" {
				if !errors.Is(err, ErrInputsTooLarge) {
					t.Fatalf("got %v, want ErrInputsTooLarge", err)
				}
				want = order[:slices.Index(order, tip)+1]
			}
			if diff := cmp.Diff(want, read); diff != "" {
				t.Errorf("files read: -want +got:\n%s", diff)
			}
		})
	}
}
