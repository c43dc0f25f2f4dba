package fsroot

import (
	"io/fs"
	"os"
)

// ListDir lists the folder d is open on, sorted by name: what
// fs.ReadDir(d.FS(), ".") lists, confined as d is. On Linux each entry's
// type comes from the listing itself (getdents' d_type): only an entry
// of unknown type (a file system that does not say) is lstat'd, relative
// to the folder's own handle, never by path; where fs.ReadDir on a folder
// of an os.Root lstats every entry (tens of thousands of spec files cost
// as many system calls and a FileInfo each, before any is read). A
// symlink is listed as one (fs.ModeSymlink): following it, through the
// Root, is the caller's. Elsewhere it is fs.ReadDir.
//
// An entry's Info is an lstat of the entry through d when called: call it
// while d is open.
func ListDir(d *os.Root) ([]fs.DirEntry, error) { return listDir(d) }

// dirEntry is an entry ListDir lists.
type dirEntry struct {
	name string
	typ  fs.FileMode
	d    *os.Root
}

func (e *dirEntry) Name() string               { return e.name }
func (e *dirEntry) IsDir() bool                { return e.typ.IsDir() }
func (e *dirEntry) Type() fs.FileMode          { return e.typ }
func (e *dirEntry) Info() (fs.FileInfo, error) { return e.d.Lstat(e.name) }
func (e *dirEntry) String() string             { return fs.FormatDirEntry(e) }
