// Package treecache keeps the last tree rendered into each output folder,
// outside the tree (the user's cache folder), by a digest of everything
// that decides it, so that `render -o DIR` and `check` of unchanged inputs
// need not render again.
//
// What is on disk is hostile input: every file is read through
// internal/fsroot (regular files only, no FIFO hang, fsroot.MaxFileSize),
// an entry's index carries its own SHA-256 and the key it was stored
// under, and each chunk of files is named by the SHA-256 of its content.
// A missing, truncated, corrupt or foreign entry is a miss (ErrMiss): it
// costs a full render, never a wrong tree.
//
// The door decides the key (cmd/wavesmith: the inputs' paths and bytes,
// the settings, the Helm lock, the executable's content hash); an entry
// adds what the key cannot hold because it is known only after decoding:
// the digests of the files and folders specs read (Sources) and the reads
// of the previous tree the GitOps engines made (Previous, see Recorder),
// which the door checks again before it reuses the entry. Beside the
// entry, each slot keeps the per-spec output records of its last render
// (outputs.go), read whatever the key; the entry holds the tree's objects
// as references to them (Refs), resolved when its files are read.
//
// An entry may also hold the outtree.Index of the tree on disk (Tree: the
// lstat identity of each file when the tree was last written or checked,
// paired with Files), kept in a file of its own bound to the entry's
// index by digest, so that the tree's files need not be read again to be
// compared. PutTree replaces it alone. A record that is missing, corrupt
// or of another entry is left out (Tree nil): every file is then read.
package treecache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
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

// Env names the cache folder ("off" disables the cache); without it, the
// cache lives in os.UserCacheDir()/wavesmith/trees.
const Env = "WAVESMITH_CACHE_DIR"

// ErrMiss: no usable entry (none, or one that is corrupt, truncated, of
// another key or another format).
var ErrMiss = errors.New("tree cache miss")

// Sum is a SHA-256 digest.
type Sum = [sha256.Size]byte

// Entry is one cached render of a tree.
type Entry struct {
	Key      Sum
	Sources  map[string]Sum // absolute path -> digest (render.SourceDigests)
	Previous []Op           // reads of the previous tree (Recorder)
	Warnings []string       // as printed, one per line
	Objects  int
	Specs    int
	Files    map[string][]byte
	// Tree is the Index of the tree on disk as it was last written or
	// checked, its files holding Files' bytes; nil when unknown.
	Tree *outtree.Index
	// Refs are the files the entry holds as pieces of the slot's output
	// records (PutOutputs) instead of bytes: a tree's objects are the
	// records' bytes, which the cache then keeps once. Their bytes are in
	// Files too. A Put asks RefOf instead when it is set (on every core:
	// it must be safe for concurrent use), so that a caller that knows
	// the pieces by their bytes makes no map of them; a read fills Refs.
	Refs  map[string]Ref
	RefOf func(path string, b []byte) (Ref, bool)
	// chunks names the chunks of Files (Head: Files not yet read).
	chunks []Sum
}

// Ref names a file's bytes in the slot's output records: the record's
// key, the piece's index in it and its size (render.Piece).
type Ref struct {
	Key   Sum
	Index int
	Size  int
}

// Resolve returns the bytes a Ref names, from the output records read
// with the entry (GetOutputs); false when the records lack them.
type Resolve func(Ref) ([]byte, bool)

// Dir returns the cache folder getenv and the platform decide, and false
// when the cache is off.
func Dir(getenv func(string) string) (string, bool) {
	switch v := getenv(Env); v {
	case "off":
		return "", false
	case "":
		d, err := os.UserCacheDir()
		if err != nil {
			return "", false
		}
		return filepath.Join(d, "wavesmith", "trees"), true
	default:
		abs, err := filepath.Abs(v)
		return abs, err == nil
	}
}

// Cache is a cache folder. Nothing is written to it but by Put: a render
// that fails leaves no trace.
type Cache struct {
	dir string
	// exe is the record of the executable's digest Executable computed,
	// written by the next Put.
	exe struct{ name, hex string }
	// indexes holds the digest of the index file each slot's entry was
	// last read (Get) or written (Put) with: PutTree binds its record to
	// it.
	indexes map[string]Sum
	// read is what Get or Last read of each slot's entry, and outs what
	// GetOutputs read of its records: the chunks the next Put or
	// PutOutputs keeps, unhashed, where they hold the same files or
	// records.
	read map[string]entryRead
	outs map[string][]outputsRead
	// encoded counts the chunks hashed (and written unless the folder
	// has them) by Put and PutOutputs; sorted counts the Puts that sorted
	// the entry's paths, not having them in order from the chunks read
	// (tests).
	encoded, sorted int
}

