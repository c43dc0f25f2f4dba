package review

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// CopyWorkTree copies the work tree's files git would commit (tracked,
// and untracked ones it does not ignore) into dst, so that the head side
// of a review renders in a folder of its own, as a revision does, and
// nothing is ever written into the work tree. Reads go through the
// repository's root: symlinks are copied as symlinks, never followed;
// special files are left out; a file over fsroot.MaxFileSize is copied as
// a sparse file of the same size (a render refuses it by its size before
// reading it, as it would in the work tree). The total is bounded by
// MaxRevisionBytes and MaxRevisionEntries.
func (r *Repo) CopyWorkTree(ctx context.Context, dst string) error {
	out, err := git(ctx, r.Top, nil, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	src, err := os.OpenRoot(r.Top)
	if err != nil {
		return err
	}
	defer src.Close()
	to, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer to.Close()
	var total int64
	names := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	if len(names) > MaxRevisionEntries {
		return fmt.Errorf("%w: the work tree has more than %d files", ErrArchive, MaxRevisionEntries)
	}
	for _, n := range names {
		if len(n) == 0 {
			continue
		}
		name := filepath.FromSlash(string(n))
		fi, err := src.Lstat(name)
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			return err
		}
		if dir := filepath.Dir(name); dir != "." {
			if err := to.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := src.Readlink(name)
			if err != nil {
				return err
			}
			if err := to.Symlink(target, name); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := copyFile(src, to, name, fi, &total); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(src, to *os.Root, name string, fi os.FileInfo, total *int64) error {
	mode := os.FileMode(0o644)
	if fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	w, err := to.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	defer w.Close()
	if fi.Size() > fsroot.MaxFileSize {
		return w.Truncate(fi.Size())
	}
	*total += fi.Size()
	if *total > MaxRevisionBytes {
		return fmt.Errorf("%w: the work tree holds more than %d bytes", ErrArchive, MaxRevisionBytes)
	}
	f, err := src.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(w, io.LimitReader(f, fsroot.MaxFileSize)); err != nil {
		return err
	}
	return w.Close()
}
