//go:build (linux && !amd64 && !arm64) || darwin || freebsd

package outtree

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// lstatPath is fstatat(fd, path, AT_SYMLINK_NOFOLLOW) for path, a
// NUL-terminated slice, through unix.Fstatat (which copies it).
func lstatPath(fd int, path []byte, st *unix.Stat_t) error {
	return unix.Fstatat(fd, unsafe.String(&path[0], len(path)-1), st, unix.AT_SYMLINK_NOFOLLOW)
}