// entryRead is an entry's chunks as read, and its files. The paths of
// the chunks are in strict order, chunk after chunk, as Put writes them
// (readFiles checks it; order relies on it).
type entryRead struct {
	chunks []chunkRead
	files  map[string][]byte
}

// chunkRead is a chunk as read: its digest, its bytes (without their
// check) and the paths of its files in order.
type chunkRead struct {
	sum   Sum
	raw   []byte
	paths []string
}

// readChunks reads the chunks sums (tens of megabytes for a big tree) on
// every core, each checked against its name by the check it ends with
// (chunkCheck): a spoiled one is removed, so that the next Put writes it
// again instead of keeping it by its name, and the read is a miss. each,
// unless nil, is called with each chunk's index and bytes on the core
// that read it; its error is a miss too.
//
// The chunks are mapped, not copied (fsroot.Root.MapFile: on Linux their
// bytes are the page cache's, which the last render's writes left there,
// instead of as much fresh memory, which on a virtual machine whose host
// takes back free memory costs more than reading them): the cache never
// writes a file in place (writeFile puts a new file in the name), so a
// chunk mapped is never cut short under a render that holds its bytes.
// Cut short by someone else, it faults that render as a kill would; the
// cache trusts its folder as much as the binary (docs/tree.md).
func (c *Cache) readChunks(r *fsroot.Root, sums []Sum, name func(Sum) string, each func(int, []byte) error) ([][]byte, error) {
	bufs := make([][]byte, len(sums))
	errs := make([]error, len(sums))
	k := min(runtime.GOMAXPROCS(0), len(sums))
	parallel.Do(k, func(w int) {
		for i := w; i < len(sums); i += k {
			n := name(sums[i])
			b, err := r.MapFile(filepath.Join(c.dir, n))
			if err == nil {
				var ok bool
				if b, ok = checkedChunk(sums[i], b); !ok {
					_ = os.Remove(filepath.Join(c.dir, n))
					err = fmt.Errorf("%s: its content does not match its name", n)
				} else if each != nil {
					if err = each(i, b); err != nil {
						err = fmt.Errorf("%s: %w", n, err)
					}
				}
			}
			bufs[i], errs[i] = b, err
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMiss, err)
		}
	}
	return bufs, nil
}

// A chunk file is its bytes and a check of them: the CRC-32C of its name's
// digest and its bytes (4 bytes, little-endian). Its name is the SHA-256
// of chunkTag and the bytes, taken once, when it is written: a read
// checks the CRC, twenty times cheaper than the digest over the tens of
// megabytes a big tree's records hold, and as sure to find a spoiled
// file, one cut short or one put in the place of another. (The cache
// folder is the user's, mode 0700: what guards it is the file system,
// not a digest anyone who can write there could make as well.)
const chunkTag = "wavesmith cache chunk v3\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// chunkSum is the digest that names a chunk of bytes b.
func chunkSum(b []byte) Sum {
	h := sha256.New()
	h.Write([]byte(chunkTag))
	h.Write(b)
	var s Sum
	h.Sum(s[:0])
	return s
}

// chunkCheck is the check a chunk file named by s ends with.
func chunkCheck(s Sum, b []byte) uint32 {
	return crc32.Update(crc32.Checksum(s[:], castagnoli), castagnoli, b)
}

// checkedChunk returns the bytes of the chunk file f named by s, or false
// when its check does not hold.
func checkedChunk(s Sum, f []byte) ([]byte, bool) {
	n := len(f) - 4
	if n < 0 || binary.LittleEndian.Uint32(f[n:]) != chunkCheck(s, f[:n]) {
		return nil, false
	}
	return f[:n:n], true
}

// Open returns the cache folder dir; Put makes it (mode 0700) when
// missing.
func Open(dir string) (*Cache, error) {
	return &Cache{dir: dir}, nil
}

// Slot names the entry of the tree at the absolute path dir: one entry
// per output folder, replaced by each render, so the cache does not grow
// with renders.
func Slot(dir string) string {
	s := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(s[:16])
}

const (
	magic     = "wavesmith tree cache v3\n"
	chunkSize = 4 << 20 // bytes of files per chunk, well below fsroot.MaxFileSize
)

