//go:build linux || darwin || freebsd

package treecache

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// identity names the version of the file at path: replacing or rewriting
// it changes its device and inode, size, mtime or ctime (x/sys names
// these fields alike on every system here).
func identity(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d %d %d %d %d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Sec, st.Ctim.Nsec), nil
}
