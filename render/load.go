package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/monochromegane/go-gitignore"

	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/tree"
)

// Load reads objects from paths below DefaultRoot(paths); see LoadIn.
func Load(paths []string, stdin io.Reader) ([]*manifest.Object, error) {
	return LoadIn(DefaultRoot(paths), paths, stdin)
}

// DefaultRoot is the root of a render of paths when none is given: the
// git repository enclosing the first path (FindRoot), else that path's
// folder; the current folder's for stdin alone.
func DefaultRoot(paths []string) string {
	for _, p := range paths {
		if p == "-" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			p = filepath.Dir(p)
		}
		return FindRoot(p)
	}
	return FindRoot(".")
}

// LoadIn reads objects from paths: files, directories (recursively, files
// ending in .yaml, .yml or .json, in lexical order) and "-" for stdin.
// In directories, files named kustomization.yaml, Kptfile and the folders
// of Helm charts (holding Chart.yaml) and hidden folders are skipped: they
// are sources, not objects. A directory symlink loop is an error.
//
// Nothing is read outside root, through symlinks neither
// (tree.ErrOutsideRoot); only regular files are read, each of at most
// tree.MaxFileSize bytes (tree.ErrNotRegular, tree.ErrTooLarge), and
// decoding stays within manifest's budgets, one of them for all files.
//
// The files a Component reads (its kustomization folder, its values
// files) are its sources, not objects of the render, and are left out;
// but a source that covers a file holding a spec (the Component's own,
// or another's) is an error naming both, and so is a source file that
// does not decode but names a spec's apiVersion: no spec is ever dropped
// silently.
func LoadIn(root string, paths []string, stdin io.Reader) ([]*manifest.Object, error) {
	r, err := tree.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var files []string
	candidate := map[int]bool{} // files read only if they hold a spec
	for _, p := range paths {
		if p == "-" {
			files = append(files, "-")
			continue
		}
		fi, err := r.Stat(p)
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // "nope: no such file or directory", not "nope: statat nope: ..."
		}
		if err != nil {
			return nil, &manifest.Error{File: p, Err: err}
		}
		if rec := RenderedTree(r, p); rec != "" {
			return nil, &manifest.Error{File: p, Err: fmt.Errorf("%w: it lies in the tree marked by %s; render the specs the tree came from", tree.ErrRenderedTree, rec)}
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		found, candidates, err := walk(r, p)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
		for _, c := range candidates {
			candidate[len(files)] = true
			files = append(files, c)
		}
	}
	docs := make([][]*manifest.Object, len(files))
	errs := make([]error, len(files))
	data := make([][]byte, len(files))
	var stdinData []byte
	for _, f := range files {
		if f == "-" {
			b, err := io.ReadAll(io.LimitReader(stdin, tree.MaxFileSize+1))
			if err != nil {
				return nil, &manifest.Error{File: "-", Err: err}
			}
			if len(b) > tree.MaxFileSize {
				return nil, &manifest.Error{File: "-", Err: fmt.Errorf("%w: more than %d bytes", tree.ErrTooLarge, tree.MaxFileSize)}
			}
			stdinData = b
			break
		}
	}
	budget := manifest.NewBudget(manifest.MaxRenderDecodedSize)
	parallel(len(files), func(i int) {
		var b []byte
		var err error
		if files[i] == "-" {
			b = stdinData
		} else if b, err = r.ReadFile(files[i]); err != nil {
			errs[i] = &manifest.Error{File: files[i], Err: err}
			return
		}
		if candidate[i] && !namesSpecAPI(b) {
			return // a file of a chart
		}
		data[i] = b
		docs[i], errs[i] = budget.Decode(files[i], b)
	})
	// Files a Component uses (its kustomization folder, its values files)
	// are its sources, not objects of the render.
	used := componentSources(docs)
	var out []*manifest.Object
	for i, d := range docs {
		if candidate[i] && errs[i] == nil && firstSpec(d) == nil {
			continue // a file of a chart
		}
		src := used.covering(files[i])
		if files[i] == "-" || src == nil {
			out = append(out, d...)
			continue
		}
		if spec := firstSpec(d); spec != nil {
			errs[i] = src.obj.FieldError(src.field, fmt.Errorf("%w: %s covers %s, which holds %s: a spec is never a source", ErrSourceCoversSpec, src.path, files[i], spec.Key()))
			continue
		}
		if errs[i] != nil && namesSpecAPI(data[i]) {
			errs[i] = fmt.Errorf("%w (and %s reads it as a source: %s %s of %s)", errs[i], src.obj.Key(), src.field, src.path, src.obj.Source.File)
			continue
		}
		errs[i] = nil // a source: a template need not decode
	}
	if err := sortedJoin(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// specGKs are the spec kinds Load never drops.
var specGKs = map[string]bool{componentGK: true, "designer.kaoto.io/Kaoto": true}

// firstSpec returns the first spec among objs, or nil.
func firstSpec(objs []*manifest.Object) *manifest.Object {
	for _, o := range objs {
		if specGKs[o.Group()+"/"+o.Kind()] {
			return o
		}
	}
	return nil
}

// namesSpecAPI tells whether a file that did not decode looks like a spec
// (names the apiVersion of one): its error must not be discarded.
func namesSpecAPI(b []byte) bool {
	return bytes.Contains(b, []byte("designer.kaoto.io/")) || bytes.Contains(b, []byte("wavesmith.io/v"))
}

// source is a file or folder a Component reads.
type source struct {
	abs   string
	obj   *manifest.Object
	field string // spec.source.chart.path, spec.valuesFiles[0], ...
	path  string // as written
}

// sources are the files and folders Components read.
type sources []source

// covering returns the source that file is or lies below, or nil.
func (s sources) covering(file string) *source {
	if file == "-" {
		return nil
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

// componentSources lists the folders and values files of the Components
// among docs, resolved against each spec's file.
func componentSources(docs [][]*manifest.Object) sources {
	var out sources
	for _, d := range docs {
		for _, o := range d {
			if o.Group()+"/"+o.Kind() != componentGK || o.Source.File == "" || o.Source.File == "-" {
				continue
			}
			spec, _ := o.Map["spec"].(map[string]any)
			src, _ := spec["source"].(map[string]any)
			add := func(field, rel string) {
				if abs, err := filepath.Abs(filepath.Join(filepath.Dir(o.Source.File), rel)); err == nil {
					out = append(out, source{abs: abs, obj: o, field: field, path: rel})
				}
			}
			for _, k := range []string{"chart", "kustomization"} {
				if m, ok := src[k].(map[string]any); ok {
					if p, ok := m["path"].(string); ok {
						add("spec.source."+k+".path", p)
					}
				}
			}
			vf, _ := spec["valuesFiles"].([]any)
			for i, v := range vf {
				if p, ok := v.(string); ok {
					add(fmt.Sprintf("spec.valuesFiles[%d]", i), p)
				}
			}
		}
	}
	return out
}

// Files lists the files Load reads under the folder dir: *.yaml, *.yml
// and *.json, recursively, in name order, following symlinks that stay
// below DefaultRoot([dir]) and refusing loops, skipping hidden entries,
// Helm chart folders and kustomization, Kptfile and values files; then
// the top-level files of chart folders, which Load reads when they hold
// a spec.
func Files(dir string) ([]string, error) {
	r, err := tree.OpenRoot(DefaultRoot([]string{dir}))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	files, candidates, err := walk(r, dir)
	return append(files, candidates...), err
}

// IgnoreFile in an input folder lists, in gitignore syntax, files and
// folders below it that are not inputs (unused values files, notes).
const IgnoreFile = ".wavesmithignore"

// RenderedTree returns the record file (relative to the root) of the
// rendered tree that path lies in (path itself or a folder above it, up to
// the root), or "".
func RenderedTree(r *tree.Root, path string) string {
	rel, err := r.Rel(path)
	if err != nil {
		return ""
	}
	for d := filepath.Clean(rel); ; d = filepath.Dir(d) {
		rec := filepath.Join(d, tree.RecordFile)
		if _, err := r.Lstat(filepath.Join(r.Dir(), rec)); err == nil {
			return rec
		}
		if d == "." || d == string(filepath.Separator) {
			return ""
		}
	}
}

// walk lists the object files under dir, following symlinks inside the
// root, refusing loops and special files, skipping what an IgnoreFile
// lists and folders that are rendered trees (they hold tree.RecordFile:
// a render's own output, for instance below the folder it rendered).
// candidates are the top-level files of Helm chart folders below dir:
// objects only if they hold specs.
func walk(r *tree.Root, dir string) (files, candidates []string, err error) {
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
	var visit func(dir string) error
	visit = func(dir string) error {
		fi, err := r.Stat(dir)
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
		entries, err := r.ReadDir(dir)
		if err != nil {
			return &manifest.Error{File: dir, Err: err}
		}
		for _, e := range entries {
			switch e.Name() {
			case tree.RecordFile:
				return nil // a rendered tree: output, not input
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
						candidates = append(candidates, filepath.Join(dir, e.Name()))
					}
				}
				return nil
			}
		}
		for _, e := range entries {
			name := e.Name()
			p := filepath.Join(dir, name)
			if strings.HasPrefix(name, ".") {
				continue
			}
			mode := e.Type()
			if mode&fs.ModeSymlink != 0 {
				fi, err := r.Stat(p)
				if err != nil {
					return &manifest.Error{File: p, Err: err}
				}
				mode = fi.Mode().Type()
			}
			if ignored(p, mode.IsDir()) {
				continue
			}
			if mode.IsDir() {
				if err := visit(p); err != nil {
					return err
				}
				continue
			}
			if skipFile(name) {
				continue
			}
			if !mode.IsRegular() {
				return &manifest.Error{File: p, Err: fmt.Errorf("%w: it is not a file to read", tree.ErrNotRegular)}
			}
			files = append(files, p)
		}
		return nil
	}
	if err := visit(dir); err != nil {
		return nil, nil, err
	}
	return files, candidates, nil
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

// WithoutComponentSources drops the objects that come from files a
// Component among objs reads (its kustomization folder, its values files):
// they are rendered through the Component, not on their own. A spec is
// never a source: a file a Component reads that holds a spec is an error
// naming both (ErrSourceCoversSpec), as Load reports it.
func WithoutComponentSources(objs []*manifest.Object) ([]*manifest.Object, error) {
	used := componentSources([][]*manifest.Object{objs})
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
		case specGKs[o.Group()+"/"+o.Kind()]:
			errs = append(errs, src.obj.FieldError(src.field, fmt.Errorf("%w: %s covers %s, which holds %s: a spec is never a source", ErrSourceCoversSpec, src.path, o.Source.File, o.Key())))
		}
	}
	return out, sortedJoin(errs)
}

// componentGK: until Load takes the generators' Reader interface, the
// Component kind whose sources it skips.
const componentGK = "wavesmith.io/Component"