func (c *Cache) index(slot string) string { return slot + ".idx" }
func (c *Cache) tree(slot string) string  { return slot + ".tree" }
func (c *Cache) chunk(slot string, s Sum) string {
	return slot + "-" + hex.EncodeToString(s[:]) + ".chunk"
}

// Get returns the entry of slot stored under key, verified, its files
// held as references resolved by resolve; an error wrapping ErrMiss when
// there is none that is whole and of key, or a reference resolve cannot
// resolve.
func (c *Cache) Get(slot string, key Sum, resolve Resolve) (*Entry, error) {
	return c.get(slot, &key, resolve)
}

// Head is Get without the files (Files nil): the index and the record of
// the tree on disk (Tree), a few kilobytes where the files are tens of
// megabytes, for a caller that may not need them (outtree.Intact); then
// ReadFiles reads them.
func (c *Cache) Head(slot string, key Sum) (*Entry, error) {
	r, err := fsroot.OpenRoot(c.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMiss, err)
	}
	defer r.Close()
	return c.head(r, slot, &key)
}

// ReadFiles reads the files of e, an entry of slot from Head, verified
// as Get verifies them; an error wrapping ErrMiss when they are not
// whole.
func (c *Cache) ReadFiles(slot string, e *Entry, resolve Resolve) error {
	r, err := fsroot.OpenRoot(c.dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMiss, err)
	}
	defer r.Close()
	return c.readFiles(r, slot, e, resolve)
}

// Last returns the entry of slot whatever its key, verified as Get
// verifies it: what a render whose key changed knows of the tree it
// rewrites (its Tree and Files: outtree.Known), and whose chunks the
// next Put of slot keeps where their files did not change, instead of
// hashing and writing them again, and whose order of paths it takes
// instead of sorting them.
func (c *Cache) Last(slot string, resolve Resolve) (*Entry, error) {
	return c.get(slot, nil, resolve)
}

// get is Get, of any key when key is nil.
func (c *Cache) get(slot string, key *Sum, resolve Resolve) (*Entry, error) {
	r, err := fsroot.OpenRoot(c.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMiss, err)
	}
	defer r.Close()
	e, err := c.head(r, slot, key)
	if err != nil {
		return nil, err
	}
	if err := c.readFiles(r, slot, e, resolve); err != nil {
		return nil, err
	}
	return e, nil
}

// head reads the index of slot, of any key when key is nil, and the
// record of its tree.
func (c *Cache) head(r *fsroot.Root, slot string, key *Sum) (*Entry, error) {
	b, err := r.ReadFile(filepath.Join(c.dir, c.index(slot)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMiss, err)
	}
	e, chunks, err := decodeIndex(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMiss, c.index(slot), err)
	}
	if key != nil && e.Key != *key {
		return nil, fmt.Errorf("%w: another key", ErrMiss)
	}
	idx := sha256.Sum256(b)
	e.chunks = chunks
	c.bind(slot, idx)
	// The record of the tree's files (megabytes at 45,000 files) is
	// mapped as the chunks are (readChunks); its decoding copies what it
	// keeps.
	if b, err := r.MapFile(filepath.Join(c.dir, c.tree(slot))); err == nil {
		e.Tree = decodeTree(b, idx)
	}
	return e, nil
}

// readFiles reads the chunks of e, an entry of slot from head. Each
// chunk's form is checked and its files counted as it is read, so that
// the maps are made at their size (no growing and rehashing tens of
// thousands of paths); the paths of a chunk are cut from one string. The
// files held as references are resolved last, once all else is done:
// resolve may wait (for the render whose pieces it gives).
func (c *Cache) readFiles(r *fsroot.Root, slot string, e *Entry, resolve Resolve) error {
	counts := make([]chunkCount, len(e.chunks))
	bufs, err := c.readChunks(r, e.chunks, func(s Sum) string { return c.chunk(slot, s) }, func(i int, b []byte) error {
		var err error
		counts[i], err = countChunk(b)
		return err
	})
	if err != nil {
		return err
	}
	nfiles, nrefs := 0, 0
	for i, n := range counts {
		if i > 0 && bytes.Compare(n.first, counts[i-1].last) <= 0 {
			return fmt.Errorf("%w: %s: %q after %q: the paths are not in order", ErrMiss, c.chunk(slot, e.chunks[i]), n.first, counts[i-1].last)
		}
		nfiles += n.files
		nrefs += n.refs
	}
	files := make(map[string][]byte, nfiles)
	var refs map[string]Ref
	if nrefs > 0 {
		refs = make(map[string]Ref, nrefs)
	}
	read := make([]chunkRead, len(bufs))
	for i, b := range bufs {
		read[i] = chunkRead{sum: e.chunks[i], raw: b, paths: decodeChunk(b, counts[i], files, refs)}
	}
	for _, ch := range read {
		if err := resolveChunk(ch.raw, ch.paths, files, resolve); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrMiss, c.chunk(slot, ch.sum), err)
		}
	}
	e.Files, e.Refs = files, refs
	if c.read == nil {
		c.read = map[string]entryRead{}
	}
	c.read[slot] = entryRead{chunks: read, files: files}
	return nil
}

