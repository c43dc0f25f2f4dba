package outtree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// finishHeld finishes the interrupted update in dir as a render does before
// it reads the previous tree: Hold, then Release.
func finishHeld(t *testing.T, dir string) error {
	t.Helper()
	h, err := Hold(context.Background(), "", dir, nil)
	if err != nil {
		return err
	}
	return h.Release()
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestWriteSwapsWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	first := map[string][]byte{"kustomization.yaml": []byte(Header + "x\n"), "a/old.yaml": []byte("old\n")}
	if err := Write(dir, first); err != nil {
		t.Fatal(err)
	}
	second := map[string][]byte{"kustomization.yaml": []byte(Header + "y\n"), "b/new.yaml": []byte("new\n")}
	if err := Write(dir, second); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(second, got); diff != "" {
		t.Errorf("files that no longer belong must disappear: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"out"}, entries(t, filepath.Dir(dir))); diff != "" {
		t.Errorf("temporary folders or the lock left behind: -want +got:\n%s", diff)
	}
}

func TestWriteRefusesForeignFolder(t *testing.T) {
	cases := map[string]struct {
		reason string
		setup  func(t *testing.T, dir string)
	}{
		"NotATree": {"a folder with files and no wavesmith kustomization.yaml", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "precious.txt"), "keep")
		}},
		"ForeignKustomization": {"a kustomization.yaml without the header", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "kustomization.yaml"), "resources: []\n")
		}},
		"Symlink": {"dir is a symlink to a tree: writing would replace the link, reading would follow it", func(t *testing.T, dir string) {
			target := dir + "-target"
			mustWrite(t, filepath.Join(target, "kustomization.yaml"), Header)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		}},
		"File": {"dir is a file", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, dir, "x")
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			before := snapshot(t, filepath.Dir(dir))
			err := Write(dir, map[string][]byte{"kustomization.yaml": []byte(Header)})
			if !errors.Is(err, ErrNotTree) {
				t.Fatalf("%s: want ErrNotTree, got %v", tc.reason, err)
			}
			if diff := cmp.Diff(before, snapshot(t, filepath.Dir(dir))); diff != "" {
				t.Errorf("%s: something was touched: -before +after:\n%s", tc.reason, diff)
			}
		})
	}
}

// snapshot lists every path below dir (not following symlinks) with the
// content of regular files.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		default:
			out[rel] = "/"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFailureKeepsOldTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	old := map[string][]byte{"kustomization.yaml": []byte(Header + "old\n")}
	if err := Write(dir, old); err != nil {
		t.Fatal(err)
	}
	// A path that cannot be written: a file where a folder must go.
	bad := map[string][]byte{"kustomization.yaml": []byte(Header), "a": []byte("x"), "a/b.yaml": []byte("y")}
	if err := Write(dir, bad); !errors.Is(err, ErrPath) {
		t.Fatalf("want ErrPath, got %v", err)
	}
	got, _ := Read(dir)
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("a failed write changed the old tree: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"out"}, entries(t, filepath.Dir(dir))); diff != "" {
		t.Errorf("leftovers: -want +got:\n%s", diff)
	}
}

