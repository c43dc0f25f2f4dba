//go:build !linux

package hostile

import "testing"

// mountTmpfs: a file system of a given size to fill is a Linux tmpfs
// here (mount_linux_test.go); a case that asks for one fails elsewhere,
// never skips.
func mountTmpfs(t *testing.T, p string, _ int64) {
	t.Helper()
	t.Fatalf("mounting a tmpfs at %s: the case needs Linux", p)
}
