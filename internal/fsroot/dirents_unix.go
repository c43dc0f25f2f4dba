//go:build linux || darwin || freebsd

package fsroot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errMalformedDirent: the system gave a record that does not parse.
var errMalformedDirent = errors.New("malformed folder entry")

// ReadDirents lists the folder open as fd (getdents on Linux and
// FreeBSD, getdirentries on macOS: unix.ReadDirent) into buf, calling fn
// with each entry's name (not "." or ".."; a slice of buf, valid during
// the call) and its d_type. It is the one parser of those records:
// ListDir's and the tree walk's (internal/outtree). A record is the
// system's struct dirent (unix.Dirent): its length, its type and its
// NUL-ended name are where that struct has them.
func ReadDirents(fd int, buf []byte, fn func(name []byte, typ uint8)) error {
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		if err := parseDirents(buf[:n], fn); err != nil {
			return err
		}
	}
}

// Where unix.Dirent has a record's length, type and name.
const (
	direntReclen = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
	direntType   = int(unsafe.Offsetof(unix.Dirent{}.Type))
	direntName   = int(unsafe.Offsetof(unix.Dirent{}.Name))
)

// parseDirents calls fn with each entry of the records b holds.
func parseDirents(b []byte, fn func(name []byte, typ uint8)) error {
	for len(b) > 0 {
		if len(b) < direntName {
			return errMalformedDirent
		}
		// d_reclen is a uint16 in the machine's order.
		reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
		if reclen < direntName || reclen > len(b) {
			return errMalformedDirent
		}
		name := b[direntName:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if dot := len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.'; !dot && len(name) > 0 {
			fn(name, b[direntType])
		}
		b = b[reclen:]
	}
	return nil
}

// fileKinds maps each kind of folder entry between a listing's d_type,
// stat's S_IFMT and fs.FileMode, as os gives it.
var fileKinds = []struct {
	dt   uint8
	ifmt uint32
	mode fs.FileMode
}{
	{unix.DT_REG, unix.S_IFREG, 0},
	{unix.DT_DIR, unix.S_IFDIR, fs.ModeDir},
	{unix.DT_LNK, unix.S_IFLNK, fs.ModeSymlink},
	{unix.DT_FIFO, unix.S_IFIFO, fs.ModeNamedPipe},
	{unix.DT_SOCK, unix.S_IFSOCK, fs.ModeSocket},
	{unix.DT_CHR, unix.S_IFCHR, fs.ModeDevice | fs.ModeCharDevice},
	{unix.DT_BLK, unix.S_IFBLK, fs.ModeDevice},
}

// DirentMode is the type a d_type gives, and whether it gives one
// (DT_UNKNOWN: a file system that does not say).
func DirentMode(t uint8) (fs.FileMode, bool) {
	for _, k := range fileKinds {
		if k.dt == t {
			return k.mode, true
		}
	}
	return 0, false
}

// StatDirent is the d_type of a stat's mode (DT_UNKNOWN for none).
func StatDirent(m uint32) uint8 {
	for _, k := range fileKinds {
		if k.ifmt == m&unix.S_IFMT {
			return k.dt
		}
	}
	return unix.DT_UNKNOWN
}

// StatMode is the type of a stat's mode, as os gives it.
func StatMode(m uint32) fs.FileMode {
	if t, ok := DirentMode(StatDirent(m)); ok {
		return t
	}
	return fs.ModeIrregular
}
