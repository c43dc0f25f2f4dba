package fsroot

import "errors"

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
