package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Root reads the files of a render below a root folder (the repository,
// or under Argo CD the checkout) and never outside it: a path that leaves
// it lexically or through a symlink is ErrOutsideRoot, and only regular
// files of at most MaxFileSize bytes are read. Symlinks inside the root
// are followed when they stay inside it and are relative (os.Root's
// rule). A Root is safe for concurrent use.
type Root struct {
	dir  string // absolute, as given
	real string // with symlinks resolved
	root *os.Root
}

// OpenRoot opens the root folder dir.
func OpenRoot(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", dir, err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", dir, err)
	}
	return &Root{dir: abs, real: real, root: r}, nil
}

// Close releases the root.
func (r *Root) Close() error { return r.root.Close() }

// Dir returns the absolute path of the root.
func (r *Root) Dir() string { return r.dir }

// Rel returns path (absolute, or relative to the current folder)
// relative to the root, or ErrOutsideRoot when it lies outside the root
// lexically.
func (r *Root) Rel(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for _, base := range []string{r.dir, r.real} {
		if rel, err := filepath.Rel(base, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel, nil
		}
	}
	return "", fmt.Errorf("%w: %s is outside %s", ErrOutsideRoot, path, r.dir)
}

// Stat returns what path leads to, following symlinks that stay inside
// the root.
func (r *Root) Stat(path string) (fs.FileInfo, error) {
	rel, err := r.Rel(path)
	if err != nil {
		return nil, err
	}
	fi, err := r.root.Stat(rel)
	if err != nil {
		return nil, r.explain(path, err)
	}
	return fi, nil
}

// Lstat returns what path is, not following a final symlink.
func (r *Root) Lstat(path string) (fs.FileInfo, error) {
	rel, err := r.Rel(path)
	if err != nil {
		return nil, err
	}
	fi, err := r.root.Lstat(rel)
	if err != nil {
		return nil, r.explain(path, err)
	}
	return fi, nil
}

// ReadDir lists the folder path, sorted by name.
func (r *Root) ReadDir(path string) ([]fs.DirEntry, error) {
	rel, err := r.Rel(path)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(r.root.FS(), filepath.ToSlash(rel))
	if err != nil {
		return nil, r.explain(path, err)
	}
	return entries, nil
}

// ReadFile reads the regular file path, at most MaxFileSize bytes.
func (r *Root) ReadFile(path string) ([]byte, error) {
	return r.readWith(path, ReadRegular)
}

// MapFile is ReadFile for a file nothing writes in place while the
// program runs (one written whole and renamed into place, as the tree
// cache's chunks are): on Linux its bytes are the page cache's, mapped
// read only and kept for the life of the process, instead of a copy in
// fresh memory. The same rules as ReadFile (inside the root, a regular
// file of at most MaxFileSize bytes, no wait on a FIFO); where the kernel
// does not map it, it is read. Its bytes must never be written to, and a
// file cut short meanwhile faults the program that reads past its end: use
// it only for files whose writers replace them whole.
func (r *Root) MapFile(path string) ([]byte, error) {
	return r.readWith(path, mapRegular)
}

// readWith reads path, relative to the root, with read (ReadRegular,
// mapRegular), its error explained.
func (r *Root) readWith(path string, read func(*os.Root, string) ([]byte, error)) ([]byte, error) {
	rel, err := r.Rel(path)
	if err != nil {
		return nil, err
	}
	b, err := read(r.root, rel)
	if err != nil {
		return nil, r.explain(path, err)
	}
	return b, nil
}

// CheckFile refuses what ReadFile would refuse, without reading: path
// must lead, inside the root, to a folder or to a regular file of at
// most MaxFileSize bytes.
func (r *Root) CheckFile(path string) (fs.FileInfo, error) {
	fi, err := r.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return fi, nil
	}
	if err := CheckRegular(fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// explain turns os.Root's refusal of an escaping path (an error without
// an errno) into ErrOutsideRoot, saying where the path leads.
func (r *Root) explain(path string, err error) error {
	var errno syscall.Errno
	if errors.Is(err, ErrNotRegular) || errors.Is(err, ErrTooLarge) || errors.As(err, &errno) || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if target, eerr := filepath.EvalSymlinks(path); eerr == nil {
		if abs, _ := filepath.Abs(target); within(abs, r.real) {
			return fmt.Errorf("%w: %s leads to %s through an absolute symlink; make the link relative", ErrOutsideRoot, path, abs)
		}
		return fmt.Errorf("%w: %s leads to %s, outside %s", ErrOutsideRoot, path, target, r.dir)
	}
	return fmt.Errorf("%w: %s leads outside %s", ErrOutsideRoot, path, r.dir)
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// ReadFile reads the regular file path below the folder root: a
// one-shot Root.
func ReadFile(root, path string) ([]byte, error) {
	r, err := OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(path)
}

// Confine refuses a path that leaves the root lexically, or whose
// longest existing part leads outside it through a symlink (ErrOutsideRoot).
// The path need not exist: an output folder is confined before it is
// made.
func (r *Root) Confine(path string) error {
	rel, err := r.Rel(path)
	if err != nil {
		return err
	}
	for p := rel; ; p = filepath.Dir(p) {
		_, err := r.root.Stat(p)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			if e := r.explain(filepath.Join(r.dir, p), err); errors.Is(e, ErrOutsideRoot) {
				return e
			}
			var errno syscall.Errno
			if errors.As(err, &errno) && errno != syscall.ENOTDIR {
				return err
			}
		}
		if p == "." || p == string(filepath.Separator) {
			return nil
		}
	}
}

// MkdirAll makes the folder path and its missing parents below the root,
// refusing it (ErrOutsideRoot) when it leaves the root lexically or
// through a symlink, before and after it is made.
func (r *Root) MkdirAll(path string) error {
	if err := r.Confine(path); err != nil {
		return err
	}
	rel, err := r.Rel(path)
	if err != nil {
		return err
	}
	if err := r.root.MkdirAll(rel, 0o755); err != nil {
		return fmt.Errorf("making %s: %w", path, r.explain(path, err))
	}
	return r.Confine(path)
}

// MkdirBelowExisting makes the folder dir and its missing parents below
// the nearest of its ancestors that exists (a folder of the user's, such
// as the cache folder's parent), through that folder as a Root: what is
// made never passes through a symlink, and a dir that exists is left as
// it is.
func MkdirBelowExisting(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for anchor := abs; ; anchor = filepath.Dir(anchor) {
		r, err := OpenRoot(anchor)
		if err == nil {
			defer r.Close()
			if anchor == abs {
				return nil
			}
			return r.MkdirAll(abs)
		}
		if !errors.Is(err, fs.ErrNotExist) || anchor == filepath.Dir(anchor) {
			return err
		}
	}
}
