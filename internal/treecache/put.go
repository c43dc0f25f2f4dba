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
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/internal/parallel"
)

// PutTree replaces the Index of the tree of the entry of slot this Cache
// last read (Get) or wrote (Put) with ix, whose files hold that entry's
// Files (nil removes it). The record names the entry's index by digest:
// once another entry is put, it is not read back.
func (c *Cache) PutTree(slot string, ix *outtree.Index) error {
	idx, ok := c.indexes[slot]
	if !ok {
		return fmt.Errorf("%s: no entry read or written", slot)
	}
	if ix == nil {
		if err := os.Remove(filepath.Join(c.dir, c.tree(slot))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := encodeTree(ix, idx)
	if err != nil {
		return err
	}
	return c.writeFile(c.tree(slot), b)
}

// Put stores e as the entry of slot, replacing the one before: chunks
// first (those already there with the same content are kept), then the
// index (each written aside and renamed), then the previous entry's
// other chunks are removed. A reader racing a Put sees the old
// entry, the new one, or a miss.
func (c *Cache) Put(slot string, e *Entry) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	if c.exe.name != "" {
		_ = c.writeFile(c.exe.name, []byte(c.exe.hex))
	}
	// The Index of the tree is encoded meanwhile, on another core: it
	// needs nothing of the chunks, and costs as much as they do. Put
	// returns once it is done, whatever happens.
	var tree []byte
	var treeErr error
	encoded := make(chan struct{})
	go func() {
		defer close(encoded)
		if e.Tree != nil {
			tree, treeErr = e.Tree.MarshalBinary()
		}
	}()
	defer func() { <-encoded }()
	prev := c.read[slot]
	files := c.order(e, prev)
	w := c.chunks(func(s Sum) string { return c.chunk(slot, s) })
	// The chunks the entry last read of slot had, by their first path.
	byFirst := make(map[string]int, len(prev.chunks))
	for i, ch := range prev.chunks {
		byFirst[ch.paths[0]] = i
	}
	// end ends the chunk encoded in w.buf, whose first file is first: a
	// chunk read with the same bytes (the same files in the same order,
	// a reference for a reference) is kept by the digest it was read
	// with, when the folder still has it, instead of being hashed again.
	end := func(first string) error {
		if w.buf.Len() == 0 {
			return nil
		}
		if i, ok := byFirst[first]; ok && bytes.Equal(prev.chunks[i].raw, w.buf.Bytes()) && w.kept(prev.chunks[i].sum) {
			w.buf.Reset()
			return nil
		}
		return w.flush()
	}
	top, first := "", ""
	size := 0
	for i := range files {
		f := &files[i]
		p, b := f.path, f.bytes
		if len(b)+len(p)+20 > fsroot.MaxFileSize {
			return fmt.Errorf("%s: %d bytes, too large to cache", p, len(b))
		}
		// A chunk ends with its top folder (a namespace of specs, _flux)
		// or at chunkSize, so that a change elsewhere leaves it as it was.
		dir, _, _ := strings.Cut(p, "/")
		if f.isRef {
			b = nil // 40 bytes at most, counted below
		}
		if size+len(b)+len(p)+20 > chunkSize || dir != top {
			if err := end(first); err != nil {
				return err
			}
			size = 0
		}
		if w.buf.Len() == 0 {
			first = p
		}
		top = dir
		putString(&w.buf, p)
		if f.isRef {
			putInt(&w.buf, refFile)
			putBytes(&w.buf, f.ref.Key[:])
			putInt(&w.buf, f.ref.Index)
			putInt(&w.buf, f.ref.Size)
		} else {
			putInt(&w.buf, literalFile)
			putBytes(&w.buf, b)
		}
		size += len(p) + len(b) + 64 // the lengths, a kind, a reference: far less
	}
	if err := end(first); err != nil {
		return err
	}
	if <-encoded; treeErr != nil {
		return treeErr
	}
	// The entry's tree record goes first: until the index is renamed in,
	// it names another index and is not read.
	index := encodeIndex(e, w.sums)
	idx := sha256.Sum256(index)
	if e.Tree != nil {
		if err := c.writeFile(c.tree(slot), treeRecord(tree, idx)); err != nil {
			return err
		}
	} else if err := os.Remove(filepath.Join(c.dir, c.tree(slot))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := c.writeFile(c.index(slot), index); err != nil {
		return err
	}
	c.bind(slot, idx)
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	for _, de := range entries {
		n := de.Name()
		if strings.HasPrefix(n, slot+"-") && strings.HasSuffix(n, ".chunk") && !w.keep[n] {
			_ = os.Remove(filepath.Join(c.dir, n))
		}
	}
	c.evict(slot, entries)
	return nil
}

// file is a file of an entry as a Put writes it.
type file struct {
	path  string
	bytes []byte
	ref   Ref
	isRef bool // ref names its bytes
	in    bool // (orderRead) the entry has it
}

// order returns the files of e in the order of their paths, as a Put
// writes them. Those of the chunks prev read of the slot come in that
// order already: a lookup a path (on every core) where sorting tens of
// thousands costs several times more. The paths the chunks held that e
// lacks are left out; those e holds that they lacked, sorted, are merged
// in. Unless that gives exactly the paths of e, each once, they are
// sorted as they would be without a read: the same bytes either way.
func (c *Cache) order(e *Entry, prev entryRead) []file {
	if files, ok := orderRead(e, prev); ok {
		return files
	}
	c.sorted++
	paths := make([]string, 0, len(e.Files))
	for p := range e.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	files := make([]file, len(paths))
	for i, p := range paths {
		files[i] = fileOf(e, p)
	}
	return files
}

func fileOf(e *Entry, p string) file {
	b := e.Files[p]
	ref, isRef := e.ref(p, b)
	return file{path: p, bytes: b, ref: ref, isRef: isRef}
}

// ref tells whether the file p holding b is a reference, and to what
// (RefOf, or Refs).
func (e *Entry) ref(p string, b []byte) (Ref, bool) {
	if e.RefOf != nil {
		return e.RefOf(p, b)
	}
	r, ok := e.Refs[p]
	return r, ok
}

// orderRead is order from the chunks read, false when they do not give
// it. Their paths are in strict order (readFiles checks it).
func orderRead(e *Entry, prev entryRead) ([]file, bool) {
	if len(prev.chunks) == 0 {
		return nil, false
	}
	// Each chunk's files at the place of its paths among all; those e
	// lacks (in false) are left out at the end.
	at := make([]int, len(prev.chunks)+1)
	for i, ch := range prev.chunks {
		at[i+1] = at[i] + len(ch.paths)
	}
	files := make([]file, at[len(prev.chunks)])
	found := make([]int, len(prev.chunks))
	k := min(runtime.GOMAXPROCS(0), len(prev.chunks))
	parallel.Do(k, func(w int) {
		for i := w; i < len(prev.chunks); i += k {
			for j, p := range prev.chunks[i].paths {
				if b, ok := e.Files[p]; ok {
					ref, isRef := e.ref(p, b)
					files[at[i]+j] = file{path: p, bytes: b, ref: ref, isRef: isRef, in: true}
					found[i]++
				}
			}
		}
	})
	n := 0
	for _, f := range found {
		n += f
	}
	if n < len(files) {
		files = slices.DeleteFunc(files, func(f file) bool { return !f.in })
	}
	if n == len(e.Files) {
		// n paths of e, each once: all of them.
		return files, true
	}
	// The files the chunks did not hold. prev.files is but a hint (the
	// map Last returned, which its caller may have changed): a path it
	// holds wrongly is found missing or twice below.
	added := make([]string, 0, len(e.Files)-n)
	for p := range e.Files {
		if _, ok := prev.files[p]; !ok {
			added = append(added, p)
		}
	}
	if n+len(added) != len(e.Files) {
		return nil, false
	}
	slices.Sort(added)
	merged := make([]file, 0, len(e.Files))
	i := 0
	for _, p := range added {
		for i < n && files[i].path < p {
			merged = append(merged, files[i])
			i++
		}
		if i < n && files[i].path == p {
			return nil, false // held by the chunks after all
		}
		merged = append(merged, fileOf(e, p))
	}
	return append(merged, files[i:]...), true
}

// MaxSlots is how many output folders keep an entry: a Put removes the
// entries of all but the MaxSlots-1 other folders written last (by their
// index's modification time), so the cache stays bounded however many
// folders are rendered into (scratch folders, tests' temporary ones). An
// evicted folder costs one full render the next time.
const MaxSlots = 16

// evict removes the entries beyond MaxSlots, never slot's; entries is the
// cache folder's listing.
func (c *Cache) evict(slot string, entries []os.DirEntry) {
	type used struct {
		slot string
		mod  time.Time
	}
	var others []used
	for _, de := range entries {
		s, ok := strings.CutSuffix(de.Name(), ".idx")
		if !ok || s == slot || !de.Type().IsRegular() {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		others = append(others, used{s, fi.ModTime()})
	}
	if len(others) < MaxSlots {
		return
	}
	sort.Slice(others, func(i, j int) bool {
		if !others[i].mod.Equal(others[j].mod) {
			return others[i].mod.After(others[j].mod)
		}
		return others[i].slot < others[j].slot
	})
	gone := map[string]bool{}
	for _, u := range others[MaxSlots-1:] {
		gone[u.slot] = true
		// The index first: a reader then misses instead of finding chunks
		// gone.
		_ = os.Remove(filepath.Join(c.dir, c.index(u.slot)))
		_ = os.Remove(filepath.Join(c.dir, c.outputsIndex(u.slot)))
		_ = os.Remove(filepath.Join(c.dir, c.tree(u.slot)))
	}
	for _, de := range entries {
		if s, _, ok := strings.Cut(de.Name(), "-"); ok && gone[s] && (strings.HasSuffix(de.Name(), ".chunk") || strings.HasSuffix(de.Name(), ".outchunk")) {
			_ = os.Remove(filepath.Join(c.dir, de.Name()))
		}
	}
}

// chunkWriter writes the chunks of an entry or of output records: each
// named (name) by the SHA-256 of its content, and written only when the
// cache folder lacks it (Get and GetOutputs check a chunk against its
// name and remove a spoiled one).
type chunkWriter struct {
	c    *Cache
	name func(Sum) string
	have map[string]bool
	keep map[string]bool // the names of the chunks written or kept
	sums []Sum
	buf  bytes.Buffer
}

func (c *Cache) chunks(name func(Sum) string) *chunkWriter {
	return &chunkWriter{c: c, name: name, have: c.listing(), keep: map[string]bool{}}
}

// kept keeps the chunk whose content has the digest s, known without
// hashing it, when the cache folder has it: false when it must be
// written.
func (w *chunkWriter) kept(s Sum) bool {
	name := w.name(s)
	if !w.have[name] {
		return false
	}
	w.sums = append(w.sums, s)
	w.keep[name] = true
	return true
}

// flush ends the chunk in buf, if any.
func (w *chunkWriter) flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	s := chunkSum(w.buf.Bytes())
	w.buf.Write(binary.LittleEndian.AppendUint32(nil, chunkCheck(s, w.buf.Bytes())))
	w.c.encoded++
	w.sums = append(w.sums, s)
	name := w.name(s)
	w.keep[name] = true
	var err error
	if !w.have[name] {
		err = w.c.writeFile(name, w.buf.Bytes())
	}
	w.buf.Reset()
	return err
}

// writeFile writes name in the cache folder atomically: a new file,
// renamed into place, never the old one written in place (its pages may
// be mapped by a render: readChunks).
func (c *Cache) writeFile(name string, b []byte) error {
	f, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(c.dir, name))
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