// TestWritePaths: a tree path is checked before anything is written; no
// path may leave the tree, whatever object data it came from.
func TestWritePaths(t *testing.T) {
	long := strings.Repeat("a", MaxSegment+1)
	cases := map[string]struct {
		reason string
		path   string
		second string
	}{
		"DotDot":            {reason: "a name that climbs out", path: "../../../../x/pwned.yaml"},
		"DotDotInside":      {reason: "a path that climbs out and back", path: "a/../../out/x.yaml"},
		"Absolute":          {reason: "an absolute path", path: "/tmp/pwned.yaml"},
		"Dot":               {reason: "a '.' segment", path: "a/./b.yaml"},
		"Empty":             {reason: "an empty segment", path: "a//b.yaml"},
		"Trailing":          {reason: "a trailing slash", path: "a/"},
		"Backslash":         {reason: "a backslash (a separator elsewhere)", path: `a\..\..\x.yaml`},
		"NUL":               {reason: "a NUL byte", path: "a\x00.yaml"},
		"NotUTF8":           {reason: "invalid UTF-8", path: "a\xff.yaml"},
		"LongSegment":       {reason: "a segment longer than a file name may be", path: "a/" + long + ".yaml"},
		"Root":              {reason: "the tree itself", path: "."},
		"CaseOnly":          {reason: "two paths that are one file on case-insensitive file systems", path: "a/X.yaml", second: "a/x.yaml"},
		"FileAndFolder":     {reason: "a file where a folder must go", path: "a", second: "a/b.yaml"},
		"FileAndDeepFolder": {reason: "a file where a folder of a folder must go", path: "a/b", second: "a/b/c/d.yaml"},
		"CaseBothFolded":    {reason: "two paths that both change when folded", path: "a/Xy.yaml", second: "a/xY.yaml"},
		"CaseFolder":        {reason: "two folders that differ only in case", path: "A/x.yaml", second: "a/x.yaml"},
		"CaseUnicode":       {reason: "two non-ASCII names that differ only in case", path: "a/\u00c4.yaml", second: "a/\u00e4.yaml"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			files := map[string][]byte{"kustomization.yaml": []byte(Header), tc.path: []byte("x")}
			if tc.second != "" {
				files[tc.second] = []byte("y")
			}
			if err := Write(dir, files); !errors.Is(err, ErrPath) {
				t.Fatalf("%s: want ErrPath, got %v", tc.reason, err)
			}
			if got := entries(t, parent); len(got) != 0 {
				t.Errorf("%s: wrote %v", tc.reason, got)
			}
		})
	}
}

