//go:build linux

package fsroot

import (
	"os"

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

// readDirect reads the regular file name (one path element, not "." or
// "..") in the folder fd is open on, with raw system calls: one open
// that follows no symlink and does not block on a FIFO, one fstat,
// reads to the end, one close; no os.File (whose open registers every
// file with the poller, in vain for a regular one). ok is false on
// anything but a whole regular file of at most MaxFileSize bytes (a
// symlink, a FIFO, a device, a file that grew, any error): the caller
// then reads through os.Root, whose answer and error are the rule.
func readDirect(fd int, name string) (b []byte, ok bool) {
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
		n, err := unix.Read(f, b[len(b):cap(b)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, false
		case n == 0:
			return b, true
		}
		b = b[:len(b)+n]
	}
}
