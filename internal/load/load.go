package load

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/monochromegane/go-gitignore"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/internal/parallel"
	"github.com/wavesmith/wavesmith/manifest"
)

// DefaultRoot is the root of a render of paths when the door is given
// none: the git repository enclosing the first path (stdin alone: cwd).
// Outside a repository, cwd (the door's working folder, absolute) when the
// first path lies inside it, so that a layout that works in a repository
// works without one (deploy/ naming ../charts/); else the first path's
// folder. Relative paths are read from the process's working folder: only
// doors call it.
func DefaultRoot(paths []string, cwd string) string {
	p := "."
	for _, q := range paths {
		if q != "-" {
			p = q
			break
		}
	}
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		p = filepath.Dir(p)
	}
	root, ok := FindRepository(p)
	if ok {
		return root
	}
	if cwd != "" && (root == cwd || strings.HasPrefix(root, strings.TrimSuffix(cwd, string(filepath.Separator))+string(filepath.Separator))) {
		return cwd
	}
	return root
}

// Inputs reads the objects of a render from paths: files, directories
// (recursively, files ending in .yaml, .yml or .json, in lexical order)
// and "-" for stdin. In directories, files named kustomization.yaml,
// Kptfile and the folders of Helm charts (holding Chart.yaml) and hidden
// folders are skipped: they are sources, not objects. A directory symlink
// loop is an error, and so are folders nested more than MaxFolderDepth
// deep (ErrTooDeep). It gives up, with ctx's error, when ctx ends (the
// render's --timeout): walking folders and reading files check it.
//
// Nothing is read outside root, through symlinks neither
// (fsroot.ErrOutsideRoot); only regular files are read, each of at most
// fsroot.MaxFileSize bytes (fsroot.ErrNotRegular, fsroot.ErrTooLarge), all of
// them together of at most MaxRenderInputSize bytes (ErrInputsTooLarge,
// counted as files are read, no file read once the total is over; the
// error names the file that takes the total over in input order,
// whatever order the reads ran in), and decoding stays within manifest's
// budgets, one of them for all files. A file is kept only while it is
// decoded; one that cannot hold a spec waits, read, until the specs say
// what they read, and is decoded only when it is none of their sources
// (which their generators decode): each file is read once and, within
// maxWaiting bytes of waiting files, decoded at most once. A file named twice (twice on the command line, or a folder and
// a file in it, or through a symlink) is read once, where it comes first.
//
// reg decides what a spec is: an object of one of its kinds. The files
// and folders a spec reads (what its generator reports through
// generators.Reader: a Component's source folder, its values files) are
// its sources, not objects of the render, and are left out; but a source
// that covers a file holding a spec (the reader's own, or another's) is
// an error naming both (generators.ErrSourceCoversSpec), and so is a source file
// that does not decode but names the apiVersion of one of reg's groups:
// no spec is ever dropped silently.
//
// With the errors of files that were read, Inputs also returns the objects
// of the files that decoded, so that a door can check them in the same run
// (render.Check); they are never to be rendered.
func Inputs(ctx context.Context, root string, reg generators.Registry, paths []string, stdin io.Reader) ([]*manifest.Object, error) {
	in, err := ReadInputs(ctx, root, reg, paths, stdin, nil)
	if err != nil {
		return nil, err
	}
	return in.Decode(ctx)
}

// Read holds the files of a render as ReadInputs read them, not decoded
// yet: a door may digest them (Each) before it decides to decode them
// (Decode), e.g. to find the render in a cache.
type Read struct {
	root   string
	k      kinds
	inputs []input
	raw    [][]byte // held until decoded; nil when dropped or unreadable
	sums   [][sha256.Size]byte
	errs   []error
	size   int64 // bytes read, stdin's included
	// changed: a file dropped after reading read otherwise in Decode.
	changed atomic.Bool
}

// maxHeld bounds the bytes ReadInputs holds for Decode; files beyond it
// are read again by Decode (and checked against their digest), so that
// loading holds no more than decoding one file at a time takes.
var maxHeld int64 = 64 << 20

