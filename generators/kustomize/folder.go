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

	"github.com/wavesmith/wavesmith/manifest"
)

// folder is the component folder in memory.
type folder struct {
	// files holds the content by slash path relative to the folder;
	// after rendering, the rendered content by output path.
	files map[string][]byte
	// origin maps an output path to the template it was rendered from,
	// when the two differ (a template suffix was dropped).
	origin map[string]string
	cfg    config
	// real is the absolute folder path with symlinks resolved; kustomize
	// sees the files at the same path in its in-memory filesystem.
	real string
}

// source returns the path, relative to the folder, of the file an output
// path came from.
func (f *folder) source(rel string) string {
	if o, ok := f.origin[rel]; ok {
		return o
	}
	return rel
}

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

// read loads every file of the folder, following symlinks that stay
// inside it, and leaves out what IgnoreFile lists. ConfigFile and
// IgnoreFile at the top are read and removed.
func (j *job) read() (*folder, error) {
	real, err := filepath.EvalSymlinks(j.dir)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return nil, j.spec.FieldError(sourceField, fmt.Errorf("%w: %v", manifest.ErrInvalid, err))
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return nil, j.spec.FieldError(sourceField, fmt.Errorf("%w: %s is not a folder", manifest.ErrInvalid, j.dir))
	}
	f := &folder{files: map[string][]byte{}, real: real}
	r := walker{j: j, f: f, onPath: map[string]bool{real: true}}
	switch b, err := os.ReadFile(filepath.Join(real, IgnoreFile)); {
	case err == nil:
		r.ignore = gitignore.NewGitIgnoreFromReader("/", bytes.NewReader(b))
	case !os.IsNotExist(err):
		return nil, j.refuse(IgnoreFile, 0, "", "%v", err)
	}
	if err := r.walk(real, ""); err != nil {
		return nil, err
	}
	delete(f.files, IgnoreFile)
	if b, ok := f.files[ConfigFile]; ok {
		delete(f.files, ConfigFile)
		if err := yaml.UnmarshalStrict(b, &f.cfg); err != nil {
			return nil, j.refuse(ConfigFile, 0, "", "%v", err)
		}
		if len(f.cfg.IncludedFiles) > 0 {
			return nil, j.refuse(ConfigFile, 0, "includedFiles", "not supported: wavesmith reads only the component folder; move the files into it")
		}
		if len(f.cfg.IncludedKustomizations) > 0 {
			return nil, j.refuse(ConfigFile, 0, "includedKustomizations", "not supported: wavesmith reads only the component folder; point spec.source.kustomization.path at a folder holding all the kustomizations")
		}
	}
	return f, nil
}

// walker reads a folder tree.
type walker struct {
	j      *job
	f      *folder
	ignore gitignore.IgnoreMatcher
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
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return w.j.refuse(r, 0, "", "symlink cannot be resolved: %v", err)
			}
			if !within(target, w.f.real) {
				return w.j.refuse(r, 0, "", "symlink points to %s, outside the component folder %s", target, w.f.real)
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
			b, err := os.ReadFile(p)
			if err != nil {
				return w.j.refuse(r, 0, "", "%v", err)
			}
			w.f.files[r] = b
		default:
			return w.j.refuse(r, 0, "", "not a regular file or folder")
		}
	}
	return nil
}

func (w *walker) ignored(rel string, isDir bool) bool {
	return w.ignore != nil && rel != IgnoreFile && rel != ConfigFile && w.ignore.Match("/"+rel, isDir)
}

// within reports whether p is root or below it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