func (c *Cache) bind(slot string, idx Sum) {
	if c.indexes == nil {
		c.indexes = map[string]Sum{}
	}
	c.indexes[slot] = idx
}

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

const treeMagic = "wavesmith tree cache tree v1\n"

// encodeTree is the record of ix for the entry whose index file has the
// digest idx: magic, idx, ix, and the SHA-256 of all that.
func encodeTree(ix *outtree.Index, idx Sum) ([]byte, error) {
	body, err := ix.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return treeRecord(body, idx), nil
}

// treeRecord is the record of an Index encoded as body.
func treeRecord(body []byte, idx Sum) []byte {
	b := make([]byte, 0, len(treeMagic)+2*sha256.Size+len(body))
	b = append(b, treeMagic...)
	b = append(b, idx[:]...)
	b = append(b, body...)
	s := sha256.Sum256(b)
	return append(b, s[:]...)
}

// decodeTree is the Index a record b holds when it is whole and of the
// entry whose index file has the digest idx; nil otherwise.
func decodeTree(b []byte, idx Sum) *outtree.Index {
	n := len(treeMagic) + sha256.Size
	if len(b) < n+sha256.Size || string(b[:len(treeMagic)]) != treeMagic {
		return nil
	}
	body, tail := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], tail) || !bytes.Equal(body[len(treeMagic):n], idx[:]) {
		return nil
	}
	ix := &outtree.Index{}
	if err := ix.UnmarshalBinary(body[n:]); err != nil {
		return nil
	}
	return ix
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

func putBytes(b *bytes.Buffer, s []byte) {
	var n [binary.MaxVarintLen64]byte
	b.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	b.Write(s)
}

func putString(b *bytes.Buffer, s string) {
	var n [binary.MaxVarintLen64]byte
	b.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	b.WriteString(s)
}

func putInt(b *bytes.Buffer, v int) {
	var n [binary.MaxVarintLen64]byte
	b.Write(n[:binary.PutUvarint(n[:], uint64(v))])
}

// reader reads what putBytes and putInt wrote, failing on anything short
// or too long.
type reader struct {
	b   []byte
	err error
}

func (r *reader) int() int {
	if r.err != nil {
		return 0
	}
	if len(r.b) > 0 && r.b[0] < 0x80 {
		v := r.b[0] // one byte: most lengths and kinds
		r.b = r.b[1:]
		return int(v)
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b))+1<<20 {
		r.err = errors.New("truncated or corrupt")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *reader) bytes() []byte {
	n := r.int()
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) sum() Sum {
	var s Sum
	b := r.bytes()
	if r.err == nil && len(b) != len(s) {
		r.err = errors.New("corrupt digest")
	}
	copy(s[:], b)
	return s
}

func encodeIndex(e *Entry, chunks []Sum) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	putBytes(&b, e.Key[:])
	sources := make([]string, 0, len(e.Sources))
	for p := range e.Sources {
		sources = append(sources, p)
	}
	sort.Strings(sources)
	putInt(&b, len(sources))
	for _, p := range sources {
		s := e.Sources[p]
		putBytes(&b, []byte(p))
		putBytes(&b, s[:])
	}
	putInt(&b, len(e.Previous))
	for _, op := range e.Previous {
		putBytes(&b, []byte(op.Kind))
		putBytes(&b, []byte(op.Name))
		putBytes(&b, op.Sum[:])
	}
	putInt(&b, len(e.Warnings))
	for _, w := range e.Warnings {
		putBytes(&b, []byte(w))
	}
	putInt(&b, e.Objects)
	putInt(&b, e.Specs)
	putInt(&b, len(chunks))
	for _, s := range chunks {
		putBytes(&b, s[:])
	}
	s := sha256.Sum256(b.Bytes())
	b.Write(s[:])
	return b.Bytes()
}