// ReadInputs is the first half of Inputs: it lists the files of paths
// and reads them, with every check and budget of Inputs but decoding,
// and keeps each file's SHA-256 (Each). Files are held for Decode up to
// maxHeld bytes in all; the others are read again there. listed, unless
// nil, is told how many inputs are listed so far as the listing goes
// (after each folder) and once all are, before any is read (stdin counts
// as one): what a door may ready itself by for the size of the render
// ahead.
func ReadInputs(ctx context.Context, root string, reg generators.Registry, paths []string, stdin io.Reader, listed func(inputs int)) (*Read, error) {
	if reg == nil {
		return nil, ErrNoGenerators
	}
	if root == "" {
		return nil, ErrNoRoot
	}
	k := newKinds(reg)
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	w := newWalker(ctx, r)
	defer w.close()
	var inputs []input
	if listed != nil {
		w.listed = func(n int) { listed(len(inputs) + n) }
	}
	seen := map[string]bool{} // resolved paths of the files listed
	add := func(in input) {
		if in.path != "-" {
			if seen[in.key] {
				return // named twice: read once, where it comes first
			}
			seen[in.key] = true
		}
		inputs = append(inputs, in)
	}
	// Every PATH is checked before any is read: a missing one does not
	// hide the next one's problem.
	var pathErrs []error
	for _, p := range paths {
		if p == "-" {
			add(input{path: "-"})
			continue
		}
		fi, err := r.Stat(p)
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // "nope: no such file or directory", not "nope: statat nope: ..."
		}
		if err != nil {
			pathErrs = append(pathErrs, &manifest.Error{File: p, Err: err})
			continue
		}
		if rec := RenderedTree(r, p); rec != "" {
			pathErrs = append(pathErrs, &manifest.Error{File: p, Err: fmt.Errorf("%w: it lies in the tree marked by %s; render the specs the tree came from", outtree.ErrRenderedTree, rec)})
			continue
		}
		if !fi.IsDir() {
			add(input{path: p, key: resolved(p)})
			continue
		}
		found, candidates, err := w.walk(p)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			pathErrs = append(pathErrs, err)
			continue
		}
		if len(seen) == 0 && len(found) > 0 {
			// Sized once for a large folder: not grown file by file.
			seen = make(map[string]bool, len(found)+len(candidates))
			inputs = slices.Grow(inputs, len(found)+len(candidates))
		}
		for _, f := range found {
			add(f)
		}
		for _, c := range candidates {
			c.candidate = true
			add(c)
		}
	}
	if err := manifest.JoinSorted(pathErrs); err != nil {
		return nil, err
	}
	if listed != nil {
		listed(len(inputs))
	}
	var stdinData []byte
	for _, in := range inputs {
		if in.path == "-" {
			b, err := io.ReadAll(io.LimitReader(stdin, fsroot.MaxFileSize+1))
			if err != nil {
				return nil, &manifest.Error{File: "-", Err: err}
			}
			if len(b) > fsroot.MaxFileSize {
				return nil, &manifest.Error{File: "-", Err: fmt.Errorf("%w: more than %d bytes", fsroot.ErrTooLarge, fsroot.MaxFileSize)}
			}
			stdinData = b
			break
		}
	}
	// The total (MaxRenderInputSize) is counted as files are read, from
	// the bytes each read gives (its own fstat sized them): the walk
	// lists no sizes. Once it is over, no further file is read, so a
	// render of huge inputs reads little more than the budget; the error
	// is then computed as a check before any read would compute it (over
	// the inputs' sizes, in input order), so that it names the same file
	// and total whatever the order reads finished in. A file over the cap
	// of one file is refused by its read, unread: its own error says so
	// (or, for a spec's source, the spec's); it counts for nothing.
	raw := make([][]byte, len(inputs))
	sums := make([][sha256.Size]byte, len(inputs))
	errs := make([]error, len(inputs))
	var read atomic.Int64 // bytes read, stdin's included
	read.Store(int64(len(stdinData)))
	var over atomic.Bool // read passed MaxRenderInputSize: read nothing more
	var held atomic.Int64
	// The files of a folder are read through the folder opened once
	// (fsroot.Dir), in runs of at most readRun files: a walk lists a
	// folder's files together, and the runs keep every worker busy.
	runs := folderRuns(inputs)
	if readOrder != nil {
		readOrder(runs)
	}
	parallel.Do(len(runs), func(ri int) {
		run := runs[ri]
		if over.Load() {
			return
		}
		var dir *fsroot.Dir
		if run.dir != "" {
			dir = r.OpenDir(run.dir)
			defer dir.Close()
		}
		for i := run.start; i < run.end && !over.Load(); i++ {
			readInput(ctx, r, dir, inputs, i, raw, sums, errs, stdinData, &read, &over, &held)
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if over.Load() {
		return nil, budgetError(r, inputs, stdinData, errs)
	}
	return &Read{root: root, k: k, inputs: inputs, raw: raw, sums: sums, errs: errs, size: read.Load()}, nil
}

// readRun is the most files read through one opened folder by one worker
// at a time.
const readRun = 32

// run is inputs[start:end], files in the folder dir ("" when they are
// not read through a folder: stdin).
type run struct {
	start, end int
	dir        string
}

// folderRuns splits inputs into runs of consecutive files of one folder.
func folderRuns(inputs []input) []run {
	var runs []run
	for i, in := range inputs {
		dir := ""
		if in.path != "-" {
			dir = filepath.Dir(in.path)
		}
		if n := len(runs); n > 0 && runs[n-1].dir == dir && dir != "" && runs[n-1].end-runs[n-1].start < readRun {
			runs[n-1].end = i + 1
			continue
		}
		runs = append(runs, run{start: i, end: i + 1, dir: dir})
	}
	return runs
}

// readOrder, for tests, reorders the runs of files before they are read
// (as workers may finish them in any order).
var readOrder func([]run)

// onRead, for tests, is told each input read from a file (its index),
// before the read.
var onRead func(i int)

// maxInputSize is MaxRenderInputSize; tests lower it.
var maxInputSize int64 = MaxRenderInputSize

// budgetError is the error of inputs that hold more than maxInputSize
// bytes together, as a check before any read computes it: the sizes of
// the inputs in input order (stdin's length, each file's size through
// the root, following a symlink as its read does), a file over
// fsroot.MaxFileSize counting for nothing (its read refuses it), and the
// file that takes the total over named. Reads that ended over the budget
// call it: only this error path stats the inputs. Should the files have
// shrunk since they were read, the first file whose read went over is
// named, with the total its read saw.
func budgetError(r *fsroot.Root, inputs []input, stdinData []byte, errs []error) error {
	var total int64
	for _, in := range inputs {
		size := int64(len(stdinData))
		if in.path != "-" {
			fi, err := r.Stat(in.path)
			if err != nil || !fi.Mode().IsRegular() || fi.Size() > fsroot.MaxFileSize {
				continue
			}
			size = fi.Size()
		}
		if total += size; total > maxInputSize {
			return &manifest.Error{File: in.path, Err: inputsTooLarge(total)}
		}
	}
	for _, err := range errs {
		if errors.Is(err, ErrInputsTooLarge) {
			return err
		}
	}
	return &manifest.Error{File: inputs[len(inputs)-1].path, Err: inputsTooLarge(maxInputSize + 1)} // not reached: a read went over
}

// readInput reads inputs[i] (through dir when not nil), counts it in the
// total (over: the total passed maxInputSize) and keeps its sum and,
// within maxHeld, its bytes.
func readInput(ctx context.Context, r *fsroot.Root, dir *fsroot.Dir, inputs []input, i int, raw [][]byte, sums [][sha256.Size]byte, errs []error, stdinData []byte, read *atomic.Int64, over *atomic.Bool, held *atomic.Int64) {
	file := inputs[i].path
	if err := ctx.Err(); err != nil {
		errs[i] = &manifest.Error{File: file, Err: err}
		return
	}
	if file == "-" {
		// Counted already.
		raw[i], sums[i] = stdinData, sha256.Sum256(stdinData)
		if n := read.Load(); n > maxInputSize {
			errs[i] = &manifest.Error{File: file, Err: inputsTooLarge(n)}
			over.Store(true)
		}
		return
	}
	if onRead != nil {
		onRead(i)
	}
	var b []byte
	var err error
	if dir != nil {
		b, err = dir.ReadFile(filepath.Base(file))
	} else {
		b, err = r.ReadFile(file)
	}
	if err != nil {
		errs[i] = &manifest.Error{File: file, Err: err}
		return
	}
	if n := read.Add(int64(len(b))); n > maxInputSize {
		errs[i] = &manifest.Error{File: file, Err: inputsTooLarge(n)}
		over.Store(true)
		return
	}
	sums[i] = sha256.Sum256(b)
	if held.Add(int64(len(b))) <= maxHeld {
		raw[i] = b
	} else {
		held.Add(-int64(len(b))) // read again by Decode
	}
}

// Each calls fn with each file read, in the order Inputs takes them: its
// path as listed ("-" for stdin) and the SHA-256 of its bytes, or the
// error reading it.
func (in *Read) Each(fn func(path string, sum [sha256.Size]byte, err error)) {
	for i, f := range in.inputs {
		fn(f.path, in.sums[i], in.errs[i])
	}
}

// Size returns the bytes read, stdin's included: what the render ahead
// grows with.
func (in *Read) Size() int64 { return in.size }

// Changed reports whether a file Decode read again (beyond maxHeld) no
// longer held what ReadInputs read: the objects are the file's new
// content, the digests Each gave the old one.
func (in *Read) Changed() bool { return in.changed.Load() }

// Decode is the second half of Inputs: the objects of the files read.
// It may be called once.
func (in *Read) Decode(ctx context.Context) ([]*manifest.Object, error) {
	root, k, inputs, errs := in.root, in.k, in.inputs, in.errs
	var r *fsroot.Root // for the files read again
	for i := range inputs {
		if in.raw[i] == nil && errs[i] == nil && inputs[i].path != "-" {
			var err error
			if r, err = fsroot.OpenRoot(root); err != nil {
				return nil, err
			}
			defer r.Close()
			break
		}
	}
	docs := make([][]*manifest.Object, len(inputs))
	specAPI := make([]bool, len(inputs)) // a file that did not decode names a spec's apiVersion
	// Files that cannot hold a spec wait, read, until the specs say what
	// they read: a spec's source is rendered by its generator, which
	// decodes it; loading never decodes it too.
	later := make([][]byte, len(inputs))
	var waiting atomic.Int64 // bytes in later
	budget := manifest.NewBudget(manifest.MaxRenderDecodedSize)
	parallel.Do(len(inputs), func(i int) {
		file := inputs[i].path
		if err := ctx.Err(); err != nil {
			errs[i] = &manifest.Error{File: file, Err: err}
			return
		}
		b := in.raw[i]
		in.raw[i] = nil
		if errs[i] != nil {
			return
		}
		if b == nil && file != "-" {
			var err error
			if b, err = r.ReadFile(file); err != nil {
				errs[i] = &manifest.Error{File: file, Err: err}
				return
			}
			if sha256.Sum256(b) != in.sums[i] {
				in.changed.Store(true)
			}
		}
		if inputs[i].candidate && !k.namesSpecAPI(b) {
			return // a file of a chart
		}
		if file != "-" && !k.mayHoldSpec(b) {
			if waiting.Add(int64(len(b))) <= maxWaiting {
				later[i] = b
				return
			}
			waiting.Add(-int64(len(b))) // decoded now: memory stays bounded
		}
		docs[i], errs[i] = budget.Decode(file, b)
		if errs[i] != nil {
			specAPI[i] = k.namesSpecAPI(b)
		}
		// b is dropped here: only the objects stay.
	})
	// The files and folders specs read are their sources, not objects of
	// the render: the files that wait are decoded unless they are one.
	used := k.sources(docs, root)
	parallel.Do(len(inputs), func(i int) {
		b := later[i]
		if b == nil {
			return
		}
		later[i] = nil
		file := inputs[i].path
		if err := ctx.Err(); err != nil {
			errs[i] = &manifest.Error{File: file, Err: err}
			return
		}
		if used.covering(file) == nil {
			docs[i], errs[i] = budget.Decode(file, b)
		}
	})
	var out []*manifest.Object
	for i, d := range docs {
		file := inputs[i].path
		if inputs[i].candidate && errs[i] == nil && k.firstSpec(d) == nil {
			continue // a file of a chart
		}
		src := used.covering(file)
		if file == "-" || src == nil {
			out = append(out, d...)
			continue
		}
		if spec := k.firstSpec(d); spec != nil {
			errs[i] = src.obj.FieldError(src.field, fmt.Errorf("%w: %s covers %s, which holds %s: a spec is never a source", generators.ErrSourceCoversSpec, src.path, file, spec.Key()))
			continue
		}
		if errs[i] != nil && specAPI[i] {
			errs[i] = fmt.Errorf("%w (and %s reads it as a source: %s %s of %s)", errs[i], src.obj.Key(), src.field, src.path, src.obj.Source.File)
			continue
		}
		errs[i] = nil // a source: a template need not decode
	}
	if err := manifest.JoinSorted(errs); err != nil {
		var good []*manifest.Object
		for i, d := range docs {
			if errs[i] == nil && (!inputs[i].candidate || k.firstSpec(d) != nil) && used.covering(inputs[i].path) == nil {
				good = append(good, d...)
			}
		}
		return good, err
	}
	return out, nil
}

// MaxRenderInputSize bounds the bytes of all the files one render reads
// as inputs, stdin included. Each file may hold fsroot.MaxFileSize bytes, so
// without a total a folder of many files just under that cap (comments
// decode to nothing) would have a render read and parse gigabytes: 40
// files of 15 MiB took 1.3 GB. 256 MiB is far beyond the inputs of any
// repository of specs and objects, and keeps a render under 1 GiB.
const MaxRenderInputSize = 256 << 20

// maxWaiting bounds the bytes of the files that wait, read, until the
// specs say what they read (Inputs): beyond it, files are decoded as they
// are read, as if every one were an object (a source among them is then
// decoded by loading too), so that a render of large inputs holds no more
// than decoding them takes. Specs' sources are far smaller.
const maxWaiting = 16 << 20

// MaxFolderDepth bounds how deep folders may nest below an input folder:
// no layout of specs needs more, and a deeper tree only costs time.
const MaxFolderDepth = 256

var (
	// ErrNoGenerators: loading was given no generator registry; every
	// door passes one (generators/builtin.Registry()).
	ErrNoGenerators = errors.New("no generator registry: the door passes one")
	// ErrNoRoot: loading was given no root; every door decides one.
	// config re-exports it (config.ErrNoRoot, the same value), as its
	// Merged.Options returns it to callers outside the module.
	ErrNoRoot = errors.New("no root: the door decides one")
	// ErrSymlinkLoop: a folder symlink leads back to a folder being read.
	ErrSymlinkLoop = errors.New("directory symlink loop")
	// ErrInputsTooLarge: the files of a render hold more than
	// MaxRenderInputSize bytes together.
	ErrInputsTooLarge = errors.New("inputs too large")
	// ErrTooDeep: folders nest more than MaxFolderDepth deep.
	ErrTooDeep = errors.New("folders nest too deep")
)

func inputsTooLarge(total int64) error {
	return fmt.Errorf("%w: with this file, the inputs of the render hold %d bytes, more than the %d (%d MiB) all the files of one render may hold", ErrInputsTooLarge, total, MaxRenderInputSize, MaxRenderInputSize>>20)
}

// input is a file Inputs reads.
type input struct {
	path string // as listed; "-" for stdin
	// key is the file's absolute path with symlinks resolved: a file
	// reached twice is read once.
	key string
	// candidate: a top-level file of a chart folder, an object only if
	// it holds a spec.
	candidate bool
}

// resolved returns p absolute, with symlinks resolved when it can (p as
// given otherwise: the read reports what is wrong with it).
func resolved(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// kinds is what a registry says about the objects loaded: which are
// specs, and what each spec reads.
type kinds struct {
	reg generators.Registry
	// apis are the apiVersion prefixes of the registry's groups
	// ("wavesmith.io/v"): a file that does not decode but holds one may
	// be a broken spec.
	apis [][]byte
}

func newKinds(reg generators.Registry) kinds {
	k := kinds{reg: reg}
	seen := map[string]bool{}
	for _, gk := range reg.Kinds() {
		g, _, _ := strings.Cut(gk, "/")
		if !seen[g] {
			seen[g] = true
			k.apis = append(k.apis, []byte(g+"/v"))
		}
	}
	return k
}

// isSpec tells whether o is of a spec kind of the registry.
func (k kinds) isSpec(o *manifest.Object) bool {
	_, ok := k.reg.Lookup(o)
	return ok
}

// firstSpec returns the first spec among objs, or nil.
func (k kinds) firstSpec(objs []*manifest.Object) *manifest.Object {
	for _, o := range objs {
		if k.isSpec(o) {
			return o
		}
	}
	return nil
}

// mayHoldSpec tells whether a file may hold a spec: it names a spec's
// apiVersion, or it could spell one otherwise (an escape in a quoted
// scalar, or UTF-16, which holds NUL bytes or starts with a byte order
// mark). Loading decodes such a file before it knows the specs' sources.
func (k kinds) mayHoldSpec(b []byte) bool {
	return k.namesSpecAPI(b) || bytes.IndexByte(b, '\\') >= 0 || bytes.IndexByte(b, 0) >= 0 ||
		bytes.HasPrefix(b, []byte{0xfe, 0xff}) || bytes.HasPrefix(b, []byte{0xff, 0xfe})
}

// namesSpecAPI tells whether a file that did not decode looks like a spec
// (names the apiVersion of one): its error must not be discarded.
func (k kinds) namesSpecAPI(b []byte) bool {
	for _, api := range k.apis {
		if bytes.Contains(b, api) {
			return true
		}
	}
	return false
}

// source is a file or folder a spec reads.
type source struct {
	abs   string
	obj   *manifest.Object
	field string // spec.source.chart.path, spec.valuesFiles[0], ...
	path  string // as written
}

// sources are the files and folders specs read.
type sources []source

// covering returns the source that file is or lies below, or nil.
func (s sources) covering(file string) *source {
	if file == "-" || len(s) == 0 {
		return nil // no source: no path to make absolute (os.Getwd stats two folders)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	for i, p := range s {
		if abs == p.abs || strings.HasPrefix(abs, p.abs+string(filepath.Separator)) {
			return &s[i]
		}
	}
	return nil
}

// sources lists what the specs among docs read, as their generators
// report it (generators.Reader), resolved against each spec's file.
func (k kinds) sources(docs [][]*manifest.Object, root string) sources {
	var out sources
	for _, d := range docs {
		for _, o := range d {
			if o.Source.File == "" || o.Source.File == "-" {
				continue
			}
			g, ok := k.reg.Lookup(o)
			if !ok {
				continue
			}
			r, ok := g.(generators.Reader)
			if !ok {
				continue
			}
			for _, rd := range r.Reads(o, root) {
				if abs, err := filepath.Abs(filepath.Join(filepath.Dir(o.Source.File), rd.Path)); err == nil {
					out = append(out, source{abs: abs, obj: o, field: rd.Field, path: rd.Path})
				}
			}
		}
	}
	return out
}

// Files lists the files Inputs reads under the folder dir, inside root:
// *.yaml, *.yml and *.json, recursively, in name order, following
// symlinks that stay below root and refusing loops, skipping hidden
// entries, Helm chart folders and kustomization, Kptfile and values
// files; then the top-level files of chart folders, which Inputs reads
// when they hold a spec.
func Files(root, dir string) ([]string, error) {
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	w := newWalker(context.Background(), r)
	defer w.close()
	files, candidates, err := w.walk(dir)
	var out []string
	for _, f := range append(files, candidates...) {
		out = append(out, f.path)
	}
	return out, err
}

// IgnoreFile in an input folder lists, in gitignore syntax, files and
// folders below it that are not inputs (unused values files, notes).
const IgnoreFile = ".wavesmithignore"

// RenderedTree returns the record file (relative to the root) of the
// rendered tree that path lies in (path itself or a folder above it, up to
// the root), or "".
func RenderedTree(r *fsroot.Root, path string) string {
	rel, err := r.Rel(path)
	if err != nil {
		return ""
	}
	for d := filepath.Clean(rel); ; d = filepath.Dir(d) {
		rec := filepath.Join(d, outtree.RecordFile)
		if _, err := r.Lstat(filepath.Join(r.Dir(), rec)); err == nil {
			return rec
		}
		if d == "." || d == string(filepath.Separator) {
			return ""
		}
	}
}

// walker lists the object files under folders of a root. It opens each
// folder once, relative to its parent's handle, so that a walk costs one
// open per folder whatever the depth (a path opened from the root costs
// one open per level: a deep tree would cost its depth squared).
type walker struct {
	ctx context.Context
	r   *fsroot.Root
	top *os.Root // the root, for symlinks: they may lead anywhere in it
	err error    // opening top
	// listed, unless nil, is told after each folder how many files a
	// walk has listed so far.
	listed func(files int)
}

func newWalker(ctx context.Context, r *fsroot.Root) *walker {
	top, err := os.OpenRoot(r.Dir())
	return &walker{ctx: ctx, r: r, top: top, err: err}
}

func (w *walker) close() {
	if w.top != nil {
		w.top.Close()
	}
}

// open opens the folder path (relative to the current folder) through
// the root, following symlinks inside it.
func (w *walker) open(path string) (*os.Root, error) {
	if w.err != nil {
		return nil, w.err
	}
	rel, err := w.r.Rel(path)
	if err != nil {
		return nil, err
	}
	return w.top.OpenRoot(rel)
}

// walk lists the object files under dir, following symlinks inside the
// root, refusing loops, special files and folders deeper than
// MaxFolderDepth, skipping what an IgnoreFile lists and folders that are
// rendered trees (they hold outtree.RecordFile: a render's own output, for
// instance below the folder it rendered). candidates are the top-level
// files of Helm chart folders below dir: objects only if they hold specs.
// It gives up when the context ends.
func (w *walker) walk(dir string) (files, candidates []input, err error) {
	r, walked := w.r, dir
	var stack []fs.FileInfo // the folders being visited, to find loops
	var ignores []gitignore.IgnoreMatcher
	ignored := func(p string, isDir bool) bool {
		for _, m := range ignores {
			if m.Match(p, isDir) {
				return true
			}
		}
		return false
	}
	// visit lists the folder dir, open as d; real is its absolute path
	// with symlinks resolved.
	var visit func(dir, real string, d *os.Root) error
	visit = func(dir, real string, d *os.Root) error {
		if err := w.ctx.Err(); err != nil {
			return &manifest.Error{File: dir, Err: err}
		}
		if len(stack) >= MaxFolderDepth {
			return &manifest.Error{File: dir, Err: fmt.Errorf("%w: more than %d folders deep below %s", ErrTooDeep, MaxFolderDepth, walked)}
		}
		fi, err := d.Stat(".")
		if err != nil {
			return &manifest.Error{File: dir, Err: err}
		}
		for _, s := range stack {
			if os.SameFile(s, fi) {
				return &manifest.Error{File: dir, Err: fmt.Errorf("%w: %s leads back to a folder being read", ErrSymlinkLoop, dir)}
			}
		}
		stack = append(stack, fi)
		defer func() { stack = stack[:len(stack)-1] }()
		// Listed through the folder opened in the root, its entries'
		// types as the listing gives them (fsroot.ListDir): no lstat per
		// entry, no size (the reads count the bytes).
		entries, err := fsroot.ListDir(d)
		if err != nil {
			return &manifest.Error{File: dir, Err: err}
		}
		for _, e := range entries {
			switch e.Name() {
			case outtree.RecordFile:
				// A rendered tree: output, not input. An empty record
				// marks nothing wavesmith wrote, and skipping its folder
				// would drop its specs silently.
				rec := filepath.Join(dir, outtree.RecordFile)
				if b, err := r.ReadFile(rec); err != nil {
					return &manifest.Error{File: rec, Err: err}
				} else if len(bytes.TrimSpace(b)) == 0 {
					return &manifest.Error{File: rec, Err: fmt.Errorf("%w: it would hide every file below %s from the render; remove it, or render the tree there again", outtree.ErrEmptyRecord, dir)}
				}
				return nil
			case IgnoreFile:
				b, err := r.ReadFile(filepath.Join(dir, IgnoreFile))
				if err != nil {
					return &manifest.Error{File: filepath.Join(dir, IgnoreFile), Err: err}
				}
				ignores = append(ignores, gitignore.NewGitIgnoreFromReader(dir, bytes.NewReader(b)))
				n := len(ignores)
				defer func() { ignores = ignores[:n-1] }()
			}
		}
		for _, e := range entries {
			if e.Name() == "Chart.yaml" && len(stack) > 1 {
				// A Helm chart: its templates are not objects. A spec
				// among its top-level files is still read (and refused
				// if a Component renders the chart): never dropped.
				for _, e := range entries {
					if mode := e.Type(); mode.IsRegular() && !skipFile(e.Name()) && !strings.HasPrefix(e.Name(), ".") {
						candidates = append(candidates, input{path: filepath.Join(dir, e.Name()), key: filepath.Join(real, e.Name())})
					}
				}
				return nil
			}
		}
		join, keyOf := childPath(dir), childPath(real)
		files = slices.Grow(files, len(entries))
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			p := join(name)
			mode := e.Type()
			var fi fs.FileInfo // what a symlink leads to
			if mode&fs.ModeSymlink != 0 {
				if fi, err = r.Stat(p); err != nil {
					return &manifest.Error{File: p, Err: err}
				}
				mode = fi.Mode().Type()
			}
			if ignored(p, mode.IsDir()) {
				continue
			}
			if mode.IsDir() {
				var sub *os.Root
				var subReal string
				if fi != nil { // a symlink: open where it leads, in the root
					sub, err = w.open(p)
					subReal = resolved(p)
				} else {
					sub, err = d.OpenRoot(name)
					subReal = filepath.Join(real, name)
				}
				if err != nil {
					return &manifest.Error{File: p, Err: err}
				}
				err = visit(p, subReal, sub)
				sub.Close()
				if err != nil {
					return err
				}
				continue
			}
			if skipFile(name) {
				continue
			}
			if !mode.IsRegular() {
				return &manifest.Error{File: p, Err: fmt.Errorf("%w: it is not a file to read", fsroot.ErrNotRegular)}
			}
			key := keyOf(name)
			if fi != nil {
				key = resolved(p)
			}
			files = append(files, input{path: p, key: key})
		}
		if w.listed != nil {
			w.listed(len(files) + len(candidates))
		}
		return nil
	}
	d, err := w.open(dir)
	if err != nil {
		// Stat explains a path leaving the root.
		if _, serr := r.Stat(dir); serr != nil {
			err = serr
		}
		return nil, nil, &manifest.Error{File: dir, Err: err}
	}
	defer d.Close()
	if err := visit(dir, resolved(dir), d); err != nil {
		return nil, nil, err
	}
	return files, candidates, nil
}

// childPath returns filepath.Join(dir, name) for the names of dir's
// entries, without cleaning the joined path again for every entry when
// dir is clean.
func childPath(dir string) func(name string) string {
	if dir == "." || dir != filepath.Clean(dir) || strings.HasSuffix(dir, string(filepath.Separator)) {
		return func(name string) string { return filepath.Join(dir, name) }
	}
	prefix := dir + string(filepath.Separator)
	return func(name string) string {
		if name == "" || name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) {
			return filepath.Join(dir, name)
		}
		return prefix + name
	}
}

func skipFile(name string) bool {
	switch name {
	case "kustomization.yaml", "kustomization.yml", "Kustomization", "Kptfile", "Chart.yaml", "values.yaml":
		return true
	}
	ext := strings.ToLower(filepath.Ext(name))
	return ext != ".yaml" && ext != ".yml" && ext != ".json"
}

// FindRoot returns the nearest folder at or above dir holding .git, or dir
// itself when there is none: the folder sources may not leave.
func FindRoot(dir string) string {
	root, _ := FindRepository(dir)
	return root
}

// FindRepository returns the nearest folder at or above dir holding .git
// and true, or dir (absolute) and false when there is none.
func FindRepository(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, false
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs, false
		}
		d = parent
	}
}

