package fsroot

import (
	"os"
	"path/filepath"
)

// Dir is a folder below a Root, opened once to read several files
// directly in it: each read is one open relative to the folder's handle,
// where Root.ReadFile opens every folder of the path again (tens of
// thousands of spec files in a few folders). A Dir is safe for concurrent
// use; Close it when done.
type Dir struct {
	r    *Root
	path string   // as given to OpenDir
	d    *os.Root // nil when the folder could not be opened: every read goes through r
	// f and fd are the folder opened for readDirect (Linux), below d;
	// f nil: none. shortIsEnd: its file system ends a file's reads with
	// a short one (shortReadIsEnd).
	f          *os.File
	fd         int
	shortIsEnd bool
}

// OpenDir opens the folder path below the root, following symlinks that
// stay inside it. It never fails: when the folder cannot be opened (it
// leaves the root, it is gone, it is not a folder), ReadFile reads
// through the Root and reports what Root.ReadFile reports.
func (r *Root) OpenDir(path string) *Dir {
	dir := &Dir{r: r, path: path}
	rel, err := r.Rel(path)
	if err != nil {
		return dir
	}
	if d, err := r.root.OpenRoot(rel); err == nil {
		dir.d = d
		if dir.f = folderFd(d); dir.f != nil {
			dir.fd = int(dir.f.Fd())
			dir.shortIsEnd = shortReadIsEnd(dir.fd)
		}
	}
	return dir
}

// ReadFile reads the regular file name (one path element) in the
// folder: what Root.ReadFile(filepath.Join(path, name)) reads. Its
// guards are the same (regular files only, at most MaxFileSize bytes, a
// FIFO never opened blocking), and so is its confinement: a name that
// is a symlink is followed only inside the folder here; anything else,
// and every error, is read or explained again through the Root (a
// symlink to a sibling folder stays allowed, errors keep their wording).
func (d *Dir) ReadFile(name string) ([]byte, error) {
	if d.d != nil && name != "" && name != "." && name != ".." && filepath.Base(name) == name {
		if d.f != nil {
			if b, ok := readDirect(d.fd, name, d.shortIsEnd); ok {
				return b, nil
			}
		}
		if b, err := ReadRegular(d.d, name); err == nil {
			return b, nil
		}
	}
	return d.r.ReadFile(filepath.Join(d.path, name))
}

// Close releases the folder.
func (d *Dir) Close() error {
	if d.d == nil {
		return nil
	}
	if d.f != nil {
		_ = d.f.Close()
	}
	return d.d.Close()
}
