package treecache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wavesmith/wavesmith/internal/outtree"
)

func entry(key string, n int) *Entry {
	e := &Entry{
		Key:      sha256.Sum256([]byte(key)),
		Sources:  map[string]Sum{"/root/comp": sha256.Sum256([]byte("comp"))},
		Previous: []Op{{Kind: "dir", Name: "_flux", Sum: sha256.Sum256([]byte("x"))}},
		Warnings: []string{"a warning"},
		Objects:  3,
		Specs:    1,
		Files:    map[string][]byte{},
	}
	for i := 0; i < n; i++ {
		// Enough bytes for several chunks when n is large.
		e.Files[fmt.Sprintf("ns/k%d/deployment.yaml", i)] = []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 100))
	}
	return e
}

func TestPutGet(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 20000} {
		want := entry("k", n)
		if err := c.Put("slot", want); err != nil {
			t.Fatal(err)
		}
		got, err := c.Get("slot", want.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Files) == 0 {
			want.Files = map[string][]byte{}
		}
		// cmp walks byte slices element by element: compare the files
		// apart.
		if !reflect.DeepEqual(want.Files, got.Files) {
			t.Errorf("%d files: the files differ", n)
		}
		want.Files, got.Files = nil, nil
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Entry{})); diff != "" {
			t.Errorf("%d files: -want +got:\n%s", n, diff)
		}
	}
	// The big entry's chunks replaced the small ones': one entry per slot.
	names, _ := filepath.Glob(filepath.Join(c.dir, "slot-*.chunk"))
	if len(names) < 2 {
		t.Errorf("%d chunks: the big entry should span several", len(names))
	}
	if err := c.Put("slot", entry("k", 1)); err != nil {
		t.Fatal(err)
	}
	if names, _ := filepath.Glob(filepath.Join(c.dir, "slot-*.chunk")); len(names) != 1 {
		t.Errorf("%d chunks after a small Put: the previous entry's were not removed", len(names))
	}
}

// TestGetHostile: whatever lies in the cache folder, Get returns the entry
// stored under the key or ErrMiss: never other files, never a hang.
func TestGetHostile(t *testing.T) {
	key := sha256.Sum256([]byte("k"))
	cases := map[string]func(t *testing.T, c *Cache){
		"missing": func(t *testing.T, c *Cache) {
			os.Remove(filepath.Join(c.dir, c.index("slot")))
		},
		"another key": func(t *testing.T, c *Cache) {
			if err := c.Put("slot", entry("other", 3)); err != nil {
				t.Fatal(err)
			}
		},
		"truncated index": func(t *testing.T, c *Cache) {
			p := filepath.Join(c.dir, c.index("slot"))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-5], 0o600)
		},
		"corrupt index": func(t *testing.T, c *Cache) {
			p := filepath.Join(c.dir, c.index("slot"))
			b, _ := os.ReadFile(p)
			b[len(magic)+3] ^= 0xff
			os.WriteFile(p, b, 0o600)
		},
		"another format": func(t *testing.T, c *Cache) {
			p := filepath.Join(c.dir, c.index("slot"))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append([]byte("wavesmith tree cache v0\n"), b[len(magic):]...), 0o600)
		},
		"corrupt chunk": func(t *testing.T, c *Cache) {
			names, _ := filepath.Glob(filepath.Join(c.dir, "slot-*.chunk"))
			b, _ := os.ReadFile(names[0])
			b[10] ^= 0xff
			os.WriteFile(names[0], b, 0o600)
		},
		"truncated chunk": func(t *testing.T, c *Cache) {
			names, _ := filepath.Glob(filepath.Join(c.dir, "slot-*.chunk"))
			b, _ := os.ReadFile(names[0])
			os.WriteFile(names[0], b[:len(b)/2], 0o600)
		},
		"missing chunk": func(t *testing.T, c *Cache) {
			names, _ := filepath.Glob(filepath.Join(c.dir, "slot-*.chunk"))
			os.Remove(names[0])
		},
		"index is a FIFO": func(t *testing.T, c *Cache) {
			p := filepath.Join(c.dir, c.index("slot"))
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatalf("mkfifo: %v", err)
			}
		},
		"index is a symlink out": func(t *testing.T, c *Cache) {
			p := filepath.Join(c.dir, c.index("slot"))
			os.Remove(p)
			other := filepath.Join(t.TempDir(), "idx")
			os.WriteFile(other, encodeIndex(entry("k", 0), nil), 0o600)
			os.Symlink(other, p)
		},
		"index too large": func(t *testing.T, c *Cache) {
			p := filepath.Join(c.dir, c.index("slot"))
			f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			f.Truncate(1 << 30)
			f.Close()
		},
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Put("slot", entry("k", 3)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Get("slot", key, nil); err != nil {
				t.Fatalf("the control: the entry before it is spoiled: %v", err)
			}
			spoil(t, c)
			if e, err := c.Get("slot", key, nil); !errors.Is(err, ErrMiss) {
				t.Errorf("Get = %v, %v; want ErrMiss", e, err)
			}
		})
	}
}

