package hostile

import (
	"strconv"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes at p (made if missing) and
// unmounts it when the case ends, before its folder is removed. It needs
// root (CI and the sessions run as root); a case that asks for one fails
// where it cannot mount, never skips.
func mountTmpfs(t *testing.T, p string, size int64) {
	t.Helper()
	mustMkdir(t, p)
	if err := syscall.Mount("tmpfs", p, "tmpfs", 0, "size="+strconv.FormatInt(size, 10)+",nr_inodes=4096,mode=0755"); err != nil {
		t.Fatalf("mounting a tmpfs at %s (the case needs root): %v", p, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(p, 0); err != nil {
			t.Errorf("unmounting %s: %v", p, err)
		}
	})
}
