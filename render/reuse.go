package render

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wavesmith/wavesmith/internal/keyhash"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// Memo keeps what generators return, by a digest of everything that
// decides it, for the renders that share it (Options.Reuse): a spec whose
// digest a render finds is not generated again. wavesmith review passes
// one Memo to the renders of both revisions, so a spec unchanged between
// them is generated once.
//
// The digest (reuseKey) covers the spec's canonical bytes and its source
// (file, document, line); the path and bytes of every file under every
// file and folder it reads (generators.Reader); the files every spec may
// read (NewMemo's files: the Helm lock); every generator option
// (platform, Kubernetes version, API versions, root, the spec's base
// wave, the scope table); the generator's type; and the build of the
// running binary (its module version and every dependency's version and
// sum, runtime/debug.ReadBuildInfo). A spec whose reads cannot all be
// hashed (a file outside the root, too large, not regular) is generated
// as without a Memo. Errors are never kept. Only generating is reused:
// decoration, waves, validation and encoding run as always, so a render
// with a Memo writes the same bytes as one without.
//
// Results are deep-copied in and out: no render changes what another
// reads. A Memo is safe for concurrent use and lives in memory.
type Memo struct {
	files        []string
	mu           sync.Mutex
	m            map[[sha256.Size]byte]generators.Result
	hits, misses atomic.Int64
}

// NewMemo returns an empty Memo. files are paths relative to a render's
// root that generators read for any spec, whatever it names (wavesmith's:
// the Helm lock, helm.LockFile): their bytes, or their absence, are part
// of every digest.
func NewMemo(files ...string) *Memo {
	return &Memo{files: slices.Clone(files), m: map[[sha256.Size]byte]generators.Result{}}
}

// Stats returns how many specs were reused (hits) and generated with
// their result kept (misses) so far.
func (m *Memo) Stats() (hits, misses int) {
	return int(m.hits.Load()), int(m.misses.Load())
}

func (m *Memo) get(k [sha256.Size]byte) (generators.Result, bool) {
	m.mu.Lock()
	r, ok := m.m[k]
	m.mu.Unlock()
	if !ok {
		return generators.Result{}, false
	}
	m.hits.Add(1)
	return copyResult(r), true
}

func (m *Memo) put(k [sha256.Size]byte, r generators.Result) {
	c := copyResult(r)
	m.mu.Lock()
	m.m[k] = c
	m.mu.Unlock()
	m.misses.Add(1)
}

// copyResult deep-copies what a generator returned.
func copyResult(r generators.Result) generators.Result {
	out := generators.Result{
		Warnings:   slices.Clone(r.Warnings),
		Defaults:   maps.Clone(r.Defaults),
		SpecLabels: maps.Clone(r.SpecLabels),
	}
	if r.Objects != nil {
		out.Objects = make([]*manifest.Object, len(r.Objects))
		for i, o := range r.Objects {
			out.Objects[i] = o.DeepCopy()
		}
	}
	for i, w := range out.Warnings {
		if w.Ref != nil {
			ref := *w.Ref
			out.Warnings[i].Ref = &ref
		}
	}
	return out
}

// reuse is one render's view of a Memo: the digest of what every spec of
// the render shares, and the digests of the files its specs read.
type reuse struct {
	memo    *Memo
	outputs *Outputs
	common  [sha256.Size]byte
	// decoration digests the options decorating depends on (Outputs).
	decoration [sha256.Size]byte
	root       *fsroot.Root
	files      sync.Map // absolute path -> fileDigest
	// cwd is the working folder relative sources are read from, taken
	// once a render (os.Getwd stats two folders on each call).
	cwd string
}

type fileDigest struct {
	sum [sha256.Size]byte
	err error
}

// errNoReuse: a spec reads what cannot be hashed; it is generated
// without the Memo (Generate reports what is wrong, if anything).
var errNoReuse = errors.New("not reusable")

// maxHashDepth bounds how deep hashing a read folder goes (a symlink
// inside the root may lead back to a parent).
const maxHashDepth = 64

// newReuse prepares a render's view of memo and outputs; nil when both
// are nil or the files every spec may read cannot be hashed.
func newReuse(memo *Memo, outputs *Outputs, opts *Options) *reuse {
	if outputs != nil && !opts.DiscardObjects {
		outputs = nil // a reused child has no map
	}
	if memo == nil && outputs == nil {
		return nil
	}
	var files []string
	if memo != nil {
		files = append(files, memo.files...)
	}
	if outputs != nil {
		files = append(files, outputs.files...)
	}
	slices.Sort(files)
	files = slices.Compact(files)
	root, err := fsroot.OpenRoot(opts.Root)
	if err != nil {
		return nil
	}
	h := sha256.New()
	keyhash.Field(h, "wavesmith reuse v1")
	keyhash.Field(h, keyhash.BuildInfo())
	keyhash.Field(h, root.Dir())
	keyhash.Field(h, string(opts.Platform))
	keyhash.Field(h, opts.KubeVersion)
	keyhash.Count(h, len(opts.APIVersions))
	for _, v := range opts.APIVersions {
		keyhash.Field(h, v)
	}
	h.Write(opts.Scope.Format()) // the last field of the prefix: no length needed
	cwd, err := os.Getwd()
	if err != nil {
		return nil
	}
	r := &reuse{memo: memo, outputs: outputs, root: root, cwd: cwd}
	if outputs != nil {
		r.decoration = decorationKey(opts)
	}
	keyhash.Count(h, len(files))
	for _, f := range files {
		keyhash.Field(h, f)
		b, err := root.ReadFile(filepath.Join(root.Dir(), f))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			keyhash.Field(h, "absent")
		case err != nil:
			root.Close()
			return nil
		default:
			keyhash.Field(h, "file")
			keyhash.Field(h, string(b))
		}
	}
	h.Sum(r.common[:0])
	return r
}

