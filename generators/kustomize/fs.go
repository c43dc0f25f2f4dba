package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// treeFS is the read-only filesys.FileSystem kustomize builds from: the
// tree at its root's absolute path. A path outside the root does not
// exist; reading one, or a path the tree refuses, records the refusal,
// which the build reports instead of kustomize's own message.
type treeFS struct{ t *tree }

var _ filesys.FileSystem = treeFS{}

// errReadOnly: kustomize build writes nothing.
var errReadOnly = errors.New("the component folder is read-only")

// rel maps an absolute path to the tree. record says whether a path
// outside the root is a refusal (a read) rather than a probe.
func (f treeFS) rel(p string, record bool) (string, error) {
	p = filepath.Clean(p)
	root := f.t.root
	switch {
	case p == root:
		return ".", nil
	case within(p, root):
		r, _ := filepath.Rel(root, p)
		return filepath.ToSlash(r), nil
	}
	err := fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	if record {
		f.t.refused(f.t.j.fileError("", 0, sourceField, fmt.Errorf("%w: kustomize reads %s, outside %s", ErrKustomization, p, f.t.bound())))
	}
	return "", err
}

// over records, and returns, a budget error: the deadline passed, or the
// build read too much.
func (f treeFS) over(err error) error {
	f.t.refused(f.t.j.spec.FieldError(sourceField, fmt.Errorf("kustomize build %s: %w", f.t.j.dir, err)))
	return err
}

// stat is tree.stat for an absolute path, recording refusals.
func (f treeFS) stat(p string, record bool) (string, entry, bool, error) {
	if err := f.t.budget.check(); err != nil {
		return "", entry{}, false, f.over(err)
	}
	rel, err := f.rel(p, record)
	if err != nil {
		return "", entry{}, false, err
	}
	e, ok, err := f.t.stat(rel)
	if err != nil {
		f.t.refused(err)
	}
	return rel, e, ok, err
}

func (f treeFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (f treeFS) Mkdir(string) error                  { return errReadOnly }
func (f treeFS) MkdirAll(string) error               { return errReadOnly }
func (f treeFS) RemoveAll(string) error              { return errReadOnly }
func (f treeFS) WriteFile(string, []byte) error      { return errReadOnly }

func (f treeFS) Open(p string) (filesys.File, error) {
	b, err := f.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(b), info: fileInfo{name: filepath.Base(p), size: int64(len(b))}}, nil
}

func (f treeFS) IsDir(p string) bool {
	_, e, ok, _ := f.stat(p, false)
	return ok && e.dir
}

func (f treeFS) Exists(p string) bool {
	_, _, ok, _ := f.stat(p, false)
	return ok
}

func (f treeFS) ReadDir(p string) ([]string, error) {
	if err := f.t.budget.check(); err != nil {
		return nil, f.over(err)
	}
	rel, err := f.rel(p, true)
	if err != nil {
		return nil, err
	}
	names, err := f.t.readDir(rel)
	if err != nil {
		f.t.refused(err)
	}
	return names, err
}

func (f treeFS) ReadFile(p string) ([]byte, error) {
	rel, err := f.rel(p, true)
	if err != nil {
		return nil, err
	}
	b, err := f.t.readFile(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNotFile) {
		f.t.refused(err)
	}
	if err == nil {
		if err := f.t.budget.read(b); err != nil {
			return nil, f.over(err)
		}
	}
	return bytes.Clone(b), err
}

// CleanedAbs resolves symlinks as kustomize's disk filesystem does, so
// that its load restrictions see the same folders.
func (f treeFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	if !filepath.IsAbs(p) {
		return "", "", fmt.Errorf("%s: the component folder takes absolute paths only", p)
	}
	_, e, ok, err := f.stat(p, true)
	switch {
	case err != nil:
		return "", "", err
	case !ok:
		return "", "", fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	abs := filepath.Join(f.t.root, filepath.FromSlash(e.real))
	if e.dir {
		return filesys.ConfirmedDir(abs), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(abs)), filepath.Base(abs), nil
}

// Glob matches like filepath.Glob, leaving out hidden files unless the
// pattern names them, as kustomize's disk filesystem does.
func (f treeFS) Glob(pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	var out []string
	// Walk from the pattern's folder without wildcards, not the whole
	// root.
	base := filepath.Dir(pattern)
	for strings.ContainsAny(base, `*?[\`) {
		base = filepath.Dir(base)
	}
	if !within(filepath.Clean(base), f.t.root) {
		base = f.t.root
	}
	err := f.Walk(base, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if ok, _ := filepath.Match(pattern, p); ok {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !filesys.IsHiddenFilePath(pattern) {
		out = filesys.RemoveHiddenFiles(out)
	}
	return out, nil
}

// Walk visits the tree below p in lexical order, as filepath.Walk.
func (f treeFS) Walk(p string, fn filepath.WalkFunc) error {
	_, e, ok, err := f.stat(p, true)
	if err == nil && !ok {
		err = fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	if err != nil {
		return fn(p, nil, err)
	}
	return f.walk(p, e, fn, map[string]bool{})
}

func (f treeFS) walk(p string, e entry, fn filepath.WalkFunc, onPath map[string]bool) error {
	info := fileInfo{name: filepath.Base(p), dir: e.dir}
	if e.dir {
		if onPath[e.real] {
			return fn(p, info, fmt.Errorf("%s: symlink loop", p))
		}
		onPath[e.real] = true
		defer delete(onPath, e.real)
	}
	if err := fn(p, info, nil); err != nil || !e.dir {
		if errors.Is(err, filepath.SkipDir) {
			return nil
		}
		return err
	}
	names, err := f.ReadDir(p)
	if err != nil {
		return fn(p, info, err)
	}
	for _, n := range names {
		child := filepath.Join(p, n)
		_, ce, ok, err := f.stat(child, true)
		switch {
		case err != nil:
			if err := fn(child, nil, err); err != nil && !errors.Is(err, filepath.SkipDir) {
				return err
			}
		case !ok:
		default:
			if err := f.walk(child, ce, fn, onPath); err != nil {
				return err
			}
		}
	}
	return nil
}

// memFile is an open file of the tree.
type memFile struct {
	*bytes.Reader
	info fileInfo
}

func (m *memFile) Write([]byte) (int, error)  { return 0, errReadOnly }
func (m *memFile) Close() error               { return nil }
func (m *memFile) Stat() (os.FileInfo, error) { return m.info, nil }

// fileInfo describes a file or folder of the tree.
type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }
