package outtree

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzIndexUnmarshal: an Index record is hostile input (a cache on
// disk): whatever the bytes, decoding never panics, and what decodes
// encodes back to a record that decodes the same.
func FuzzIndexUnmarshal(f *testing.F) {
	ix := &Index{Taken: 1 << 40, Files: map[string]FileStat{
		"kustomization.yaml":         {Size: 10, Mtime: 1, Ctime: 2, Ino: 3, Dev: 4, Mode: 0o100644},
		"ns/kaoto-a/deployment.yaml": {Size: 700, Mtime: -5, Ctime: 6, Ino: 1 << 62, Dev: 4, Mode: 0o100600},
		"ns/kaoto-b/deployment.yaml": {},
	}, Dirs: map[string]FileStat{
		"ns":         {Size: 4096, Mtime: 7, Ctime: 8, Ino: 9, Dev: 4, Mode: 0o40755},
		"ns/kaoto-a": {Size: 4096, Mtime: 7, Ctime: 8, Ino: 10, Dev: 4, Mode: 0o40755},
	}, Sums: map[string]fileSum{"ns/kaoto-a/deployment.yaml": {1, 2, 3}, "ns/kaoto-b/deployment.yaml": {31: 9}}}
	b, err := ix.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(indexMagic))
	f.Add(append([]byte(indexMagic), 0, 0xff, 0xff, 0xff, 0xff, 0x0f))
	f.Fuzz(func(t *testing.T, b []byte) {
		var ix Index
		if err := ix.UnmarshalBinary(b); err != nil {
			if ix.Files != nil || ix.Dirs != nil || ix.Sums != nil {
				t.Fatal("a failed decode changed the Index")
			}
			return
		}
		again, err := ix.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		// Made at its size (statsSize): never grown, never larger.
		if cap(again) != len(again) {
			t.Errorf("the encoding of %d bytes has room for %d: it grew, or was sized wrong", len(again), cap(again))
		}
		var back Index
		if err := back.UnmarshalBinary(again); err != nil {
			t.Fatalf("a record encoded from a decoded one does not decode: %v", err)
		}
		if diff := cmp.Diff([]map[string]FileStat{ix.Files, ix.Dirs}, []map[string]FileStat{back.Files, back.Dirs}); diff != "" || ix.Taken != back.Taken {
			t.Errorf("decode(encode(decode(b))) differs: %s", diff)
		}
		if diff := cmp.Diff(ix.Sums, back.Sums); diff != "" {
			t.Errorf("decode(encode(decode(b))) differs in its digests: %s", diff)
		}
	})
}

// encodeDecode returns ix encoded and decoded (MarshalBinary,
// UnmarshalBinary), failing the test when either fails.
func encodeDecode(t *testing.T, ix *Index) *Index {
	t.Helper()
	b, err := ix.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Index
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return &back
}

// TestKidsDecoded: the entries of each recorded folder, grouped from the
// paths in order as decoded (runs split by subfolders, a folder's files
// sliced, not copied), are those grouped from the map.
func TestKidsDecoded(t *testing.T) {
	ix := &Index{Files: map[string]FileStat{}, Dirs: map[string]FileStat{}}
	for _, p := range []string{"kustomization.yaml", "a/x.yaml", "a/b.yaml", "a/b/y.yaml", "a/b/z.yaml", "a/c.yaml", "a/b.d/q.yaml", "a/z.yaml", "e/f/g.yaml", "top.yaml"} {
		ix.Files[p] = FileStat{Size: int64(len(p))}
	}
	for _, d := range []string{"a", "a/b", "a/b.d", "e", "e/f"} {
		ix.Dirs[d] = FileStat{Mode: 0o40755}
	}
	back := encodeDecode(t, ix)
	if len(back.order) != len(ix.Files) {
		t.Fatalf("decoded %d paths in order, want %d", len(back.order), len(ix.Files))
	}
	sorted := func(m map[string]*dirKids) map[string][2][]string {
		out := map[string][2][]string{}
		for d, k := range m {
			var files []string
			for i, f := range k.files {
				files = append(files, fmt.Sprintf("%s %+v", f, k.stats[i]))
			}
			out[d] = [2][]string{slices.Sorted(slices.Values(files)), slices.Sorted(slices.Values(k.dirs))}
		}
		return out
	}
	want := sorted(ix.kids())
	if diff := cmp.Diff(want, sorted(back.kids())); diff != "" {
		t.Errorf("kids from the decoded order: -from the map +from the order:\n%s", diff)
	}
	if got := want["a"][0]; len(got) != 4 {
		t.Errorf("a holds %q, want its 4 files (the control)", got)
	}
	// An Index that took a record's order (a walk's, for its encoding)
	// but holds other files of the same count groups its own files.
	other := &Index{Files: maps.Clone(ix.Files), Dirs: ix.Dirs, order: back.order}
	delete(other.Files, "a/c.yaml")
	other.Files["a/d.yaml"] = FileStat{Size: 8}
	if got := sorted(other.kids())["a"][0]; !slices.ContainsFunc(got, func(f string) bool { return strings.HasPrefix(f, "a/d.yaml ") }) {
		t.Errorf("a holds %q, want a/d.yaml, not the order it took", got)
	}
}

// TestMarshalOrdered: an Index encodes the same bytes whether it takes
// its files' order from the record it came from or sorts them, and takes
// it only when that order holds exactly its files.
func TestMarshalOrdered(t *testing.T) {
	base := &Index{Taken: 7, Files: map[string]FileStat{}, Dirs: map[string]FileStat{"a": {Mode: 0o40755}}}
	for _, p := range []string{"kustomization.yaml", "a/x.yaml", "a/b.yaml", "a/b/y.yaml", "c.yaml"} {
		base.Files[p] = FileStat{Size: int64(len(p)), Ino: uint64(len(p))}
	}
	decoded := encodeDecode(t, base)
	for _, c := range []struct {
		name    string
		edit    func(m map[string]FileStat)
		ordered bool
	}{
		{"the same files", func(map[string]FileStat) {}, true},
		{"an identity changed", func(m map[string]FileStat) { m["a/x.yaml"] = FileStat{Size: 99} }, true},
		{"a file added", func(m map[string]FileStat) { m["b.yaml"] = FileStat{} }, false},
		{"a file removed", func(m map[string]FileStat) { delete(m, "c.yaml") }, false},
		{"a file for another", func(m map[string]FileStat) { delete(m, "c.yaml"); m["0.yaml"] = FileStat{} }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := maps.Clone(decoded.Files)
			c.edit(files)
			withOrder := &Index{Taken: 7, Files: files, Dirs: decoded.Dirs, order: decoded.order}
			if got := withOrder.ordered() != nil; got != c.ordered {
				t.Errorf("order taken: %v, want %v", got, c.ordered)
			}
			got, err := withOrder.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			want, err := (&Index{Taken: 7, Files: files, Dirs: decoded.Dirs}).MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Error("the encoding with the order taken differs from the one sorted")
			}
		})
	}
}