func TestRecordReplay(t *testing.T) {
	prev := fstest.MapFS{
		"_flux/wave-0/kustomization.yaml": {Data: []byte("resources: [a.yaml]\n")},
		"_flux/wave-0/a.yaml":             {Data: []byte("a\n")},
	}
	r := Record(prev)
	if _, err := fsGlob(r); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadFile("_flux/wave-0/kustomization.yaml"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadFile("_flux/wave-0/gone.yaml"); err == nil {
		t.Fatal("a missing file read")
	}
	ops := r.Ops()
	if !Replay(prev, ops) {
		t.Error("the same tree does not replay")
	}
	for name, change := range map[string]func(m fstest.MapFS){
		"a file read changed": func(m fstest.MapFS) {
			m["_flux/wave-0/kustomization.yaml"] = &fstest.MapFile{Data: []byte("resources: []\n")}
		},
		"a missing file appears": func(m fstest.MapFS) { m["_flux/wave-0/gone.yaml"] = &fstest.MapFile{Data: []byte("x")} },
		"a folder listed grows":  func(m fstest.MapFS) { m["_flux/wave-1/kustomization.yaml"] = &fstest.MapFile{Data: []byte("")} },
	} {
		m := fstest.MapFS{}
		for k, v := range prev {
			m[k] = v
		}
		change(m)
		if Replay(m, ops) {
			t.Errorf("%s: replays as the same tree", name)
		}
	}
	if Replay(nil, ops) || !Replay(nil, Absent()) || Replay(prev, Absent()) {
		t.Error("a missing previous tree is not told from an existing one")
	}
}

func fsGlob(r *Recorder) ([]string, error) { return fs.Glob(r, "_flux/wave-*/kustomization.yaml") }

// TestPutRewritesSpoiledChunk: a chunk whose content does not match its
// name is a miss, which removes it, so that the next Put writes it again
// and the Get after it hits.
func TestPutRewritesSpoiledChunk(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := entry("k", 3)
	if err := c.Put("slot", e); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(c.dir, "slot-*.chunk"))
	b, _ := os.ReadFile(names[0])
	b[0] ^= 1
	os.WriteFile(names[0], b, 0o600)
	if _, err := c.Get("slot", e.Key, nil); !errors.Is(err, ErrMiss) {
		t.Fatalf("the control: a spoiled chunk: %v, want ErrMiss", err)
	}
	if err := c.Put("slot", e); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("slot", e.Key, nil); err != nil {
		t.Errorf("after Put again: %v", err)
	}
}