// TestWriteRemovesStale: the temporary folders of renders killed midway
// (and only those of this tree) disappear with the next render.
func TestWriteRemovesStale(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := Write(dir, map[string][]byte{"kustomization.yaml": []byte(Header + "old\n")}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".out.new-123", ".out.new-9.old", ".other.new-1", ".out.new-x", "out.new-5", ".out.new-7"} {
		mustWrite(t, filepath.Join(parent, d, "f"), "x")
	}
	if err := Write(dir, map[string][]byte{"kustomization.yaml": []byte(Header + "new\n")}); err != nil {
		t.Fatal(err)
	}
	want := []string{".other.new-1", ".out.new-x", "out", "out.new-5"}
	if diff := cmp.Diff(want, entries(t, parent)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestWriteRestoresFallbackOld: a render that fell back to two renames and
// was killed between them left no tree and the previous one at
// <tmp>.old: the next render puts it back before anything else (so that
// the Flux handoffs see it), then replaces it.
func TestWriteRestoresFallbackOld(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	mustWrite(t, filepath.Join(parent, ".out.new-42.old", "kustomization.yaml"), Header+"previous\n")
	mustWrite(t, filepath.Join(parent, ".out.new-43", "kustomization.yaml"), Header+"half-written\n")
	if errs := removeStale(parent, "out"); len(errs) > 0 {
		t.Fatal(errs)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]byte{"kustomization.yaml": []byte(Header + "previous\n")}, got); diff != "" {
		t.Errorf("the previous tree was not restored: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"out"}, entries(t, parent)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestWriteLocked: a render finding the tree locked fails at once, naming
// the holder; once the holder is gone the lock is free and no lock file
// stays behind.
func TestWriteLocked(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	release, err := lock(context.Background(), parent, "out", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = Write(dir, map[string][]byte{"kustomization.yaml": []byte(Header)})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("want ErrLocked, got %v", err)
	}
	if want := fmt.Sprintf("pid %d", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("the error does not name the holder (%s): %v", want, err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, map[string][]byte{"kustomization.yaml": []byte(Header)}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"out"}, entries(t, parent)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	// A lock file left by a killed holder does not block.
	mustWrite(t, filepath.Join(parent, lockName("out")), "wavesmith render, pid 1\n")
	if err := Write(dir, map[string][]byte{"kustomization.yaml": []byte(Header + "2\n")}); err != nil {
		t.Fatalf("a stale lock file blocked the render: %v", err)
	}
	if diff := cmp.Diff([]string{"out"}, entries(t, parent)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestHold: Hold keeps the tree's lock from before the previous tree is
// read until the new one is written: a Write meanwhile fails with
// ErrLocked, WriteHeld writes under the lock and leaves it held, Release
// removes it. With the parent missing nothing is locked and WriteHeld
// makes it, as WriteIn does; a parent that leaves the anchor is refused
// before any lock file is made.
func TestHold(t *testing.T) {
	ctx := context.Background()
	files := map[string][]byte{"kustomization.yaml": []byte(Header)}
	// tree writes files into out below a new parent.
	tree := func(t *testing.T) (parent, dir string) {
		t.Helper()
		parent = t.TempDir()
		dir = filepath.Join(parent, "out")
		if err := Write(dir, files); err != nil {
			t.Fatal(err)
		}
		return parent, dir
	}
	t.Run("held", func(t *testing.T) {
		parent, dir := tree(t)
		h, err := Hold(ctx, parent, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(dir, files); !errors.Is(err, ErrLocked) {
			t.Fatalf("Write while held: want ErrLocked, got %v", err)
		}
		next := map[string][]byte{"kustomization.yaml": []byte(Header + "2\n")}
		if _, err := WriteHeld(ctx, h, next, Known{}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{lockName("out"), "out"}, entries(t, parent)); diff != "" {
			t.Errorf("after WriteHeld, -want +got:\n%s", diff)
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		if err := h.Release(); err != nil {
			t.Fatalf("a second Release: %v", err)
		}
		if diff := cmp.Diff([]string{"out"}, entries(t, parent)); diff != "" {
			t.Errorf("after Release, -want +got:\n%s", diff)
		}
		got, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(next, got); diff != "" {
			t.Errorf("the tree, -want +got:\n%s", diff)
		}
	})
	t.Run("leftovers of killed renders", func(t *testing.T) {
		// A render killed after its swap, while it removed the replaced
		// tree, leaves that tree beside DIR; one killed while it wrote
		// its new tree aside leaves that. The next render may find DIR
		// intact and write nothing: Hold removes them.
		parent, dir := tree(t)
		for _, name := range []string{tempPrefix("out") + "123", tempPrefix("out") + "456"} {
			if err := os.MkdirAll(filepath.Join(parent, name, "a"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(parent, name, "a", "x.yaml"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Not a render's: kept.
		if err := os.Mkdir(filepath.Join(parent, ".out.new-mine"), 0o755); err != nil {
			t.Fatal(err)
		}
		h, err := Hold(ctx, parent, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Leftovers(); err != nil {
			t.Fatal(err)
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{".out.new-mine", "out"}, entries(t, parent)); diff != "" {
			t.Errorf("after Hold, -want +got:\n%s", diff)
		}
	})
	t.Run("leftovers that stay", func(t *testing.T) {
		// What Hold could not remove (a folder root cannot fail to
		// remove, so the failure is given) is ErrCleanup, naming it.
		h := &Held{dir: "/trees/out", leftovers: []error{errors.New("removing /trees/.out.new-789 left by an earlier render: permission denied")}}
		if err := h.Leftovers(); !errors.Is(err, ErrCleanup) || !strings.Contains(err.Error(), ".out.new-789") {
			t.Errorf("Leftovers = %v, want ErrCleanup naming .out.new-789", err)
		}
		// WriteHeld, which leaves the removal to Hold under the same
		// lock, reports it too, once the tree is written.
		parent, dir := tree(t)
		held, err := Hold(ctx, parent, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer held.Release()
		held.leftovers = h.leftovers
		next := map[string][]byte{"kustomization.yaml": []byte(Header + "3\n")}
		if _, err := WriteHeld(ctx, held, next, Known{}); !errors.Is(err, ErrCleanup) || !strings.Contains(err.Error(), ".out.new-789") {
			t.Errorf("WriteHeld = %v, want ErrCleanup naming .out.new-789", err)
		}
		if got, err := Read(dir); err != nil || string(got["kustomization.yaml"]) != Header+"3\n" {
			t.Errorf("the tree after WriteHeld: %q, %v", got["kustomization.yaml"], err)
		}
	})
	t.Run("no parent", func(t *testing.T) {
		base := t.TempDir()
		dir := filepath.Join(base, "a", "out")
		h, err := Hold(ctx, base, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := entries(t, base); len(got) != 0 {
			t.Errorf("Hold made %v", got)
		}
		if _, err := WriteHeld(ctx, h, files, Known{}); err != nil {
			t.Fatal(err)
		}
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"out"}, entries(t, filepath.Join(base, "a"))); diff != "" {
			t.Errorf("-want +got:\n%s", diff)
		}
	})
	t.Run("no folder named", func(t *testing.T) {
		base := t.TempDir()
		t.Chdir(filepath.Join(base))
		for _, dir := range []string{".", "..", "a/.."} {
			if _, err := Hold(ctx, "", dir, nil); !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "cannot be an output folder") {
				t.Errorf("Hold(%q) = %v, want ErrWrite: cannot be an output folder", dir, err)
			}
		}
		if got := entries(t, base); len(got) != 0 {
			t.Errorf("Hold made %v", got)
		}
	})
	t.Run("outside the anchor", func(t *testing.T) {
		base := t.TempDir()
		anchor, outside := filepath.Join(base, "repo"), filepath.Join(base, "outside")
		for _, d := range []string{anchor, outside} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("../outside", filepath.Join(anchor, "link")); err != nil {
			t.Fatal(err)
		}
		if _, err := Hold(ctx, anchor, filepath.Join(anchor, "link", "out"), nil); !errors.Is(err, fsroot.ErrOutsideRoot) {
			t.Errorf("want ErrOutsideRoot, got %v", err)
		}
		if got := entries(t, outside); len(got) != 0 {
			t.Errorf("made outside the anchor: %v", got)
		}
	})
}

// TestWriteConcurrent: renders into one folder at once either write a
// whole tree or fail with ErrLocked; the result is one of the trees.
func TestWriteConcurrent(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	const n = 16
	trees := make([]map[string][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		trees[i] = map[string][]byte{"kustomization.yaml": []byte(Header + strconv.Itoa(i) + "\n")}
		for j := range 50 {
			trees[i][fmt.Sprintf("d%d/f%d.yaml", j%5, j)] = []byte(strconv.Itoa(i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Write(dir, trees[i])
		}()
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrLocked):
			t.Errorf("render %d: want success or ErrLocked, got %v", i, err)
		}
	}
	if ok == 0 {
		t.Fatal("no render succeeded")
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, want := range trees {
		found = found || cmp.Equal(want, got)
	}
	if !found {
		t.Errorf("the tree is none of the rendered ones: %v", got["kustomization.yaml"])
	}
	if diff := cmp.Diff([]string{"out"}, entries(t, parent)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestWriteKilled kills a process writing a tree at random moments: the
// folder always holds a whole tree (the previous or the new one), or a
// tree marked as interrupted (Read refuses it) that Finish turns into the
// new one; the next render leaves nothing else behind.
func TestWriteKilled(t *testing.T) {
	if os.Getenv("TREE_TEST_WRITER") != "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := Write(dir, bigTree("0")); err != nil {
		t.Fatal(err)
	}
	const kills = 20
	marked := 0
	for i := 1; i <= kills; i++ {
		cmd := exec.Command(exe, "-test.run=^TestWriteKilledHelper$")
		cmd.Env = append(os.Environ(), "TREE_TEST_WRITER="+dir, "TREE_TEST_VERSION="+strconv.Itoa(i))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i*7%60) * time.Millisecond) // a spread of moments, not synchronisation
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		got, err := Read(dir)
		if errors.Is(err, ErrInterrupted) {
			marked++
			if err := finishHeld(t, dir); err != nil {
				t.Fatalf("kill %d: finishing: %v", i, err)
			}
			if got, err = Read(dir); err == nil && string(got["kustomization.yaml"]) != Header+strconv.Itoa(i) {
				t.Fatalf("kill %d: finishing an interrupted update gave version %q, not the new one", i, got["kustomization.yaml"])
			}
		}
		if err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		v := strings.TrimPrefix(string(got["kustomization.yaml"]), Header)
		if !cmp.Equal(bigTree(v), got) {
			t.Fatalf("kill %d: %s does not hold a whole tree (version %q, %d files)", i, dir, v, len(got))
		}
	}
	t.Logf("%d kills, %d left the tree marked as interrupted", kills, marked)
	if err := Write(dir, bigTree("last")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"out"}, entries(t, parent)); diff != "" {
		t.Errorf("leftovers of killed renders: -want +got:\n%s", diff)
	}
}

// TestWriteKilledHelper is the process TestWriteKilled kills.
func TestWriteKilledHelper(t *testing.T) {
	dir := os.Getenv("TREE_TEST_WRITER")
	if dir == "" {
		return
	}
	for {
		if err := Write(dir, bigTree(os.Getenv("TREE_TEST_VERSION"))); err != nil && !errors.Is(err, ErrLocked) {
			t.Fatal(err)
		}
	}
}

func bigTree(version string) map[string][]byte {
	files := map[string][]byte{"kustomization.yaml": []byte(Header + version)}
	for j := range 300 {
		files[fmt.Sprintf("d%d/f%d.yaml", j%20, j)] = []byte(version)
	}
	return files
}

// FuzzCheckPaths: the one-pass check of a tree's paths (checkPaths, with
// quickPath) refuses exactly the sets of paths the sorted check refuses,
// and quickPath never accepts a path CheckPath refuses.
func FuzzCheckPaths(f *testing.F) {
	for _, seed := range [][3]string{
		{"a/b.yaml", "a/c.yaml", "kustomization.yaml"},
		{"a/X.yaml", "a/x.yaml", "b.yaml"},
		{"a/Xy.yaml", "a/xY.yaml", "b.yaml"},
		{"A/x.yaml", "a/x.yaml", "b.yaml"},
		{"a/\u00c4.yaml", "a/\u00e4.yaml", "b.yaml"},
		{"a/\u00c4.yaml", "a/b.yaml", "B/c.yaml"},
		{"a", "a/b.yaml", "c"},
		{"a/b", "a/b/c/d.yaml", "c"},
		{"a/../b", "a/./b", "a//b"},
		{"/a", "a/", "."},
		{"a\\b", "a\x00b", "a\xffb"},
		{strings.Repeat("x", MaxSegment), strings.Repeat("x", MaxSegment+1), "K/\u212a"},
		{"\u212a", "k", "K"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, p := range []string{a, b, c} {
			if plain, ok := quickPath(p); ok {
				if err := CheckPath(p); err != nil {
					t.Errorf("quickPath accepts %q, CheckPath refuses it: %v", p, err)
				}
				if plain != (strings.ToLower(p) == p) {
					t.Errorf("quickPath(%q): plain %v", p, plain)
				}
			}
		}
		files := map[string][]byte{a: nil, b: nil, c: nil}
		quick, sorted := checkPaths(files), checkPathsSorted(files)
		if (quick == nil) != (sorted == nil) {
			t.Errorf("%q: checkPaths says %v, checkPathsSorted %v", []string{a, b, c}, quick, sorted)
		}
	})
}
