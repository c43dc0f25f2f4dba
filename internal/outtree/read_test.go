package outtree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/testobj"
)

func TestOpenFS(t *testing.T) {
	root, _ := testobj.HostileDir(t, fsroot.MaxFileSize+1)
	fsys, err := OpenFS(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	cases := map[string]struct {
		reason string
		path   string
		want   string
		err    error
	}{
		"Regular":  {reason: "a regular file", path: "ok.yaml", want: "ok\n"},
		"Inside":   {reason: "a relative symlink inside", path: "inside.yaml", want: "inner\n"},
		"Outside":  {reason: "a symlink outside (os.Root's refusal)", path: "evil-rel.yaml", err: fsroot.ErrOutsideRoot},
		"Device":   {reason: "/dev/zero", path: "zero.yaml", err: fsroot.ErrOutsideRoot},
		"FIFO":     {reason: "a FIFO", path: "fifo.yaml", err: fsroot.ErrNotRegular},
		"TooLarge": {reason: "over the cap", path: "big.yaml", err: fsroot.ErrTooLarge},
		"Invalid":  {reason: "not an fs path", path: "../x", err: fs.ErrInvalid},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, how := range []string{"ReadFile", "Open"} {
				var got []byte
				var err error
				testobj.InTime(t, tc.path, func() {
					if how == "ReadFile" {
						got, err = fsys.ReadFile(tc.path)
						return
					}
					var f fs.File
					if f, err = fsys.Open(tc.path); err == nil {
						defer f.Close()
						buf := make([]byte, 64)
						n, _ := f.Read(buf)
						got = buf[:n]
					}
				})
				if tc.want != "" {
					if err != nil || string(got) != tc.want {
						t.Errorf("%s (%s): got %q, %v", tc.reason, how, got, err)
					}
					continue
				}
				if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) {
					t.Errorf("%s (%s): want an error (%v), got %v", tc.reason, how, tc.err, err)
				}
			}
		})
	}
	// fs.Glob and fs.ReadDir work (the Flux handoff reads the previous
	// tree with them).
	if got, err := fs.Glob(fsys, "sub/*.yaml"); err != nil || !cmp.Equal([]string{"sub/inner.yaml"}, got) {
		t.Errorf("Glob: %v, %v", got, err)
	}
}

func TestOpenFSRefusesSymlinkedTree(t *testing.T) {
	base := t.TempDir()
	mustWrite(t, filepath.Join(base, "elsewhere", "kustomization.yaml"), Header)
	if err := os.Symlink("elsewhere", filepath.Join(base, "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFS(filepath.Join(base, "out")); !errors.Is(err, fsroot.ErrNotRegular) {
		t.Errorf("want fsroot.ErrNotRegular, got %v", err)
	}
	if _, err := Read(filepath.Join(base, "out")); !errors.Is(err, fsroot.ErrNotRegular) {
		t.Errorf("Read: want fsroot.ErrNotRegular, got %v", err)
	}
	if _, err := OpenFS(filepath.Join(base, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing tree: want fs.ErrNotExist, got %v", err)
	}
}

// TestReadRefusesLinks: check compares a committed tree; a symlink in it
// (to a secret) must not be followed and shown in the diff.
func TestReadRefusesLinks(t *testing.T) {
	root, _ := testobj.HostileDir(t, fsroot.MaxFileSize+1)
	for _, name := range []string{"evil.yaml", "inside.yaml", "fifo.yaml", "big.yaml"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			mustWrite(t, filepath.Join(dir, "kustomization.yaml"), Header)
			src := filepath.Join(root, name)
			if fi, _ := os.Lstat(src); fi.Mode()&os.ModeSymlink != 0 {
				target, _ := os.Readlink(src)
				if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Rename(src, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			var err error
			testobj.InTime(t, name, func() { _, err = Read(dir) })
			if !errors.Is(err, fsroot.ErrNotRegular) && !errors.Is(err, fsroot.ErrTooLarge) {
				t.Errorf("want fsroot.ErrNotRegular or fsroot.ErrTooLarge, got %v", err)
			}
		})
	}
}
