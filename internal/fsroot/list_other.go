//go:build !linux

package fsroot

import (
	"io/fs"
	"os"
)

// listDir: fs.ReadDir, which lstats each entry (no d_type here).
func listDir(d *os.Root) ([]fs.DirEntry, error) { return fs.ReadDir(d.FS(), ".") }
