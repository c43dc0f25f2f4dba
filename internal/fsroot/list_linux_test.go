package fsroot

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/internal/testobj"
)

// TestListDirAsReadDir: ListDir lists a hostile folder (symlinks out, in
// and to folders, a FIFO, a socket, a subfolder, hidden entries, and
// enough files to take several getdents calls) as fs.ReadDir does, same
// names in the same order, same types, same Info; with the types getdents
// gives, and with every type unknown (the lstat fallback, as on a file
// system that gives none).
func TestListDirAsReadDir(t *testing.T) {
	root, _ := testobj.HostileDir(t, MaxFileSize+1)
	for _, name := range []string{".hidden.yaml", ".git/HEAD"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2000 { // 2,000 names of 40 bytes: more than one buffer
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("spec-%04d-%s.yaml", 1999-i, "abcdefghijklmnopqrstuvwxyz")), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub", filepath.Join(root, "subdir-link")); err != nil {
		t.Fatal(err)
	}
	if l, err := net.Listen("unix", filepath.Join(root, "sock")); err == nil {
		defer l.Close()
	} else {
		t.Logf("no socket: %v", err)
	}
	d, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	type entry struct {
		Name string
		Type fs.FileMode
		Dir  bool
		Mode fs.FileMode
		Size int64
	}
	list := func(entries []fs.DirEntry) []entry {
		var out []entry
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			out = append(out, entry{e.Name(), e.Type(), e.IsDir(), fi.Mode(), fi.Size()})
		}
		return out
	}
	want, err := fs.ReadDir(d.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[fs.FileMode]bool{}
	for _, e := range want {
		kinds[e.Type()] = true
	}
	for _, k := range []fs.FileMode{0, fs.ModeDir, fs.ModeSymlink, fs.ModeNamedPipe} {
		if !kinds[k] {
			t.Fatalf("the folder holds no entry of type %v", k)
		}
	}
	for _, unknown := range []bool{false, true} {
		t.Run(fmt.Sprintf("unknownTypes=%v", unknown), func(t *testing.T) {
			defer func(u bool) { unknownTypes = u }(unknownTypes)
			unknownTypes = unknown
			got, err := ListDir(d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(list(want), list(got)); diff != "" {
				t.Errorf("ListDir: -fs.ReadDir +ListDir:\n%s", diff)
			}
		})
	}
}

// TestListDirConfined: a folder of a Root listed by ListDir is the one
// the Root opened, whatever its path became since (renamed, replaced by a
// symlink out): the listing goes through the folder's handle.
func TestListDirConfined(t *testing.T) {
	root, outside := testobj.HostileDir(t, 1)
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d, err := r.OpenRoot("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	got, err := ListDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"inner.yaml"}, names); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}
