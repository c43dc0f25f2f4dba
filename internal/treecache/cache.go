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
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

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
