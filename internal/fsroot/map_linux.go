//go:build linux

package fsroot

import (
	"os"

	"golang.org/x/sys/unix"
)

// MapsFiles reports whether MapFile maps files here (Linux) rather than
// reading them into the heap: what a caller holding their bytes counts as
// its memory.
func MapsFiles() bool { return true }

// mapFile maps the regular file f, of size bytes (more than none), read
// only and private, for the life of the process; ok is false when the
// kernel refuses (MapFile then reads it: out of mappings, a file system
// that cannot map).
func mapFile(f *os.File, size int64) (b []byte, ok bool) {
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return b, true
}
