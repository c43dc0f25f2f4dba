package outtree

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIntact: a tree whose files are all trusted by its Index is intact,
// without reading one; every edit TestIndexedFindsEdits finds makes it
// not intact, and so do a racy record (the control that Intact trusts
// nothing ReadIndexed would not), a tree killed mid-update (MarkerFile),
// a missing tree and no Index.
func TestIntact(t *testing.T) {
	noRacyMargin(t)
	want := indexTree()
	const p = "a/y.yaml"
	for _, c := range []struct {
		name string
		edit func(t *testing.T, dir string, k *Known)
		want bool
	}{
		{"unchanged", func(*testing.T, string, *Known) {}, true},
		{"in place, size and mtime kept", func(t *testing.T, dir string, k *Known) {
			rec := k.Index.Files[p]
			tick(t, dir, p, rec, sameSizeEdit(t, flip(want[p]), time.Unix(0, rec.Mtime)))
		}, false},
		{"an extra file", func(t *testing.T, dir string, _ *Known) {
			mustWrite(t, filepath.Join(dir, "a", "extra.yaml"), "extra\n")
		}, false},
		{"a missing file", func(t *testing.T, dir string, _ *Known) {
			if err := os.Remove(filepath.Join(dir, "b", "z.yaml")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a racy record", func(t *testing.T, _ string, k *Known) {
			k.Index.Taken = time.Now().Add(time.Hour).UnixNano() // later than now: the clock went back
		}, false},
		{"a render killed mid-update", func(t *testing.T, dir string, _ *Known) {
			mustWrite(t, filepath.Join(dir, MarkerFile), "")
		}, false},
		{"no tree", func(t *testing.T, dir string, _ *Known) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"no Index", func(t *testing.T, _ string, k *Known) { k.Index = nil }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			k := trusted(t, dir, want)
			c.edit(t, dir, &k)
			if got := Intact(dir, k.Index); got != c.want {
				t.Errorf("Intact = %v, want %v", got, c.want)
			}
		})
	}
}
