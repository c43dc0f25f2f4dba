package fsroot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMapFileMaps: on Linux MapFile's bytes are the file's pages, mapped
// (the process's mappings, /proc/self/maps, name the file), not a copy;
// ReadFile's are a copy (the control: its file is not mapped). An empty
// file is read.
func TestMapFileMaps(t *testing.T) {
	dir := t.TempDir()
	content := bytes.Repeat([]byte("kind: ConfigMap\n"), 1000)
	for _, n := range []string{"mapped.chunk", "read.chunk"} {
		if err := os.WriteFile(filepath.Join(dir, n), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.chunk"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m, err := r.MapFile(filepath.Join(dir, "mapped.chunk"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.ReadFile(filepath.Join(dir, "read.chunk"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m, content) || !bytes.Equal(b, content) {
		t.Fatalf("MapFile and ReadFile do not give the file's bytes: %d and %d bytes, want %d", len(m), len(b), len(content))
	}
	e, err := r.MapFile(filepath.Join(dir, "empty.chunk"))
	if err != nil || e == nil || len(e) != 0 {
		t.Errorf("an empty file: %q, %v; want no bytes, no error", e, err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(maps), filepath.Join(dir, "mapped.chunk")) {
		t.Errorf("the process maps no %s: MapFile copied it", filepath.Join(dir, "mapped.chunk"))
	}
	if strings.Contains(string(maps), filepath.Join(dir, "read.chunk")) {
		t.Errorf("the control: ReadFile's file is mapped")
	}
	if strings.Contains(string(maps), filepath.Join(dir, "empty.chunk")) {
		t.Error("an empty file was mapped")
	}
}
