//go:build !unix

package outtree

import "os"

// lockOpenFlags: no O_NOFOLLOW here; lock refuses a symlink it sees
// before the open (isSymlink).
const lockOpenFlags = 0

// tryLock: no flock here; the temporary folder and the swap still keep a
// failed render from touching the tree.
func tryLock(*os.File) error { return nil }
