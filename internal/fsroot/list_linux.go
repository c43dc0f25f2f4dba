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
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: ".", Err: err}
		}
		if n <= 0 {
			break
		}
		// Room for what this call gave, at once: a record is at least 24
		// bytes, its name shorter.
		names, spans = slices.Grow(names, n), slices.Grow(spans, n/24)
		b := buf[:n]
		for len(b) > 0 {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			if len(b) < 19 {
				return nil, &fs.PathError{Op: "getdents", Path: ".", Err: errMalformed}
			}
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return nil, &fs.PathError{Op: "getdents", Path: ".", Err: errMalformed}
			}
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if dot := len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.'; !dot && len(name) > 0 {
				names = append(names, name...)
				spans = append(spans, span{len(names), b[18]})
			}
			b = b[reclen:]
		}
	}
	all := string(names)
	backing := make([]dirEntry, 0, len(spans))
	start := 0
	for _, s := range spans {
		name := all[start:s.end]
		start = s.end
		typ, known := direntType(s.typ)
		if !known || unknownTypes {
			var st unix.Stat_t
			err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			if err != nil {
				return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
			}
			typ = statType(st.Mode)
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

var errMalformed = errors.New("malformed folder entry")

// direntType is the type a getdents d_type gives, and whether it gives
// one.
func direntType(t uint8) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// statType is the type of a stat's mode, as os gives it.
func statType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