// WithoutSources drops the objects that come from files a spec among
// objs reads (as its generator in reg reports it, generators.Reader: a
// Component's kustomization folder, its values files): they are rendered
// through the spec, not on their own. A spec is never a source: a file a
// spec reads that holds a spec is an error naming both
// (generators.ErrSourceCoversSpec), as Inputs reports it. root is the render's: a
// generator reads nothing outside it to answer. The KRM function, whose
// objects come in a ResourceList rather than from files, calls it.
func WithoutSources(objs []*manifest.Object, reg generators.Registry, root string) ([]*manifest.Object, error) {
	if reg == nil {
		return nil, ErrNoGenerators
	}
	k := newKinds(reg)
	used := k.sources([][]*manifest.Object{objs}, root)
	if len(used) == 0 {
		return objs, nil
	}
	out := objs[:0:0]
	var errs []error
	for _, o := range objs {
		src := (*source)(nil)
		if o.Source.File != "" {
			src = used.covering(o.Source.File)
		}
		switch {
		case src == nil:
			out = append(out, o)
		case k.isSpec(o):
			errs = append(errs, src.obj.FieldError(src.field, fmt.Errorf("%w: %s covers %s, which holds %s: a spec is never a source", generators.ErrSourceCoversSpec, src.path, o.Source.File, o.Key())))
		}
	}
	return out, manifest.JoinSorted(errs)
}