// TestEvict: however many output folders are rendered into, the cache
// keeps the entries of the MaxSlots written last, chunks and all; the
// folder being written is never evicted. The control: below MaxSlots
// nothing is removed.
func TestEvict(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	put := func(i int) {
		t.Helper()
		slot := fmt.Sprintf("s%02d", i)
		e := entry(slot, 2)
		e.Tree = &outtree.Index{Files: map[string]outtree.FileStat{}}
		if err := c.Put(slot, e); err != nil {
			t.Fatal(err)
		}
		// Distinct ages, whatever the file system's clock resolution.
		at := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(c.dir, c.index(slot)), at, at); err != nil {
			t.Fatal(err)
		}
	}
	slots := func() []string {
		idx, _ := filepath.Glob(filepath.Join(c.dir, "*.idx"))
		var s []string
		for _, p := range idx {
			s = append(s, strings.TrimSuffix(filepath.Base(p), ".idx"))
		}
		return s
	}
	for i := 0; i < MaxSlots; i++ {
		put(i)
	}
	if got := slots(); len(got) != MaxSlots {
		t.Fatalf("%d entries after %d folders, want all of them: %v", len(got), MaxSlots, got)
	}
	for i := MaxSlots; i < MaxSlots+4; i++ {
		put(i)
	}
	var want []string
	for i := 4; i < MaxSlots+4; i++ {
		want = append(want, fmt.Sprintf("s%02d", i))
	}
	if diff := cmp.Diff(want, slots()); diff != "" {
		t.Errorf("entries kept (-want +got):\n%s", diff)
	}
	chunks, _ := filepath.Glob(filepath.Join(c.dir, "*.chunk"))
	trees, _ := filepath.Glob(filepath.Join(c.dir, "*.tree"))
	for _, p := range append(chunks, trees...) {
		if s, _, _ := strings.Cut(filepath.Base(p), "-"); s < "s04" {
			t.Errorf("%s: an evicted folder's chunk is left", filepath.Base(p))
		}
	}
	for _, s := range want {
		if _, err := c.Get(s, entry(s, 2).Key, nil); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

// TestTreeRecord: an entry's tree Index comes back with it; PutTree
// replaces it alone; a record that is corrupt, truncated, of another
// slot or of an earlier entry of the slot is left out (Tree nil), never
// believed, and the entry itself is still a hit.
func TestTreeRecord(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ix := func(taken int64) *outtree.Index {
		return &outtree.Index{Taken: taken, Files: map[string]outtree.FileStat{
			"ns/k0/deployment.yaml": {Size: 700, Mtime: 1, Ctime: 2, Ino: 3, Dev: 4, Mode: 0o100644},
			"ns/k1/deployment.yaml": {Size: 700, Mtime: 5, Ctime: 6, Ino: 7, Dev: 4, Mode: 0o100644},
		}}
	}
	get := func(slot string, e *Entry) *outtree.Index {
		t.Helper()
		got, err := c.Get(slot, e.Key, nil)
		if err != nil {
			t.Fatalf("%s: %v", slot, err)
		}
		return got.Tree
	}
	same := func(what string, want, got *outtree.Index) {
		t.Helper()
		if want == nil || got == nil {
			if want != got {
				t.Errorf("%s: want %v, got %v", what, want, got)
			}
			return
		}
		if diff := cmp.Diff(want.Files, got.Files); diff != "" || want.Taken != got.Taken {
			t.Errorf("%s: Taken %d, want %d; files -want +got:\n%s", what, got.Taken, want.Taken, diff)
		}
	}
	e := entry("k", 2)
	e.Tree = ix(10)
	if err := c.Put("slot", e); err != nil {
		t.Fatal(err)
	}
	same("after Put", ix(10), get("slot", e))
	if err := c.PutTree("slot", ix(20)); err != nil {
		t.Fatal(err)
	}
	same("after PutTree", ix(20), get("slot", e))
	record := filepath.Join(c.dir, c.tree("slot"))
	good, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}

	// Another slot's record, whole and valid for its own entry.
	o := entry("o", 2)
	o.Tree = ix(30)
	if err := c.Put("other", o); err != nil {
		t.Fatal(err)
	}
	foreign, err := os.ReadFile(filepath.Join(c.dir, c.tree("other")))
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 1
	for _, bad := range []struct {
		name string
		b    []byte
	}{
		{"corrupt", flipped},
		{"truncated", good[:len(good)-1]},
		{"empty", nil},
		{"another slot's", foreign},
	} {
		if err := os.WriteFile(record, bad.b, 0o600); err != nil {
			t.Fatal(err)
		}
		same(bad.name+" record", nil, get("slot", e))
	}

	// A new entry of the slot: the earlier entry's record, put back, is
	// not read for it.
	if err := os.WriteFile(record, good, 0o600); err != nil {
		t.Fatal(err)
	}
	n := entry("k", 3)
	if err := c.Put("slot", n); err != nil {
		t.Fatal(err)
	}
	same("a Put without a record", nil, get("slot", n))
	if err := os.WriteFile(record, good, 0o600); err != nil {
		t.Fatal(err)
	}
	same("the earlier entry's record", nil, get("slot", n))
	if err := c.PutTree("slot", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(record); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("PutTree(nil) left the record: %v", err)
	}
	if err := (&Cache{dir: c.dir}).PutTree("slot", ix(1)); err == nil {
		t.Error("PutTree without an entry read or written succeeded")
	}
}