func (r *reuse) close() {
	if r != nil {
		r.root.Close()
	}
}

// key is the digest of everything that decides what g generates for
// spec with opts.
func (r *reuse) key(g generators.Generator, spec *manifest.Object, opts generators.Options) ([sha256.Size]byte, error) {
	var k [sha256.Size]byte
	h := sha256.New()
	h.Write(r.common[:])
	keyhash.Field(h, reflect.TypeOf(g).String()) // fmt's %T, without its allocation
	file := spec.Source.File
	if !filepath.IsAbs(file) {
		file = filepath.Join(r.cwd, file)
	}
	keyhash.Field(h, file)
	keyhash.Count(h, spec.Source.Index)
	keyhash.Count(h, spec.Source.Line)
	// The rest of opts is the render's, in common; the spec's wave is
	// not the generator's (it returns offsets from it).
	manifest.WithEncoded(spec.Map, func(y []byte) { keyhash.Bytes(h, y) })
	var reads []generators.Read
	if rd, ok := g.(generators.Reader); ok {
		reads = rd.Reads(spec, r.root.Dir())
	}
	keyhash.Count(h, len(reads))
	for _, rd := range reads {
		p := rd.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), p)
		}
		d := r.digest(p)
		if d.err != nil {
			return k, d.err
		}
		keyhash.Field(h, rd.Field)
		keyhash.Field(h, p)
		h.Write(d.sum[:])
	}
	h.Sum(k[:0])
	return k, nil
}

// digest hashes the file or folder at the absolute path p, once per
// render.
func (r *reuse) digest(p string) fileDigest {
	if d, ok := r.files.Load(p); ok {
		return d.(fileDigest)
	}
	h := sha256.New()
	err := r.hashPath(h, p, 0)
	d := fileDigest{err: err}
	h.Sum(d.sum[:0])
	r.files.Store(p, d)
	return d
}

// hashPath writes what p is into h: absent, a file's bytes, or a folder's
// entries (names, then each entry's content, symlinks inside the root
// followed as generators follow them).
func (r *reuse) hashPath(h hash.Hash, p string, depth int) error {
	if depth > maxHashDepth {
		return errNoReuse
	}
	fi, err := r.root.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		keyhash.Field(h, "absent")
		return nil
	}
	if err != nil {
		return errNoReuse
	}
	if !fi.IsDir() {
		b, err := r.root.ReadFile(p)
		if err != nil {
			return errNoReuse
		}
		keyhash.Field(h, "file")
		keyhash.Field(h, string(b))
		return nil
	}
	entries, err := r.root.ReadDir(p)
	if err != nil {
		return errNoReuse
	}
	keyhash.Field(h, "dir")
	keyhash.Count(h, len(entries))
	for _, e := range entries {
		keyhash.Field(h, e.Name())
		if err := r.hashPath(h, filepath.Join(p, e.Name()), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// generate runs g on spec, or takes its result from the Memo when the
// Memo holds one for k, the spec's digest (keyed: k is one).
func (r *reuse) generate(ctx context.Context, g generators.Generator, spec *manifest.Object, opts generators.Options, k [sha256.Size]byte, keyed bool) (generators.Result, error) {
	if r == nil || r.memo == nil || !keyed {
		return g.Generate(ctx, spec, opts)
	}
	if res, ok := r.memo.get(k); ok {
		return res, nil
	}
	res, err := g.Generate(ctx, spec, opts)
	if err == nil {
		r.memo.put(k, res)
	}
	return res, err
}

// ErrNoDigest: a file or folder a spec reads cannot be hashed (outside
// the root, too large, not regular, nested too deep).
var ErrNoDigest = errors.New("cannot digest what a spec reads")

// SourceDigests returns every file and folder the specs among objs read
// (generators.Reader; absolute paths, resolved against each spec's file)
// with the digest of what each holds now, hashed as the Memo hashes them
// (a folder: its entries' names and contents; absent: a digest too).
// With the inputs' bytes, these decide what the specs generate: a cache
// of whole renders checks them again before it reuses one.
func SourceDigests(objs []*manifest.Object, opts Options) (map[string][sha256.Size]byte, error) {
	root, err := fsroot.OpenRoot(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDigest, err)
	}
	r := &reuse{root: root}
	defer r.close()
	out := map[string][sha256.Size]byte{}
	for _, o := range objs {
		if opts.Generators == nil {
			break
		}
		g, ok := opts.Generators.Lookup(o)
		if !ok {
			continue
		}
		rd, ok := g.(generators.Reader)
		if !ok {
			continue
		}
		file, err := filepath.Abs(o.Source.File)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoDigest, err)
		}
		for _, read := range rd.Reads(o, root.Dir()) {
			p := read.Path
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(file), p)
			}
			d := r.digest(p)
			if d.err != nil {
				return nil, fmt.Errorf("%w: %s", ErrNoDigest, p)
			}
			out[p] = d.sum
		}
	}
	return out, nil
}

// SourceDigest is the digest SourceDigests gives the file or folder at
// the absolute path p under root, as it is now.
func SourceDigest(root, p string) ([sha256.Size]byte, error) {
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("%w: %w", ErrNoDigest, err)
	}
	defer r.Close()
	d := (&reuse{root: r}).digest(p)
	if d.err != nil {
		return d.sum, fmt.Errorf("%w: %s", ErrNoDigest, p)
	}
	return d.sum, nil
}
