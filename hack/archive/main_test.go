package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReproducible writes each kind of archive twice from files with
// other times, modes and umasks, and wants the same bytes, then reads
// them back.
func TestReproducible(t *testing.T) {
	mtime := time.Unix(1764159319, 0).UTC()
	fake := func(dir string, at time.Time) []string {
		bin := filepath.Join(dir, "wavesmith")
		readme := filepath.Join(dir, "README.md")
		if err := os.WriteFile(bin, []byte("\x7fELF fake binary"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(readme, []byte("# wavesmith\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{bin, readme} {
			if err := os.Chtimes(f, at, at); err != nil {
				t.Fatal(err)
			}
		}
		return []string{readme, bin} // not sorted: the archive sorts
	}
	for _, name := range []string{"wavesmith_v1.2.3_linux_amd64.tar.gz", "wavesmith_v1.2.3_windows_amd64.zip"} {
		var digests [2][32]byte
		var outs [2]string
		for i, at := range []time.Time{time.Unix(1, 0), time.Now()} {
			dir := t.TempDir()
			files := fake(dir, at)
			if i == 1 {
				files = []string{files[1], files[0]}
			}
			outs[i] = filepath.Join(t.TempDir(), name)
			if err := write(outs[i], mtime, files); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(outs[i])
			if err != nil {
				t.Fatal(err)
			}
			digests[i] = sha256.Sum256(b)
		}
		if digests[0] != digests[1] {
			t.Errorf("%s: two runs give %x and %x", name, digests[0], digests[1])
		}
		if diff := cmp.Diff([]string{"README.md 644 " + mtime.String(), "wavesmith 755 " + mtime.String()}, list(t, outs[0])); diff != "" {
			t.Errorf("%s entries: -want +got:\n%s", name, diff)
		}
	}
}

func list(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if filepath.Ext(path) == ".zip" {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			got = append(got, f.Name+" "+modeString(f.Mode())+" "+f.Modified.UTC().String())
		}
		return got
	}
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header carries a name %q or a time %v", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owner %d:%d %q:%q", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		got = append(got, h.Name+" "+modeString(os.FileMode(h.Mode))+" "+h.ModTime.UTC().String())
	}
	return got
}

func modeString(m os.FileMode) string {
	return map[os.FileMode]string{0o644: "644", 0o755: "755"}[m.Perm()]
}
