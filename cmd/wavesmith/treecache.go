package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wavesmith/wavesmith/internal/keyhash"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators/helm"
	"github.com/wavesmith/wavesmith/internal/argocdplugin"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
	"github.com/wavesmith/wavesmith/internal/treecache"
	"github.com/wavesmith/wavesmith/render"
)

// tree is what render -o DIR writes and check compares: the files, and
// what the render said.
type tree struct {
	files          map[string][]byte
	objects, specs int
	// cached: the files come from the tree cache; their reads of the
	// previous tree (Flux handoffs) are yet to be checked (replayPrevious;
	// check does it under the tree's lock) and its warnings printed
	// (printCached); a miss prints them as it renders.
	cached *treecache.Entry
	// release releases the tree's lock renderTree took (lockHere).
	release func() error
	// store keeps a rendered tree in the cache, with the Index of the
	// tree on disk (outtree.WriteIndexed, ReadIndexed; nil: none); the
	// caller calls it once the tree is written (render) or compared
	// (check): a failure writes nothing, outside the tree neither.
	store func(*outtree.Index)
	// known is what the cache knows of the tree on disk (a cached tree's
	// Index and bytes), so that its unchanged files are not read.
	known outtree.Known
	// intact: the tree is cached and the tree on disk holds it, every
	// file as its Index recorded (outtree.Intact); files is then nil
	// (never read from the cache), the tree has count files, and
	// known.Index is the record Intact made of the tree, for store.
	intact bool
	count  int
}

// printCached prints the warnings of a tree taken from the cache.
func (f *renderFlags) printCached(c *cobra.Command, t *tree) {
	if t.cached == nil || f.quiet {
		return
	}
	for _, w := range t.cached.Warnings {
		fmt.Fprintf(c.ErrOrStderr(), "warning: %s\n", w)
	}
}

// renderTree renders the tree at dir, or takes it from the tree cache
// (internal/treecache) when an entry of the same key is there and every
// file and folder its specs read still holds what it held. The key is a
// digest of everything else that decides the tree: the inputs' paths and
// bytes, the settings, the Helm lock, the executable's content. A miss
// renders as always and stores the result, unless a template called a
// function whose result changes on every call (the next full render
// would differ). A miss prints its warnings as it renders.
//
// The tree's lock is held whenever the previous tree is read (the cached
// tree's reads replayed, its stat record compared, or the engines' files
// made), so that a render updating DIR in the meantime is waited for,
// never half seen: the caller holds it (lockHeld: render -o, which writes
// under it), or renderTree takes it and returns it held (lockHere: check;
// tree.release).
func (f *renderFlags) renderTree(c *cobra.Command, s *setup, dir string, lk treeLocking) (_ *tree, err error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(argocdplugin.Charts(c.Context(), os.Getenv), s.timeout)
	defer cancel()
	in, err := s.readInputs(ctx, c)
	if err != nil {
		return nil, err
	}
	release := func() error { return nil }
	locked := lk == lockHeld
	lock := func() error {
		if locked {
			return nil
		}
		r, err := outtree.WaitLock(c.Context(), dir, f.waiting(c, dir))
		if err != nil {
			return err
		}
		release, locked = r, true
		return nil
	}
	defer func() {
		if err != nil {
			_ = release()
		}
	}()
	tc := openTreeCache(s, dir, in)
	if e := tc.lookup(); e != nil {
		if err := lock(); err != nil {
			return nil, err
		}
		if replayPrevious(dir, e) {
			now, intact := tc.readFiles(dir, e)
			if intact || e.Files != nil {
				treeCacheHits.Add(1)
				if f.verbose {
					fmt.Fprintf(c.ErrOrStderr(), "%s: the tree of these inputs and settings is in the tree cache (%d specs): not rendered again, in %s\n", dir, e.Specs, time.Since(start).Round(time.Millisecond))
				}
				count, known := len(e.Files), outtree.Known{Index: e.Tree, Files: e.Files}
				if intact {
					count, known.Index = len(e.Tree.Files), now
				}
				return &tree{files: e.Files, objects: e.Objects, specs: e.Specs, cached: e, release: release, store: tc.storeTree(e), known: known, intact: intact, count: count}, nil
			}
		}
		// The cached tree read another previous tree, or its files
		// could not be read: render, outside the lock unless the caller
		// holds it.
		if lk == lockHere {
			_ = release()
			release, locked = func() error { return nil }, false
		}
	}
	calls := tmplsandbox.NondeterministicCalls()
	// The specs whose output the last render of this tree recorded and
	// whose digest did not change are not rendered again; the tree that
	// render left is read from the cache meanwhile (known).
	records := tc.records()
	outputs := tc.outputs(records)
	// The last entry's references are resolved once the render is done:
	// mostly to the pieces it decoded (the same bytes as the new tree's).
	rendered := make(chan struct{})
	resolve := resolver(records, outputs)
	last := tc.last(func(r treecache.Ref) ([]byte, bool) {
		<-rendered
		return resolve(r)
	})
	objs, res, err := f.renderRead(ctx, c, s, in, start, outputs)
	close(rendered) // last() is waited for once the tree's files are made
	if err != nil {
		return nil, err
	}
	if outputs != nil {
		hits, misses := outputs.Stats()
		outputsReused.Add(int64(hits))
		if f.verbose {
			fmt.Fprintf(c.ErrOrStderr(), "%s: %d specs taken from the outputs of the last render, %d rendered\n", dir, hits, misses)
		}
	}
	f.printWarnings(c, res)
	var sources map[string]treecache.Sum
	if tc != nil {
		sources, err = render.SourceDigests(objs, s.opts)
		if err != nil {
			tc = nil // a source that cannot be hashed: render it every time
		}
	}
	if err := lock(); err != nil {
		return nil, err
	}
	rec := &previousRecorder{}
	files, err := files(c, s, res, dir, rec)
	if err != nil {
		return nil, err
	}
	t := &tree{files: files, objects: len(res.Items), specs: len(res.Specs), release: release, store: func(*outtree.Index) {}, known: last(), count: len(files)}
	if tc == nil || tmplsandbox.NondeterministicCalls() != calls || in.Changed() {
		return t, nil
	}
	// What the specs read, hashed again after the render: a file that
	// changed meanwhile may have been read in either state.
	if again, err := render.SourceDigests(objs, s.opts); err != nil || !mapsEqual(again, sources) {
		return t, nil
	}
	e := &treecache.Entry{Key: tc.key, Sources: sources, Previous: rec.ops(), Objects: t.objects, Specs: t.specs, Files: files, RefOf: refOf(outputs)}
	for _, w := range res.Warnings {
		e.Warnings = append(e.Warnings, w.String())
	}
	t.store = func(ix *outtree.Index) {
		e.Tree = ix
		tc.store(e)
		tc.storeOutputs(outputs)
	}
	return t, nil
}

