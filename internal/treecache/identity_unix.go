//go:build linux || darwin || freebsd

package treecache

import (
	"fmt"
	"io/fs"
	"syscall"
)

// identity names the version of a file: replacing or rewriting it
// changes its inode, size, mtime or ctime.
func identity(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
	}
	sec, nsec := ctime(st)
	return fmt.Sprintf("%d %d %d %d %d.%d", st.Dev, st.Ino, st.Size, fi.ModTime().UnixNano(), sec, nsec)
}