func decodeIndex(b []byte) (*Entry, []Sum, error) {
	if len(b) < len(magic)+sha256.Size || string(b[:len(magic)]) != magic {
		return nil, nil, errors.New("not an index of this format")
	}
	body, tail := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], tail) {
		return nil, nil, errors.New("its digest does not match: truncated or corrupt")
	}
	r := &reader{b: body[len(magic):]}
	e := &Entry{Key: r.sum(), Sources: map[string]Sum{}}
	for n := r.int(); n > 0 && r.err == nil; n-- {
		p := string(r.bytes())
		e.Sources[p] = r.sum()
	}
	for n := r.int(); n > 0 && r.err == nil; n-- {
		e.Previous = append(e.Previous, Op{Kind: string(r.bytes()), Name: string(r.bytes()), Sum: r.sum()})
	}
	for n := r.int(); n > 0 && r.err == nil; n-- {
		e.Warnings = append(e.Warnings, string(r.bytes()))
	}
	e.Objects, e.Specs = r.int(), r.int()
	var chunks []Sum
	for n := r.int(); n > 0 && r.err == nil; n-- {
		chunks = append(chunks, r.sum())
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	return e, chunks, r.err
}

// How a chunk holds a file: its bytes, or a Ref.
const (
	literalFile = 0
	refFile     = 1
)

// chunkCount is what countChunk finds in a chunk: its files, those held
// as references, the bytes of their paths, its first and last path.
type chunkCount struct {
	files, refs, pathBytes int
	first, last            []byte
}

// countChunk walks the chunk b as decodeChunk does, and fails where it
// would, but for references resolve cannot resolve; and where the paths
// are not in strict order, as a Put writes them (a path twice is not an
// entry's).
func countChunk(b []byte) (chunkCount, error) {
	var n chunkCount
	r := &reader{b: b}
	for len(r.b) > 0 && r.err == nil {
		p := r.bytes()
		switch kind := r.int(); {
		case r.err != nil:
		case n.files > 0 && bytes.Compare(p, n.last) <= 0:
			r.err = fmt.Errorf("%q after %q: the paths are not in order", p, n.last)
		case kind == literalFile:
			r.bytes()
		case kind == refFile:
			r.sum()
			r.int()
			r.int()
			n.refs++
		default:
			r.err = errors.New("corrupt file kind")
		}
		if n.files == 0 {
			n.first = p
		}
		n.last = p
		n.files++
		n.pathBytes += len(p)
	}
	if r.err == nil && n.files == 0 {
		r.err = errors.New("empty chunk")
	}
	return n, r.err
}

// decodeChunk adds the files of the chunk b, whose form countChunk
// checked and whose count it gave (n), to files, those held as
// references to refs (their bytes are added by resolveChunk); it returns
// their paths in order, cut from one string. Literal files' bytes are
// b's.
func decodeChunk(b []byte, n chunkCount, files map[string][]byte, refs map[string]Ref) []string {
	r := &reader{b: b}
	paths := make([]string, 0, n.files)
	var all strings.Builder
	all.Grow(n.pathBytes)
	for len(r.b) > 0 {
		// The paths are written one after the other in all, which never
		// changes the bytes of a string it returned.
		start := all.Len()
		all.Write(r.bytes())
		p := all.String()[start:]
		if r.int() == literalFile {
			files[p] = r.bytes()
		} else {
			refs[p] = Ref{Key: r.sum(), Index: r.int(), Size: r.int()}
		}
		paths = append(paths, p)
	}
	return paths
}

// resolveChunk adds the bytes of the files the chunk b holds as
// references to files, from resolve; paths are the chunk's
// (decodeChunk). A reference resolve cannot resolve, or to bytes of
// another size, is an error.
func resolveChunk(b []byte, paths []string, files map[string][]byte, resolve Resolve) error {
	r := &reader{b: b}
	for _, p := range paths {
		r.bytes()
		if r.int() == literalFile {
			r.bytes()
			continue
		}
		ref := Ref{Key: r.sum(), Index: r.int(), Size: r.int()}
		var f []byte
		ok := resolve != nil
		if ok {
			f, ok = resolve(ref)
		}
		if !ok || len(f) != ref.Size {
			return fmt.Errorf("%s: its bytes are not in the output records", p)
		}
		files[p] = f
	}
	return nil
}
