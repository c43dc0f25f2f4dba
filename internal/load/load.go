package load

import (
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