// TestKeepExecutable: the digest Executable computed is kept by
// KeepExecutable (a render that reused an entry puts nothing), and read
// back instead of hashing again.
func TestKeepExecutable(t *testing.T) {
	dir := t.TempDir()
	c, _ := Open(dir)
	s, err := c.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c.KeepExecutable()
	names, _ := filepath.Glob(filepath.Join(dir, "exe-*"))
	if len(names) != 1 {
		t.Fatalf("%d records of the executable's digest, want 1", len(names))
	}
	// A record says what the next Executable returns: spoil it with
	// another valid digest to see it read, not hashed again.
	other := strings.Repeat("ab", sha256.Size)
	if err := os.WriteFile(names[0], []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	d, _ := Open(dir)
	got, err := d.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%x", got) != other || got == s {
		t.Errorf("Executable did not read the record kept: %x", got)
	}
	d.KeepExecutable() // nothing computed: nothing written
	if b, _ := os.ReadFile(names[0]); string(b) != other {
		t.Error("KeepExecutable wrote a record it did not compute")
	}
}

// spread is an entry of n files in each of folders top folders: a chunk
// each at least.
func spread(key string, folders, n int) *Entry {
	e := entry(key, 0)
	for f := 0; f < folders; f++ {
		for i := 0; i < n; i++ {
			e.Files[fmt.Sprintf("ns%02d/k%d/deployment.yaml", f, i)] = []byte(strings.Repeat(fmt.Sprintf("line %d %d\n", f, i), 20))
		}
	}
	return e
}

// TestPutKeepsChunksRead: a Put after Last (a render whose key changed)
// encodes and hashes only the chunks whose files changed; the others are
// kept by the digest they were read with, and the entry comes back whole.
// The controls: without the read, every chunk is encoded; a chunk read but
// since removed from the folder is written again.
func TestPutKeepsChunksRead(t *testing.T) {
	dir := t.TempDir()
	c, _ := Open(dir)
	old := spread("old", 20, 30)
	if err := c.Put("slot", old); err != nil {
		t.Fatal(err)
	}
	chunks, _ := filepath.Glob(filepath.Join(dir, "slot-*.chunk"))
	if len(chunks) != 20 {
		t.Fatalf("%d chunks, want one a top folder (20)", len(chunks))
	}
	// The next entry: fresh copies of the same bytes (as a render makes
	// them), one file changed, one added.
	next := spread("next", 20, 30)
	next.Files["ns03/k7/deployment.yaml"] = []byte("changed\n")
	next.Files["ns11/k99/service.yaml"] = []byte("added\n")

	for _, tc := range []struct {
		name    string
		read    bool
		remove  string // a chunk removed after the read
		encoded int
	}{
		{name: "read", read: true, encoded: 2},
		{name: "control: not read", read: false, encoded: 20},
		{name: "control: a kept chunk removed", read: true, remove: "ns15/k0/deployment.yaml", encoded: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := Open(dir)
			if err := c.Put("slot", old); err != nil {
				t.Fatal(err)
			}
			c, _ = Open(dir) // another process
			if tc.read {
				if _, err := c.Last("slot", nil); err != nil {
					t.Fatal(err)
				}
			}
			if tc.remove != "" {
				for _, ch := range c.read["slot"].chunks {
					if ch.paths[0] == tc.remove {
						os.Remove(filepath.Join(dir, c.chunk("slot", ch.sum)))
					}
				}
			}
			c.encoded = 0
			if err := c.Put("slot", next); err != nil {
				t.Fatal(err)
			}
			if c.encoded != tc.encoded {
				t.Errorf("%d chunks encoded, want %d", c.encoded, tc.encoded)
			}
			got, err := c.Get("slot", next.Key, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(next.Files, got.Files) {
				t.Error("the entry put after Last does not come back whole")
			}
		})
	}
}

