package outtree

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// allocTree is a tree of folders of four files each, as a render writes
// one folder a spec, and its kustomization.
func allocTree(folders int) map[string][]byte {
	files := map[string][]byte{"kustomization.yaml": []byte(Header + "resources: []\n")}
	for d := range folders {
		for _, f := range []string{"deployment.yaml", "ingress.yaml", "service.yaml", "kaoto.yaml"} {
			p := fmt.Sprintf("team-%02d/kaoto-%05d/%s", d%10, d, f)
			files[p] = []byte("kind: ConfigMap # " + p + "\n")
		}
	}
	return files
}

// TestTreeAllocations measures what a render's round with the tree
// allocates, per file of the tree, after one file changed: the Index of
// the last write decoded (as the tree cache gives it), the update, the
// new Index encoded. It grows when the walk of a tree whose stat record
// is known costs more.
func TestTreeAllocations(t *testing.T) {
	noRacyMargin(t)
	dir := t.TempDir() + "/tree"
	a := allocTree(200)
	const changed = "team-07/kaoto-00007/deployment.yaml"
	b := copyFiles(a)
	b[changed] = []byte("kind: ConfigMap # changed\n")
	k := trusted(t, dir, a)
	next := b
	round := func() {
		enc, err := k.Index.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		known := &Index{}
		if err := known.UnmarshalBinary(enc); err != nil {
			t.Fatal(err)
		}
		ix, err := WriteIndexed(context.Background(), "", dir, next, Known{Index: known, Files: k.Files})
		if err != nil {
			t.Fatal(err)
		}
		// Listed: the folder the last round wrote in, and the one above
		// it (an update forgets the folders it changed).
		if ix.read != 1 || ix.wrote != 1 || ix.listed != 2 {
			t.Fatalf("the update read %d files, wrote %d and listed %d folders, want one, one and two", ix.read, ix.wrote, ix.listed)
		}
		k = Known{Index: ix, Files: next}
		if string(next[changed]) == string(a[changed]) {
			next = b
		} else {
			next = a
		}
	}
	round()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		round()
	}
	runtime.ReadMemStats(&after)
	bytes := (after.TotalAlloc - before.TotalAlloc) / 20
	t.Logf("%d bytes allocated per round (budget %d)", bytes, treeAllocBytesBudget)
	if bytes > treeAllocBytesBudget {
		t.Errorf("a round with a tree of %d files after one change allocates %d bytes, over its budget of %d: every fresh page costs a page fault (docs/performance.md)", len(a), bytes, treeAllocBytesBudget)
	}
	got := testing.AllocsPerRun(20, round)
	t.Logf("%.0f allocations per round, %.2f per file (budget %d)", got, got/float64(len(a)), treeAllocBudget)
	if got > treeAllocBudget {
		t.Errorf("a round with a tree of %d files after one change allocates %.0f times, over its budget of %d: find what allocates more (go test -run TestTreeAllocations -memprofile m.prof -memprofilerate 1), or raise the budget with the reason", len(a), got, treeAllocBudget)
	}
}

// treeAllocBudget is TestTreeAllocations' budget for its 801 files,
// measured and given a margin of about 10%, as render's allocBudgets
// (the count barely depends on GOMAXPROCS or the race detector): 1718
// (1724 with -race), of which 1600 were the paths of the stat calls made
// strings and C strings (unix.Fstatat), two a file; 350-355 (361 with
// -race) once they were made in the reader's scratch (treeReader.lstat).
const treeAllocBudget = 400

// treeAllocBytesBudget is the bytes those rounds may allocate, which
// every fresh page of costs a fault: measured 1.04-1.07 MB (GOMAXPROCS
// 1 to 8, -race), most of it the walk's listing buffers and the maps of
// the two Indexes; 0.90-0.95 MB once the decoded Index's paths took an
// arena of their size (statsDecoder); 0.75-0.76 MB once the walk kept
// only the paths of the files it trusted; 0.67 MB (666-673 KB) once
// those paths were the arena's string and an update that planned from
// the files read made no copy of the files wanted (walkStats.tree);
// 617-623 KB once the paths stat'd were made in the reader's scratch;
// about 10% more. Bytes vary a little from run to run (the scheduler
// decides which reader takes which folder), counts do not.
const treeAllocBytesBudget = 680_000
