//go:build linux && (amd64 || arm64)

package outtree

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// lstatPath is fstatat(fd, path, AT_SYMLINK_NOFOLLOW) for path, a
// NUL-terminated slice: the system call unix.Fstatat makes, without the
// copy of its path (sysFstatat: the call's number differs by
// architecture).
func lstatPath(fd int, path []byte, st *unix.Stat_t) error {
	_, _, e := unix.Syscall6(sysFstatat, uintptr(fd), uintptr(unsafe.Pointer(&path[0])), uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