// TestRefs: files held as references to output records come back whole
// through the resolver, and take a few bytes each in the cache; a
// reference the resolver cannot resolve (the record gone, or of another
// size) is a miss, never other bytes.
func TestRefs(t *testing.T) {
	dir := t.TempDir()
	c, _ := Open(dir)
	e := spread("k", 4, 50)
	big := []byte(strings.Repeat("x", 4000))
	records := map[Ref][]byte{}
	e.Refs = map[string]Ref{}
	for p := range e.Files {
		if strings.HasSuffix(p, "0/deployment.yaml") {
			continue // some literal files among the references
		}
		ref := Ref{Key: sha256.Sum256([]byte(p)), Index: 1, Size: len(big)}
		e.Files[p], e.Refs[p], records[ref] = big, ref, big
	}
	if err := c.Put("slot", e); err != nil {
		t.Fatal(err)
	}
	var size int64
	chunks, _ := filepath.Glob(filepath.Join(dir, "slot-*.chunk"))
	for _, ch := range chunks {
		fi, _ := os.Stat(ch)
		size += fi.Size()
	}
	if size > int64(len(e.Files))*200 {
		t.Errorf("the chunks take %d bytes for %d files: the referenced bytes were stored", size, len(e.Files))
	}
	resolve := func(r Ref) ([]byte, bool) { b, ok := records[r]; return b, ok }
	got, err := c.Get("slot", e.Key, resolve)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e.Files, got.Files) || !reflect.DeepEqual(e.Refs, got.Refs) {
		t.Error("the files held as references do not come back whole")
	}
	for name, resolve := range map[string]Resolve{
		"no resolver":   nil,
		"a record gone": func(r Ref) ([]byte, bool) { return nil, false },
		"another size":  func(r Ref) ([]byte, bool) { return big[1:], true },
		"one record gone": func(r Ref) ([]byte, bool) {
			b, ok := records[r]
			return b, ok && r.Key != e.Refs["ns01/k7/deployment.yaml"].Key
		},
	} {
		if _, err := c.Get("slot", e.Key, resolve); !errors.Is(err, ErrMiss) {
			t.Errorf("%s: %v, want ErrMiss", name, err)
		}
	}
}

// cacheFiles is the name and bytes of each file in the cache folder dir.
func cacheFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[de.Name()] = string(b)
	}
	return files
}

