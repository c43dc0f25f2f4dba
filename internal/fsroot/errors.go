package fsroot

import (
	"errors"
	"runtime"
	"syscall"
)

// Sentinel errors, checked with errors.Is. Public APIs return them:
// generators re-exports each as the same value (generators.ErrOutsideRoot,
// ErrNotRegular, ErrTooLarge), the name callers outside the module use.
var (
	// ErrOutsideRoot: a path leaves the root folder, lexically or through
	// a symlink.
	ErrOutsideRoot = errors.New("path leaves the repository root")
	// ErrNotRegular: a file to read is not a regular file (a FIFO, a
	// device, a socket), or a tree holds a symlink.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: a file is larger than MaxFileSize.
	ErrTooLarge = errors.New("file too large")
)

// IsNoFollow reports whether err is an open's refusal to follow a
// symlink (O_NOFOLLOW): ELOOP, as POSIX has it, or EMLINK, as FreeBSD
// gives it.
func IsNoFollow(err error) bool {
	return errors.Is(err, syscall.ELOOP) || runtime.GOOS == "freebsd" && errors.Is(err, syscall.EMLINK)
}
