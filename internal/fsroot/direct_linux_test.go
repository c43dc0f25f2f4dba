package fsroot

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wavesmith/wavesmith/internal/testobj"
)

// TestDirReadsDirectlyAsRoot: a Dir reads every entry of a hostile folder
// (symlinks out and in, a device, a FIFO, a file over the cap) as the
// Root reads it, same bytes and same error, never blocking; the direct
// read takes the regular files alone (the control: it does take them).
func TestDirReadsDirectlyAsRoot(t *testing.T) {
	root, _ := testobj.HostileDir(t, MaxFileSize+1)
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := r.OpenDir(root)
	defer d.Close()
	if d.f == nil {
		t.Fatal("no folder open for direct reads")
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		testobj.InTime(t, name, func() {
			got, gerr := d.ReadFile(name)
			want, werr := r.ReadFile(filepath.Join(root, name))
			if string(got) != string(want) || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
				t.Errorf("%s: Dir read %q, %v; Root read %q, %v", name, got, gerr, want, werr)
			}
			b, ok := readDirect(d.fd, name, d.shortIsEnd)
			if regular := e.Type().IsRegular() && name != "big.yaml"; ok != regular || ok && string(b) != string(want) {
				t.Errorf("%s: read directly: %v (%q), want %v", name, ok, b, regular)
			}
		})
	}
	if _, err := d.ReadFile("big.yaml"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over the cap: %v, want ErrTooLarge", err)
	}
}

// TestDirShortReadIsEnd: on a local file system a file is read with one
// read call, its short read taken as the end; told otherwise (FUSE, NFS)
// the read that returns nothing ends it, one call more. The bytes are the
// same either way.
func TestDirShortReadIsEnd(t *testing.T) {
	dir := t.TempDir()
	want := []byte("kind: ConfigMap\n")
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := r.OpenDir(dir)
	defer d.Close()
	if !d.shortIsEnd {
		t.Fatalf("%s: not taken for a local file system (ext4, XFS, Btrfs, tmpfs, overlayfs)", dir)
	}
	for _, c := range []struct {
		shortIsEnd bool
		calls      int64
	}{{true, 1}, {false, 2}} {
		before := readCalls.Load()
		b, ok := readDirect(d.fd, "a.yaml", c.shortIsEnd)
		if !ok || string(b) != string(want) {
			t.Errorf("shortIsEnd %v: read %q, %v", c.shortIsEnd, b, ok)
		}
		if got := readCalls.Load() - before; got != c.calls {
			t.Errorf("shortIsEnd %v: %d read calls, want %d", c.shortIsEnd, got, c.calls)
		}
	}
}
