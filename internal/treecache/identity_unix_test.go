//go:build linux || darwin || freebsd

package treecache

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIdentity: a file's identity stays while nothing touches it, and
// changes when it is rewritten in place with bytes of the same size and
// its mtime put back (ctime), and when another file is renamed over it.
func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "exe")
	if err := os.WriteFile(p, []byte("build 1"), 0o755); err != nil {
		t.Fatal(err)
	}
	id := func() string {
		t.Helper()
		s, err := identity(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := id()
	if again := id(); again != first {
		t.Fatalf("identity changed with nothing touched: %s, then %s", first, again)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // past the file system's time step
	if err := os.WriteFile(p, []byte("build 2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	rewritten := id()
	if rewritten == first {
		t.Errorf("identity kept through a same-size rewrite with its mtime put back: %s", first)
	}
	q := filepath.Join(dir, "new")
	if err := os.WriteFile(q, []byte("build 3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	if replaced := id(); replaced == rewritten {
		t.Errorf("identity kept when another file replaced it: %s", replaced)
	}
	if _, err := identity(filepath.Join(dir, "missing")); err == nil {
		t.Error("the identity of a missing file")
	}
}