// treeLocking is who takes the lock of the tree renderTree reads.
type treeLocking int

const (
	// lockHere (the zero value: never read the tree unlocked):
	// renderTree takes it before the previous tree is read and returns it
	// held (tree.release).
	lockHere treeLocking = iota
	// lockHeld: the caller holds it (outtree.Hold) and keeps it.
	lockHeld
)

// replayPrevious tells whether the reads of the previous tree at dir the
// GitOps engines made for a cached tree give what they gave then.
func replayPrevious(dir string, e *treecache.Entry) bool {
	prev, err := outtree.OpenFS(dir)
	switch {
	case err == nil:
		defer prev.Close()
		return treecache.Replay(prev, e.Previous)
	case errors.Is(err, fs.ErrNotExist):
		return treecache.Replay(nil, e.Previous)
	}
	return false
}

// previousRecorder records the reads files makes of the previous tree.
type previousRecorder struct {
	mu     sync.Mutex
	absent bool
	r      *treecache.Recorder
}

func (p *previousRecorder) wrap(fsys fs.FS) fs.FS {
	if p == nil {
		return fsys
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if fsys == nil {
		p.absent = true
		return nil
	}
	p.r = treecache.Record(fsys)
	return p.r
}

func (p *previousRecorder) ops() []treecache.Op {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.absent:
		return treecache.Absent()
	case p.r != nil:
		return p.r.Ops()
	}
	return nil
}

func mapsEqual(a, b map[string]treecache.Sum) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// treeCacheHits counts the trees taken from the cache (tests).
var treeCacheHits atomic.Int64

// outputsReused counts the specs whose output a render took from the
// records of the last (tests).
var outputsReused atomic.Int64

// refsKept counts the files cache entries hold as references to the
// output records (tests).
var refsKept atomic.Int64

// treesIntact counts the cached trees found intact on disk, their files
// never read (tests).
var treesIntact atomic.Int64

// lastKnown counts the renders that compared the tree with the record of
// the last render of another key (tests).
var lastKnown atomic.Int64

// staleKeyForTest leaves the inputs' bytes out of the key: the control
// of the tests that compare cached and full renders (never set otherwise).
var staleKeyForTest bool

