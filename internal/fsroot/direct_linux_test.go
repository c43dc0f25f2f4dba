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
			b, ok := readDirect(d.fd, name)
			if regular := e.Type().IsRegular() && name != "big.yaml"; ok != regular || ok && string(b) != string(want) {
				t.Errorf("%s: read directly: %v (%q), want %v", name, ok, b, regular)
			}
		})
	}
	if _, err := d.ReadFile("big.yaml"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over the cap: %v, want ErrTooLarge", err)
	}
}
