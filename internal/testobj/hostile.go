package testobj

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// HostileDir builds a folder root (below t's temporary folder) holding
// every kind of entry an attacker can commit or plant next to regular
// files: symlinks out (absolute, relative, to a device, to a folder),
// symlinks in (relative: fine; absolute: os.Root refuses), a FIFO, and a
// sparse file of big bytes (one over the cap under test); outside is the secret the
// links out point to.
func HostileDir(t *testing.T, big int64) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "repo")
	outside = filepath.Join(base, "secret.yaml")
	write(t, outside, "apiVersion: v1\nkind: Secret\n")
	write(t, filepath.Join(root, "ok.yaml"), "ok\n")
	write(t, filepath.Join(root, "sub", "inner.yaml"), "inner\n")
	links := map[string]string{
		"evil.yaml":     outside,                        // absolute, outside
		"evil-rel.yaml": "../secret.yaml",               // relative, outside
		"zero.yaml":     "/dev/zero",                    // a device
		"inside.yaml":   "sub/inner.yaml",               // relative, inside: fine
		"abs-in.yaml":   filepath.Join(root, "ok.yaml"), // absolute, inside: os.Root refuses
		"up":            "..",                           // a folder outside
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(big); err != nil { // sparse
		t.Fatal(err)
	}
	return root, outside
}

// InTime fails the test when fn blocks for 30 s (a FIFO read forever):
// a refusal must come at once.
func InTime(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
