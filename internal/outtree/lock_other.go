//go:build !unix

package outtree

import "os"

// tryLock: no flock here; the temporary folder and the swap still keep a
// failed render from touching the tree.
func tryLock(*os.File) error { return nil }
