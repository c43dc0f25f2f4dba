//go:build linux

package fsroot

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// folderFd opens the folder of d (below its os.Root, so confined as it
// is) for readDirect; nil where it cannot.
func folderFd(d *os.Root) *os.File {
	f, err := d.Open(".")
	if err != nil {
		return nil
	}
	return f
}

// shortReadIsEnd reports whether the folder open as fd is on a local
// file system whose regular files read short only at their end (ext2-4,
// XFS, Btrfs, tmpfs, overlayfs over them): there, a read that returns
// less than asked has reached the end, and readDirect need not ask again
// to see it. Elsewhere (FUSE, network file systems) a short read proves
// nothing: the end is the read that returns nothing.
func shortReadIsEnd(fd int) bool { return LocalFileSystem(fd) }

// LocalFileSystem reports whether the file or folder open as fd is on a
// local file system (ext2-4, XFS, Btrfs, tmpfs, overlayfs over them): its
// files read short only at their end, and its times come from this
// machine's clock.
func LocalFileSystem(fd int) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		return true
	}
	return false
}

// readCalls counts readDirect's read system calls (tests).
var readCalls atomic.Int64

// readDirect reads the regular file name (one path element, not "." or
// "..") in the folder fd is open on, with raw system calls: one open
// that follows no symlink and does not block on a FIFO, one fstat,
// reads to the end (shortIsEnd: a short read is the end, see
// shortReadIsEnd), one close; no os.File (whose open registers every
// file with the poller, in vain for a regular one). ok is false on
// anything but a whole regular file of at most MaxFileSize bytes (a
// symlink, a FIFO, a device, a file that grew, any error): the caller
// then reads through os.Root, whose answer and error are the rule.
func readDirect(fd int, name string, shortIsEnd bool) (b []byte, ok bool) {
	f, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(f)
	var st unix.Stat_t
	if err := unix.Fstat(f, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < 0 || st.Size > MaxFileSize {
		return nil, false
	}
	// A byte more than stat gave: a file that grew fills it, and is
	// read again the careful way.
	b = make([]byte, 0, st.Size+1)
	for {
		if len(b) == cap(b) {
			return nil, false
		}
		want := cap(b) - len(b)
		n, err := unix.Read(f, b[len(b):cap(b)])
		readCalls.Add(1)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, false
		case n == 0:
			return b, true
		}
		b = b[:len(b)+n]
		if shortIsEnd && n < want {
			return b, true
		}
	}
}
