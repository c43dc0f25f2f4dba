//go:build linux

package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// unknownTypes, for tests: every entry's type is taken as DT_UNKNOWN
// (what some file systems list), so the lstat fallback runs.
var unknownTypes bool

// direntBufs are getdents buffers: 32 KiB lists some 800 spec files a
// call, where os reads 8 KiB.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func listDir(d *os.Root) ([]fs.DirEntry, error) {
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var entries []fs.DirEntry
	var lerr error
	if err := rc.Control(func(fd uintptr) { entries, lerr = listFd(d, int(fd)) }); err != nil {
		return nil, err
	}
	return entries, lerr
}

// listFd lists the folder open as fd (the folder of d): names and types
// from getdents, an lstat relative to fd for a type getdents does not
// know. An entry gone before it is lstat'd is left out, as os leaves it.
func listFd(d *os.Root, fd int) ([]fs.DirEntry, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	type span struct {
		end int
		typ uint8
	}
	var names []byte // every name, one after the other: one string for the folder
	var spans []span
	err := ReadDirents(fd, buf, func(name []byte, typ uint8) {
		names = append(names, name...)
		spans = append(spans, span{len(names), typ})
	})
	if err != nil {
		return nil, &fs.PathError{Op: "getdents", Path: ".", Err: err}
	}
	all := string(names)
	backing := make([]dirEntry, 0, len(spans))
	start := 0
	for _, s := range spans {
		name := all[start:s.end]
		start = s.end
		typ, known := DirentMode(s.typ)
		if !known || unknownTypes {
			var st unix.Stat_t
			err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			if err != nil {
				return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
			}
			typ = StatMode(st.Mode)
		}
		backing = append(backing, dirEntry{name: name, typ: typ, d: d})
	}
	slices.SortFunc(backing, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	entries := make([]fs.DirEntry, len(backing))
	for i := range backing {
		entries[i] = &backing[i]
	}
	return entries, nil
}
