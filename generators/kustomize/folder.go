package kustomize

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	gitignore "github.com/monochromegane/go-gitignore"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// config is the content of ConfigFile.
type config struct {
	TemplateSuffix         string         `json:"templateSuffix,omitempty"`
	LeftTemplateDelimiter  string         `json:"leftTemplateDelimiter,omitempty"`
	RightTemplateDelimiter string         `json:"rightTemplateDelimiter,omitempty"`
	Values                 map[string]any `json:"values,omitempty"`
	// Read only to refuse them with a clear message.
	IncludedFiles          []string `json:"includedFiles,omitempty"`
	IncludedKustomizations []string `json:"includedKustomizations,omitempty"`
}

// open prepares the folder: it resolves it, reads IgnoreFile and
// ConfigFile, and decides whether its files are templates (the
// Component's template field, else whether ConfigFile exists). A
// templated folder is read whole into memory, as component-operator-runtime
// does, and is its own root; a plain one stays on disk and is read where
// kustomize reaches, anywhere in the render root (its kustomization may
// name a base beside it).
func (j *job) open() (*tree, config, bool, error) {
	var cfg config
	real, err := filepath.EvalSymlinks(j.dir)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return nil, cfg, false, j.spec.FieldError(sourceField, fmt.Errorf("%w: %v", manifest.ErrInvalid, err))
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return nil, cfg, false, j.spec.FieldError(sourceField, fmt.Errorf("%w: %s is not a folder", manifest.ErrInvalid, j.dir))
	}
	// The two configuration files are read through the tree (symlinks
	// must stay inside), then hidden from kustomize.
	t := &tree{j: j, root: real, top: ".", disk: true}
	j.t = t
	t.setMem(map[string][]byte{})
	ib, hasIgnore, err := t.config(IgnoreFile)
	if err != nil {
		return nil, cfg, false, err
	}
	cb, hasConfig, err := t.config(ConfigFile)
	if err != nil {
		return nil, cfg, false, err
	}
	t.hidden = map[string]bool{IgnoreFile: true, ConfigFile: true}
	if hasIgnore {
		t.ignore = gitignore.NewGitIgnoreFromReader("/", bytes.NewReader(ib))
	}
	templated := hasConfig
	if j.template != nil {
		templated = *j.template
	}
	if !templated {
		return t, cfg, false, j.rootAt(t, real)
	}
	if hasConfig {
		if err := yaml.UnmarshalStrict(cb, &cfg); err != nil {
			return nil, cfg, false, j.refuse(ConfigFile, 0, "", "%v", err)
		}
		if len(cfg.IncludedFiles) > 0 {
			return nil, cfg, false, j.refuse(ConfigFile, 0, "includedFiles", "not supported: wavesmith reads only the component folder; move the files into it")
		}
		if len(cfg.IncludedKustomizations) > 0 {
			return nil, cfg, false, j.refuse(ConfigFile, 0, "includedKustomizations", "not supported: wavesmith reads only the component folder; point spec.source.kustomization.path at a folder holding all the kustomizations")
		}
	}
	files := map[string][]byte{}
	w := walker{j: j, t: t, files: files, onPath: map[string]bool{real: true}}
	if err := w.walk(real, ""); err != nil {
		return nil, cfg, false, err
	}
	t.setMem(files)
	t.disk = false
	return t, cfg, true, nil
}

// rootAt moves the plain tree t of the component folder real to the
// render root: top becomes the folder's path in it. Without a root
// (Options.Root empty) the folder is its own root.
func (j *job) rootAt(t *tree, real string) error {
	if j.opts.Root == "" {
		return nil
	}
	root, err := filepath.EvalSymlinks(j.opts.Root)
	if err == nil {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		return j.spec.FieldError(sourceField, fmt.Errorf("%w: the root: %v", manifest.ErrInvalid, err))
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return j.spec.FieldError(sourceField, fmt.Errorf("%w: %s resolves to %s, outside the root %s", fsroot.ErrOutsideRoot, j.dir, real, root))
	}
	top := filepath.ToSlash(rel)
	hidden := map[string]bool{}
	for n := range t.hidden {
		hidden[path.Join(top, n)] = true
	}
	t.root, t.top, t.hidden = root, top, hidden
	return nil
}

// config reads a configuration file at the top of the folder.
func (t *tree) config(name string) ([]byte, bool, error) {
	_, ok, err := t.stat(name)
	if err != nil || !ok {
		return nil, false, err
	}
	b, err := t.readFile(name)
	return b, err == nil, err
}

// walker reads a folder tree into memory.
type walker struct {
	j     *job
	t     *tree
	files map[string][]byte
	// onPath holds the real paths of the folders being walked, to stop
	// symlink loops.
	onPath map[string]bool
}

// walk reads the folder at the real path disk, which the component sees
// at rel.
func (w *walker) walk(disk, rel string) error {
	entries, err := os.ReadDir(disk)
	if err != nil {
		return w.j.refuse(rel, 0, "", "%v", err)
	}
	for _, e := range entries {
		p, r := filepath.Join(disk, e.Name()), path.Join(rel, e.Name())
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			if w.ignored(r, false) || w.ignored(r, true) {
				continue // ignored links are never followed
			}
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return w.j.refuse(r, 0, "", "symlink cannot be resolved: %v", err)
			}
			if !within(target, w.t.root) {
				return w.j.refuse(r, 0, "", "symlink points to %s, outside the component folder %s", target, w.t.root)
			}
			st, err := os.Stat(target)
			if err != nil {
				return w.j.refuse(r, 0, "", "%v", err)
			}
			p, mode = target, st.Mode().Type()
		}
		switch {
		case mode.IsDir():
			if w.ignored(r, true) {
				continue
			}
			if w.onPath[p] {
				return w.j.refuse(r, 0, "", "symlink loop: %s is one of its own parents", p)
			}
			w.onPath[p] = true
			err := w.walk(p, r)
			delete(w.onPath, p)
			if err != nil {
				return err
			}
		case mode.IsRegular():
			if w.ignored(r, false) {
				continue
			}
			b, err := readCapped(w.t.root, p)
			if err != nil {
				return w.j.refuse(r, 0, "", "%w", err)
			}
			w.files[r] = b
		default:
			return w.j.refuse(r, 0, "", "not a regular file or folder")
		}
	}
	return nil
}

func (w *walker) ignored(rel string, isDir bool) bool {
	return w.t.hidden[rel] || w.t.ignored(rel, isDir)
}

// within reports whether p is root or below it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
