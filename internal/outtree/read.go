package outtree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// Read reads the tree at dir, keyed like the files given to Write. A
// missing dir is an empty tree. A tree holds only folders and regular
// files of at most fsroot.MaxFileSize bytes: a symlink (or dir itself being
// one) or a special file is fsroot.ErrNotRegular, never followed, so that
// comparing a committed tree never shows a file from elsewhere. A tree
// holding MarkerFile (a render was killed while it updated the tree) is
// ErrInterrupted.
func Read(dir string) (map[string][]byte, error) {
	if err := checkTreeDir(dir); errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil
	} else if err != nil {
		return nil, err
	}
	files, err := readFiles(dir)
	if err != nil {
		return nil, err
	}
	if _, ok := files[MarkerFile]; ok {
		return nil, interrupted(dir)
	}
	return files, nil
}

// ReadIndexed is Read for a caller that wants the tree to hold want and
// knows it from its last write or check (known): a file whose lstat
// identity is the recorded one (not racy, see Index) and whose recorded
// bytes are want's is not read, and its entry is want's slice; every
// other file is read as Read reads it, and the folders are listed as
// always, so that every difference from want is still found. It returns
// the Index of the files found to hold want's bytes (nil where none is
// taken: not Linux, macOS or FreeBSD, or a missing dir).
func ReadIndexed(dir string, want map[string][]byte, known Known) (map[string][]byte, *Index, error) {
	if err := checkTreeDir(dir); errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	files, ix, err := readIndexed(dir, want, known)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := files[MarkerFile]; ok {
		return nil, nil, interrupted(dir)
	}
	ix.sumRacy(want)
	return files, ix, nil
}

// interrupted is the error of a tree holding MarkerFile.
func interrupted(dir string) error {
	return fmt.Errorf("%s: %w while it replaced files (it holds %s): render it again to finish the update", dir, ErrInterrupted, MarkerFile)
}

// readPortable is Read's walk through os.Root, where no faster one is
// written (fastio_unix.go).
func readPortable(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: %w: it is a %s", filepath.Join(dir, p), fsroot.ErrNotRegular, fsroot.ModeName(d.Type()))
		}
		b, err := fsroot.ReadRegular(root, filepath.FromSlash(p))
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, p), err)
		}
		files[p] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// ReadLocked is Read under WaitLock.
func ReadLocked(ctx context.Context, dir string) (map[string][]byte, error) {
	release, err := WaitLock(ctx, dir, nil)
	if err != nil {
		return nil, err
	}
	files, err := Read(dir)
	if rerr := release(); err == nil && rerr != nil {
		return nil, rerr
	}
	return files, err
}

// WaitLock takes the lock Write holds for the tree at dir, waiting for
// it until ctx ends, so that a check never reads a tree a render is
// swapping. Where the lock cannot be made (a read-only checkout, a
// missing parent) it returns a release that does nothing: no render can
// be writing there either. waiting, when not nil, is called once if the
// lock is held, with its holder, before the wait.
func WaitLock(ctx context.Context, dir string, waiting func(holder string)) (release func() error, err error) {
	dir = filepath.Clean(dir)
	release, err = lock(ctx, filepath.Dir(dir), filepath.Base(dir), silentIfNil(waiting))
	switch {
	case err == nil:
		return release, nil
	case cannotLock(err), errors.Is(err, fs.ErrNotExist):
		return func() error { return nil }, nil
	}
	return nil, err
}

// openTree opens the folder dir as a root, refusing a symlink.
func openTree(dir string) (*os.Root, error) {
	if err := checkTreeDir(dir); err != nil {
		return nil, err
	}
	return os.OpenRoot(dir)
}

// checkTreeDir refuses a dir that is a symlink or no folder.
func checkTreeDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w: it is a symbolic link", dir, fsroot.ErrNotRegular)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %w: it is not a folder", dir, ErrNotTree)
	}
	return nil
}

// FS is a read-only fs.FS over a tree (the previous output, for Flux
// handoffs) that never leaves it: symlinks may not lead outside, only
// folders and regular files of at most fsroot.MaxFileSize bytes open, and a
// FIFO or a device is refused without blocking.
type FS struct {
	root *os.Root
}

// OpenFS opens the tree at dir. A missing dir is an error wrapping
// fs.ErrNotExist; dir being a symlink is fsroot.ErrNotRegular; a tree
// holding MarkerFile is ErrInterrupted.
func OpenFS(dir string) (*FS, error) {
	root, err := openTree(dir)
	if err != nil {
		return nil, err
	}
	if _, err := root.Lstat(MarkerFile); err == nil {
		root.Close()
		return nil, interrupted(dir)
	}
	return &FS{root: root}, nil
}

// Close releases the tree.
func (t *FS) Close() error { return t.root.Close() }

// Open opens a folder or a regular file.
func (t *FS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := t.root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, escaped(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		return f, nil
	}
	if err := fsroot.CheckRegular(fi); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &limitedFile{File: f, left: fsroot.MaxFileSize}, nil
}

// ReadFile reads a regular file of the tree.
func (t *FS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	b, err := fsroot.ReadRegular(t.root, filepath.FromSlash(name))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: escaped(err)}
	}
	return b, nil
}

// escaped marks os.Root's refusal of a path leaving it (an error without
// an errno) as fsroot.ErrOutsideRoot.
func escaped(err error) error {
	var errno syscall.Errno
	if errors.Is(err, fsroot.ErrNotRegular) || errors.Is(err, fsroot.ErrTooLarge) || errors.As(err, &errno) || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fmt.Errorf("%w: %w", fsroot.ErrOutsideRoot, err)
}

// limitedFile stops reading after fsroot.MaxFileSize bytes, should the file
// grow after it was opened.
type limitedFile struct {
	*os.File
	left int64
}

func (f *limitedFile) Read(p []byte) (int, error) {
	if f.left <= 0 {
		return 0, fmt.Errorf("%w: more than %d bytes", fsroot.ErrTooLarge, fsroot.MaxFileSize)
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.File.Read(p)
	f.left -= int64(n)
	return n, err
}

var (
	_ fs.FS         = (*FS)(nil)
	_ fs.ReadFileFS = (*FS)(nil)
)