// treeCache is one render's use of the cache: the folder, the tree's slot
// and the key.
type treeCache struct {
	c    *treecache.Cache
	slot string
	key  treecache.Sum
	root string
}

// openTreeCache returns the cache of the tree at dir and the key of this
// render, or nil when the cache is off (treecache.Env), in a review (its
// renders go to temporary folders, whose entries would only push the
// user's own out of the cache: MaxSlots) or the key cannot be made (an
// input that could not be read: the render reports it).
func openTreeCache(s *setup, dir string, in *load.Read) *treeCache {
	if reviewMemo.Load() != nil {
		return nil
	}
	cdir, ok := treecache.Dir(os.Getenv)
	if !ok {
		return nil
	}
	c, err := treecache.Open(cdir)
	if err != nil {
		return nil
	}
	exe, err := c.Executable()
	if err != nil {
		return nil
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	key, ok := treeKey(s, absDir, in, exe)
	if !ok {
		return nil
	}
	return &treeCache{c: c, slot: treecache.Slot(absDir), key: key, root: s.root.Dir()}
}

// lookup returns the entry of the key whose sources still hold what they
// held, or nil; its files are not read (readFiles).
func (t *treeCache) lookup() *treecache.Entry {
	if t == nil {
		return nil
	}
	e, err := t.c.Head(t.slot, t.key)
	if err != nil {
		return nil
	}
	paths := make([]string, 0, len(e.Sources))
	for p := range e.Sources {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if d, err := render.SourceDigest(t.root, p); err != nil || d != e.Sources[p] {
			return nil
		}
	}
	return e
}

// last starts reading the slot's entry whatever its key (Cache.Last)
// and returns what waits for it: what the cache knows of the tree on
// disk, so that its unchanged files are not read (the zero Known when
// there is no entry, or it has no Index); the next store keeps the
// entry's chunks whose files did not change.
func (t *treeCache) last(resolve treecache.Resolve) func() outtree.Known {
	if t == nil {
		return func() outtree.Known { return outtree.Known{} }
	}
	ch := make(chan outtree.Known, 1)
	go func() {
		e, err := t.c.Last(t.slot, resolve)
		if err != nil || e.Tree == nil {
			ch <- outtree.Known{}
			return
		}
		lastKnown.Add(1)
		ch <- outtree.Known{Index: e.Tree, Files: e.Files}
	}()
	return func() outtree.Known { return <-ch }
}

// readFiles reads the files of the entry e unless the tree at dir holds
// them, as the record of its files says (outtree.Intact: then the tree
// need be neither read nor written, intact is true and now is the record
// of the tree as it is, to store); checked under the tree's lock, which
// the caller holds. Files stays nil when they could not be read (a
// spoiled chunk): the tree is rendered.
func (t *treeCache) readFiles(dir string, e *treecache.Entry) (now *outtree.Index, intact bool) {
	now, intact = outtree.Intact(dir, e.Tree)
	if intact {
		treesIntact.Add(1)
	} else {
		_ = t.c.ReadFiles(t.slot, e, resolver(t.records(), nil))
	}
	return now, intact
}

// store keeps e; a cache that cannot be written costs the next render
// its speed only.
func (t *treeCache) store(e *treecache.Entry) {
	if t != nil {
		_ = t.c.Put(t.slot, e)
	}
}

// records returns the per-spec records of the last render of the tree
// (nil when there are none or the cache is off).
func (t *treeCache) records() map[treecache.Sum][]byte {
	if t == nil {
		return nil
	}
	recs, err := t.c.GetOutputs(t.slot)
	if err != nil {
		return nil
	}
	// What is decoded of the records and of the last entry is about as
	// much as the records again; the records themselves are in the heap
	// only where they are read, not mapped (fsroot.MapsFiles).
	var size int64
	for _, r := range recs {
		size += int64(len(r))
	}
	held := size
	if !fsroot.MapsFiles() {
		held += size
	}
	holdMemory(held)
	return recs
}

// outputs returns what takes the specs' outputs from records (empty:
// none yet), or nil when the cache is off.
func (t *treeCache) outputs(records map[treecache.Sum][]byte) *render.Outputs {
	if t == nil {
		return nil
	}
	return render.NewOutputs(records, helm.LockFile)
}

// resolver resolves the files a cache entry holds as pieces of the
// records (treecache.Ref): those a render took or kept as it decoded them
// (outputs, nil: none), the others decoded once each. Not for concurrent
// use.
func resolver(records map[treecache.Sum][]byte, outputs *render.Outputs) treecache.Resolve {
	pieces := map[treecache.Sum][][]byte{}
	return func(r treecache.Ref) ([]byte, bool) {
		ps, ok := pieces[r.Key]
		if !ok {
			if ps, ok = outputs.Pieces(r.Key); !ok {
				b, found := records[r.Key]
				if !found {
					return nil, false
				}
				ps, _ = render.RecordPieces(b) // nil: not whole
			}
			pieces[r.Key] = ps
		}
		if r.Index < 0 || r.Index >= len(ps) {
			return nil, false
		}
		return ps[r.Index], true
	}
}

// refOf names the files that are pieces of the records this render took
// or kept (render.Outputs.Piece): the cache keeps their bytes once. A
// Put asks it of every file, on every core.
func refOf(o *render.Outputs) func(string, []byte) (treecache.Ref, bool) {
	return func(_ string, b []byte) (treecache.Ref, bool) {
		pc, ok := o.Piece(b)
		if !ok {
			return treecache.Ref{}, false
		}
		refsKept.Add(1)
		return treecache.Ref{Key: pc.Key, Index: pc.Index, Size: pc.Size}, true
	}
}

// storeOutputs keeps the records of this render's specs.
func (t *treeCache) storeOutputs(o *render.Outputs) {
	if t != nil && o != nil {
		_ = t.c.PutOutputs(t.slot, o.RecordParts())
	}
}

// storeTree returns what keeps the Index of the tree of the cached entry
// e once written or checked again: only when it records what e.Tree did
// not (files written, files no longer racy), so that an unchanged tree
// writes nothing to the cache either; and the executable's digest, when
// it was hashed (a rebuild of the same bytes).
func (t *treeCache) storeTree(e *treecache.Entry) func(*outtree.Index) {
	return func(ix *outtree.Index) {
		t.c.KeepExecutable()
		if ix != nil && !ix.Same(e.Tree) {
			_ = t.c.PutTree(t.slot, ix)
		}
	}
}

// treeKey is the digest of everything that decides the tree at absDir
// before decoding: the executable, the working folder, root and output,
// the inputs as named and every file read (path and bytes), the merged
// settings and the render options they became, and the Helm lock. What
// specs read is known only after decoding: the entry holds it
// (treecache.Entry.Sources).
func treeKey(s *setup, absDir string, in *load.Read, exe treecache.Sum) (treecache.Sum, bool) {
	h := sha256.New()
	field := func(v string) { keyhash.Field(h, v) }
	field("wavesmith tree cache key v1")
	h.Write(exe[:])
	field(keyhash.BuildInfo())
	cwd, err := os.Getwd()
	if err != nil {
		return treecache.Sum{}, false
	}
	field(cwd)
	field(s.root.Dir())
	field(absDir)
	repo, found := load.FindRepository(filepath.Dir(absDir))
	field(fmt.Sprint(repo, found))
	keyhash.Count(h, len(s.inputs))
	for _, p := range s.inputs {
		field(p)
	}
	spec := s.merged.Spec
	spec.Output = ""  // absDir
	spec.Inputs = nil // s.inputs, as resolved (check reads them from the record)
	field(string(config.Encode(spec, "key")))
	o := s.opts
	field(string(o.Platform))
	field(o.Namespace)
	keys := make([]string, 0, len(o.Defaults))
	for k := range o.Defaults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	keyhash.Count(h, len(keys))
	for _, k := range keys {
		field(k)
		field(o.Defaults[k])
	}
	field(o.KubeVersion)
	keyhash.Count(h, len(o.APIVersions))
	for _, v := range o.APIVersions {
		field(v)
	}
	field(o.PartOf)
	field(fmt.Sprint(o.KeepInputs, o.DiscardObjects))
	if o.Scope != nil {
		field(string(o.Scope.Format()))
	} else {
		field("no scope")
	}
	if o.Generators != nil {
		kinds := slices.Clone(o.Generators.Kinds())
		sort.Strings(kinds)
		for _, k := range kinds {
			field(k)
		}
	}
	for _, d := range o.Engines {
		field(fmt.Sprintf("engine %T", d))
	}
	for _, d := range o.Dialects {
		field(fmt.Sprintf("dialect %T", d))
	}
	lock, err := s.root.ReadFile(filepath.Join(s.root.Dir(), helm.LockFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		field("no lock")
	case err != nil:
		return treecache.Sum{}, false
	default:
		field("lock")
		field(string(lock))
	}
	ok := true
	in.Each(func(p string, sum [sha256.Size]byte, err error) {
		if err != nil {
			ok = false
			return
		}
		field(p)
		if !staleKeyForTest {
			h.Write(sum[:])
		}
	})
	var k treecache.Sum
	h.Sum(k[:0])
	return k, ok
}
