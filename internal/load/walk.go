package load

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/monochromegane/go-gitignore"

	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/manifest"
)

// MaxFolderDepth bounds how deep folders may nest below an input folder:
// no layout of specs needs more, and a deeper tree only costs time.
const MaxFolderDepth = 256

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