// TestPutOrderFromRead: a Put after Last takes the order of its paths
// from the chunks read (no sort) when they give it: the same paths, some
// gone, some added (merged in); the cache folder it leaves is byte for
// byte the one a Put without a read leaves, on one core or several. When
// what was read does not give the order (its files map altered), the
// paths are sorted, to the same bytes.
func TestPutOrderFromRead(t *testing.T) {
	old := spread("old", 20, 30)
	for _, tc := range []struct {
		name   string
		edit   func(e *Entry)
		spoil  func(r entryRead)
		sorted int
	}{
		{name: "one file changed", edit: func(e *Entry) { e.Files["ns03/k7/deployment.yaml"] = []byte("changed\n") }},
		{name: "files gone", edit: func(e *Entry) {
			delete(e.Files, "ns03/k7/deployment.yaml")
			delete(e.Files, "ns19/k29/deployment.yaml")
			delete(e.Files, "ns00/k0/deployment.yaml")
		}},
		{name: "files added", edit: func(e *Entry) {
			for _, p := range []string{"ns11/k99/service.yaml", "ns11/k1/a.yaml", "a/first.yaml", "zz/last.yaml", "ns05/k10/deployment.yaml.bak"} {
				e.Files[p] = []byte(p)
			}
		}},
		{name: "files added and gone", edit: func(e *Entry) {
			delete(e.Files, "ns11/k0/deployment.yaml")
			e.Files["ns11/k0/deployment.yml"] = []byte("renamed\n")
			e.Files["ns12/k3/service.yaml"] = []byte("added\n")
		}},
		{name: "all gone", edit: func(e *Entry) { clear(e.Files) }},
		// What was read, altered: its map names a path its chunks
		// lack, or lacks one they hold.
		{name: "control: the files read name a file added", edit: func(e *Entry) {
			e.Files["ns11/k99/service.yaml"] = []byte("added\n")
		}, spoil: func(r entryRead) { r.files["ns11/k99/service.yaml"] = nil }, sorted: 1},
		{name: "control: the files read lack one held", edit: func(e *Entry) {
			e.Files["ns11/k99/service.yaml"] = []byte("added\n")
		}, spoil: func(r entryRead) { delete(r.files, "ns04/k4/deployment.yaml") }, sorted: 1},
		{name: "control: the files read lack one held and name one added", edit: func(e *Entry) {
			e.Files["ns11/k99/service.yaml"] = []byte("added\n")
		}, spoil: func(r entryRead) {
			delete(r.files, "ns04/k4/deployment.yaml")
			r.files["ns11/k99/service.yaml"] = nil
		}, sorted: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, procs := range []int{1, 4} {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				next := spread("next", 20, 30)
				tc.edit(next)
				want := t.TempDir()
				c, _ := Open(want)
				if err := c.Put("slot", next); err != nil {
					t.Fatal(err)
				}
				if c.sorted != 1 {
					t.Fatalf("a Put without a read: %d sorts, want 1", c.sorted)
				}
				dir := t.TempDir()
				c, _ = Open(dir)
				if err := c.Put("slot", old); err != nil {
					t.Fatal(err)
				}
				c, _ = Open(dir)
				if _, err := c.Last("slot", nil); err != nil {
					t.Fatal(err)
				}
				if tc.spoil != nil {
					tc.spoil(c.read["slot"])
				}
				c.sorted = 0
				if err := c.Put("slot", next); err != nil {
					t.Fatal(err)
				}
				if c.sorted != tc.sorted {
					t.Errorf("%d procs: %d sorts, want %d", procs, c.sorted, tc.sorted)
				}
				if diff := cmp.Diff(cacheFiles(t, want), cacheFiles(t, dir)); diff != "" {
					t.Errorf("%d procs: the cache folder differs from a Put's without a read (-want +got):\n%s", procs, diff)
				}
			}
		})
	}
}

// TestPutKeepsNoChangedRef: a chunk read is kept only when its files
// are the same: a file held as another reference (another record, piece
// or size) with the same bytes, or as bytes instead of a reference, is
// written again, and comes back as put.
func TestPutKeepsNoChangedRef(t *testing.T) {
	big := []byte(strings.Repeat("x", 4000))
	newEntry := func() *Entry {
		e := spread("k", 4, 50)
		e.Refs = map[string]Ref{}
		for p := range e.Files {
			e.Files[p], e.Refs[p] = big, Ref{Key: sha256.Sum256([]byte(p)), Index: 1, Size: len(big)}
		}
		return e
	}
	resolve := func(r Ref) ([]byte, bool) { return big, r.Size == len(big) }
	const p = "ns02/k7/deployment.yaml"
	for name, edit := range map[string]func(e *Entry){
		"another record": func(e *Entry) { e.Refs[p] = Ref{Key: sha256.Sum256([]byte("other")), Index: 1, Size: len(big)} },
		"another piece":  func(e *Entry) { e.Refs[p] = Ref{Key: e.Refs[p].Key, Index: 2, Size: len(big)} },
		"bytes":          func(e *Entry) { delete(e.Refs, p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c, _ := Open(dir)
			if err := c.Put("slot", newEntry()); err != nil {
				t.Fatal(err)
			}
			c, _ = Open(dir)
			if _, err := c.Last("slot", resolve); err != nil {
				t.Fatal(err)
			}
			next := newEntry()
			edit(next)
			c.encoded = 0
			if err := c.Put("slot", next); err != nil {
				t.Fatal(err)
			}
			if c.encoded != 1 {
				t.Errorf("%d chunks written, want 1", c.encoded)
			}
			got, err := c.Get("slot", next.Key, resolve)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(next.Refs, got.Refs) || !reflect.DeepEqual(next.Files, got.Files) {
				t.Error("the entry does not come back as put")
			}
		})
	}
}

