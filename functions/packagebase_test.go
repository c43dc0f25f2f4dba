//go:build unix

package functions

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestHoldsAllReadsOnlyInside: the package search reads the items' files
// through the current folder as a root. A file that holds the object but
// lies outside (through ../ or a symlink), is a FIFO or is not there holds
// nothing, so it is never read; the same object inside is found (the
// control).
func TestHoldsAllReadsOnlyInside(t *testing.T) {
	top := t.TempDir()
	work := filepath.Join(top, "work")
	spec := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n")
	for _, f := range []string{filepath.Join(top, "outside.yaml"), filepath.Join(work, "inside.yaml")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, spec, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(top, "outside.yaml"), filepath.Join(work, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(work, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := fsroot.OpenRoot(work)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	key := manifest.Key{Kind: "ConfigMap", Name: "cm"}
	for path, want := range map[string]bool{
		"inside.yaml":     true,
		"../outside.yaml": false,
		"link.yaml":       false,
		"fifo.yaml":       false,
		"missing.yaml":    false,
	} {
		// Paths are relative to the current folder, as kpt gives them.
		if got := holdsAll(root, work, []string{path}, []manifest.Key{key}); got != want {
			t.Errorf("holdsAll(%s) = %v, want %v", path, got, want)
		}
	}
	if anyFile(root, []string{filepath.Join(work, "../outside.yaml"), filepath.Join(work, "link.yaml")}) {
		t.Error("anyFile counted a file outside the folder")
	}
}
