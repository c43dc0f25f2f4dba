package render

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wavesmith/wavesmith/manifest"
)

// Load reads objects from paths: files, directories (recursively, files
// ending in .yaml, .yml or .json, in lexical order) and "-" for stdin.
// In directories, files named kustomization.yaml, Kptfile and the folders
// of Helm charts (holding Chart.yaml) and hidden folders are skipped: they
// are sources, not objects. A directory symlink loop is an error.
func Load(paths []string, stdin io.Reader) ([]*manifest.Object, error) {
	var files []string
	for _, p := range paths {
		if p == "-" {
			files = append(files, "-")
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, &manifest.Error{File: p, Err: err}
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := walk(p)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	docs := make([][]*manifest.Object, len(files))
	errs := make([]error, len(files))
	var stdinData []byte
	for _, f := range files {
		if f == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, &manifest.Error{File: "-", Err: err}
			}
			stdinData = b
			break
		}
	}
	parallel(len(files), func(i int) {
		var b []byte
		var err error
		if files[i] == "-" {
			b = stdinData
		} else if b, err = os.ReadFile(files[i]); err != nil {
			errs[i] = &manifest.Error{File: files[i], Err: err}
			return
		}
		docs[i], errs[i] = manifest.Decode(files[i], b)
	})
	// Files a Component uses (its kustomization folder, its values files)
	// are its sources, not objects of the render.
	used := componentSources(docs)
	var out []*manifest.Object
	for i, d := range docs {
		if files[i] != "-" && used.contains(files[i]) {
			errs[i] = nil
			continue
		}
		out = append(out, d...)
	}
	if err := sortedJoin(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// sources are absolute paths of files and folders Components read.
type sources []string

func (s sources) contains(file string) bool {
	abs, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	for _, p := range s {
		if abs == p || strings.HasPrefix(abs, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
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
			var rels []string
			for _, k := range []string{"chart", "kustomization"} {
				if m, ok := src[k].(map[string]any); ok {
					if p, ok := m["path"].(string); ok {
						rels = append(rels, p)
					}
				}
			}
			vf, _ := spec["valuesFiles"].([]any)
			for _, v := range vf {
				if p, ok := v.(string); ok {
					rels = append(rels, p)
				}
			}
			for _, r := range rels {
				if abs, err := filepath.Abs(filepath.Join(filepath.Dir(o.Source.File), r)); err == nil {
					out = append(out, abs)
				}
			}
		}
	}
	return out
}

// Files lists the files Load reads under the folder root: *.yaml, *.yml
// and *.json, recursively, in name order, following symlinks and refusing
// loops, skipping hidden entries, Helm chart folders and kustomization,
// Kptfile and values files.
func Files(root string) ([]string, error) { return walk(root) }

// walk lists the object files under root, following symlinks, refusing
// loops.
func walk(root string) ([]string, error) {
	var files []string
	var visit func(dir string, stack map[string]bool) error
	visit = func(dir string, stack map[string]bool) error {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return &manifest.Error{File: dir, Err: err}
		}
		if stack[real] {
			return &manifest.Error{File: dir, Err: fmt.Errorf("%w: %s leads back to %s", ErrSymlinkLoop, dir, real)}
		}
		stack[real] = true
		defer delete(stack, real)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return &manifest.Error{File: dir, Err: err}
		}
		for _, e := range entries {
			if e.Name() == "Chart.yaml" && dir != root {
				return nil // a Helm chart: its templates are not objects
			}
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			name := e.Name()
			p := filepath.Join(dir, name)
			if strings.HasPrefix(name, ".") {
				continue
			}
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				fi, err := os.Stat(p)
				if err != nil {
					return &manifest.Error{File: p, Err: err}
				}
				isDir = fi.IsDir()
			}
			if isDir {
				if err := visit(p, stack); err != nil {
					return err
				}
				continue
			}
			if skipFile(name) {
				continue
			}
			files = append(files, p)
		}
		return nil
	}
	if err := visit(root, map[string]bool{}); err != nil {
		return nil, err
	}
	return files, nil
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
// they are rendered through the Component, not on their own.
func WithoutComponentSources(objs []*manifest.Object) []*manifest.Object {
	used := componentSources([][]*manifest.Object{objs})
	if len(used) == 0 {
		return objs
	}
	out := objs[:0:0]
	for _, o := range objs {
		if o.Source.File == "" || !used.contains(o.Source.File) {
			out = append(out, o)
		}
	}
	return out
}

// componentGK: until Load takes the generators' Reader interface, the
// Component kind whose sources it skips.
const componentGK = "wavesmith.io/Component"