// TestGetChunksOutOfOrder: a Put writes the paths of an entry in strict
// order, chunk after chunk; chunks well named and checked whose paths are
// not (a path twice, two swapped, two chunks swapped) are a miss, never
// read as an entry (a Put after it would take their order).
func TestGetChunksOutOfOrder(t *testing.T) {
	file := func(p string) []byte {
		var b bytes.Buffer
		putString(&b, p)
		putInt(&b, literalFile)
		putBytes(&b, []byte("bytes of "+p))
		return b.Bytes()
	}
	chunk := func(paths ...string) []byte {
		var b []byte
		for _, p := range paths {
			b = append(b, file(p)...)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		chunks [][]byte
		miss   bool
	}{
		{name: "control: in order", chunks: [][]byte{chunk("a/1", "a/2"), chunk("b/1", "b/2")}},
		{name: "two paths swapped", chunks: [][]byte{chunk("a/2", "a/1"), chunk("b/1", "b/2")}, miss: true},
		{name: "a path twice", chunks: [][]byte{chunk("a/1", "a/1"), chunk("b/1", "b/2")}, miss: true},
		{name: "two chunks swapped", chunks: [][]byte{chunk("b/1", "b/2"), chunk("a/1", "a/2")}, miss: true},
		{name: "a path in two chunks", chunks: [][]byte{chunk("a/1", "a/2"), chunk("a/2", "b/2")}, miss: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := Open(t.TempDir())
			os.MkdirAll(c.dir, 0o700)
			var sums []Sum
			for _, b := range tc.chunks {
				s := chunkSum(b)
				if err := c.writeFile(c.chunk("slot", s), binary.LittleEndian.AppendUint32(slices.Clone(b), chunkCheck(s, b))); err != nil {
					t.Fatal(err)
				}
				sums = append(sums, s)
			}
			e := entry("k", 0)
			if err := c.writeFile(c.index("slot"), encodeIndex(e, sums)); err != nil {
				t.Fatal(err)
			}
			_, err := c.Last("slot", nil)
			if tc.miss != errors.Is(err, ErrMiss) {
				t.Errorf("Last: %v, want a miss: %v", err, tc.miss)
			}
		})
	}
}

// TestPutRefOf: a Put that asks RefOf which files are references (on
// every core) leaves the cache folder byte for byte as a Put given the
// same answers as Refs, with a read before it or not.
func TestPutRefOf(t *testing.T) {
	for _, read := range []bool{false, true} {
		put := func(asked bool) map[string]string {
			dir := t.TempDir()
			c, _ := Open(dir)
			e, recs := treeEntry(200, false)
			if read {
				if err := c.Put("slot", e); err != nil {
					t.Fatal(err)
				}
				c, _ = Open(dir)
				if _, err := c.Last("slot", resolveFrom(recs)); err != nil {
					t.Fatal(err)
				}
				e, _ = treeEntry(200, true)
			}
			if asked {
				refs := e.Refs
				e.Refs = nil
				var calls atomic.Int64
				e.RefOf = func(p string, b []byte) (Ref, bool) {
					calls.Add(1)
					r, ok := refs[p]
					return r, ok
				}
				defer func() {
					if calls.Load() < int64(len(e.Files)) {
						t.Errorf("RefOf asked of %d files, want every one of %d", calls.Load(), len(e.Files))
					}
				}()
			}
			if err := c.Put("slot", e); err != nil {
				t.Fatal(err)
			}
			return cacheFiles(t, dir)
		}
		if diff := cmp.Diff(put(false), put(true)); diff != "" {
			t.Errorf("read before: %v: -Refs +RefOf:\n%s", read, diff)
		}
	}
}
