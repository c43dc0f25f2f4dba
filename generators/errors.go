package generators

import "github.com/wavesmith/wavesmith/internal/fsroot"

// Errors of reading inside the root. They are internal/fsroot's
// sentinels, re-exported here as the same values (errors.Is matches
// either name), so that callers outside the module, which cannot import
// an internal package, can check them. This package is their one public
// home: Options.Root states the confinement they enforce, and every public
// package that reads files (the generators, render, config, functions)
// imports it.
var (
	// ErrOutsideRoot: a path leaves the root (Options.Root, the
	// repository root), lexically or through a symlink.
	ErrOutsideRoot = fsroot.ErrOutsideRoot
	// ErrNotRegular: a file to read is not a regular file (a FIFO, a
	// device, a socket), or a source's folders lead back to one being
	// walked.
	ErrNotRegular = fsroot.ErrNotRegular
	// ErrTooLarge: a file, or the input of the KRM function, is larger
	// than its size cap.
	ErrTooLarge = fsroot.ErrTooLarge
)
