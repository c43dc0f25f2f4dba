//go:build linux || darwin || freebsd

package outtree

import (
	"context"
	"fmt"
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
			if _, got := Intact(dir, k.Index); got != c.want {
				t.Errorf("Intact = %v, want %v", got, c.want)
			}
		})
	}
}

// TestIntactRacyDigests: a tree just written (every file racy, as a
// render leaves the files it wrote) is intact by the digests its Index
// records of them, through the record's encoding, and so is one written
// again with the same bytes; a racy file edited in place, size and mtime
// kept, or a record without digests (more racy files than maxRacySums)
// is not intact. The controls show the digests are what decides. The
// Index Intact returns records the files it read: with it, none is read
// again.
func TestIntactRacyDigests(t *testing.T) {
	want := indexTree()
	const p = "a/y.yaml"
	write := func(t *testing.T, files map[string][]byte) (string, *Index) {
		dir := filepath.Join(t.TempDir(), "tree")
		ix, err := WriteIndexed(context.Background(), "", dir, files, Known{})
		if err != nil {
			t.Fatal(err)
		}
		return dir, ix
	}
	t.Run("just written", func(t *testing.T) {
		dir, ix := write(t, want)
		if len(ix.Sums) != len(want) {
			t.Fatalf("the write recorded %d digests, want one a racy file (%d)", len(ix.Sums), len(want))
		}
		back := encodeDecode(t, ix)
		now, ok := Intact(dir, back)
		if !ok {
			t.Fatal("Intact = false for the tree just written, want true by its digests")
		}
		if now.read != len(want) || len(now.Files) != len(want) {
			t.Errorf("the walk read %d files and recorded %d, want every one (%d)", now.read, len(now.Files), len(want))
		}
		noSums := *back
		noSums.Sums = nil
		if _, ok := Intact(dir, &noSums); ok {
			t.Error("Intact = true without digests for racy files, want false (control)")
		}
		// The record of the walk trusts the files it read once they are
		// older than it (at once here): none is read again.
		noRacyMargin(t)
		again, ok := Intact(dir, now)
		if !ok || again.read != 0 {
			t.Errorf("Intact with the walk's record: %v, %d files read, want true and none", ok, again.read)
		}
	})
	t.Run("edited in place", func(t *testing.T) {
		dir, ix := write(t, want)
		rec := ix.Files[p]
		sameSizeEdit(t, flip(want[p]), time.Unix(0, rec.Mtime))(filepath.Join(dir, p))
		if _, ok := Intact(dir, ix); ok {
			t.Error("Intact = true for a racy file edited in place, want false")
		}
	})
	t.Run("rewritten with the same bytes", func(t *testing.T) {
		dir, ix := write(t, want)
		mustWrite(t, filepath.Join(dir, p), string(want[p]))
		if _, ok := Intact(dir, ix); !ok {
			t.Error("Intact = false for a file written again with the bytes of its digest, want true")
		}
	})
	t.Run("too many racy files", func(t *testing.T) {
		many := map[string][]byte{}
		for i := range maxRacySums + 1 {
			many[fmt.Sprintf("d%02d/f%05d.yaml", i%50, i)] = []byte("kind: ConfigMap\n")
		}
		dir, ix := write(t, many)
		if ix.Sums != nil {
			t.Errorf("the write recorded %d digests for %d racy files, want none over %d", len(ix.Sums), len(many), maxRacySums)
		}
		if _, ok := Intact(dir, ix); ok {
			t.Error("Intact = true without digests, want false")
		}
	})
}
