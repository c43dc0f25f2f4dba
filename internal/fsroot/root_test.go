package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wavesmith/wavesmith/internal/testobj"
)

// boundary lays out root/ (the anchor) and outside/ beside it.
func boundary(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func TestConfine(t *testing.T) {
	root, outside := boundary(t)
	if err := os.Symlink(outside, filepath.Join(root, "out-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(root, "rel-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(root, "in", "new", "deeper"), true},
		{filepath.Join(root, "missing"), true},
		{root, true},
		{filepath.Join(root, ".."), false},
		{filepath.Join(root, "..", "outside", "x"), false},
		{outside, false},
		{filepath.Join(root, "out-link", "tree"), false},
		{filepath.Join(root, "rel-link", "tree"), false},
		{filepath.Join(root, "rel-link"), false},
	} {
		err := r.Confine(tc.path)
		if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("Confine(%s) = %v, want ok %v", tc.path, err, tc.ok)
		}
	}
}

func TestRootReadFile(t *testing.T) {
	root, _ := testobj.HostileDir(t, MaxFileSize+1)
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cases := map[string]struct {
		reason string
		path   string
		want   string
		err    error
	}{
		"Regular":        {reason: "a regular file", path: "ok.yaml", want: "ok\n"},
		"InsideLink":     {reason: "a relative symlink staying inside", path: "inside.yaml", want: "inner\n"},
		"Nested":         {reason: "a file in a folder", path: "sub/inner.yaml", want: "inner\n"},
		"DotDotInside":   {reason: "a path climbing back in", path: "sub/../ok.yaml", want: "ok\n"},
		"AbsoluteOut":    {reason: "an absolute symlink outside", path: "evil.yaml", err: ErrOutsideRoot},
		"RelativeOut":    {reason: "a relative symlink outside", path: "evil-rel.yaml", err: ErrOutsideRoot},
		"Device":         {reason: "a symlink to /dev/zero", path: "zero.yaml", err: ErrOutsideRoot},
		"AbsoluteInside": {reason: "an absolute symlink inside (refused: not portable)", path: "abs-in.yaml", err: ErrOutsideRoot},
		"FolderOut":      {reason: "through a symlinked folder outside", path: "up/secret.yaml", err: ErrOutsideRoot},
		"LexicallyOut":   {reason: "a path outside the root", path: "../secret.yaml", err: ErrOutsideRoot},
		"FIFO":           {reason: "a FIFO is refused at once", path: "fifo.yaml", err: ErrNotRegular},
		"TooLarge":       {reason: "a file over the cap", path: "big.yaml", err: ErrTooLarge},
		"Folder":         {reason: "a folder is not a file", path: "sub", err: ErrNotRegular},
		"Missing":        {reason: "a missing file", path: "nope.yaml", err: fs.ErrNotExist},
	}
	// A file of a folder whose symlink leads to a sibling folder: inside
	// the root, outside the folder a Dir opened.
	if err := os.Mkdir(filepath.Join(root, "sib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../sub/inner.yaml", filepath.Join(root, "sib", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	cases["SiblingLink"] = struct {
		reason string
		path   string
		want   string
		err    error
	}{reason: "a relative symlink to a sibling folder", path: "sib/link.yaml", want: "inner\n"}
	// Every case read three ways: through the Root, through its folder
	// opened once (Dir), and mapped (MapFile), which must read and refuse
	// the same.
	for name, tc := range cases {
		for _, way := range []string{"Root", "Dir", "Map"} {
			t.Run(name+"/"+way, func(t *testing.T) {
				var got []byte
				var err error
				full := filepath.Join(root, tc.path)
				testobj.InTime(t, tc.path, func() {
					switch way {
					case "Root":
						got, err = r.ReadFile(full)
						return
					case "Map":
						got, err = r.MapFile(full)
						return
					}
					d := r.OpenDir(filepath.Dir(full))
					defer d.Close()
					got, err = d.ReadFile(filepath.Base(full))
				})
				if !errors.Is(err, tc.err) {
					t.Fatalf("%s: want %v, got %v", tc.reason, tc.err, err)
				}
				if diff := cmp.Diff(tc.want, string(got)); diff != "" {
					t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
				}
			})
		}
	}
}

// TestDirReadFileNames: a Dir reads one path element; a name with a
// folder in it, "." or ".." is read through the Root, with its rules.
func TestDirReadFileNames(t *testing.T) {
	root, _ := testobj.HostileDir(t, 1)
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := r.OpenDir(filepath.Join(root, "sub"))
	defer d.Close()
	for _, tc := range []struct {
		name string
		want string
		err  error
	}{
		{name: "inner.yaml", want: "inner\n"},
		{name: "../ok.yaml", want: "ok\n"},
		{name: "..", err: ErrNotRegular},
		{name: "../../secret.yaml", err: ErrOutsideRoot},
	} {
		got, err := d.ReadFile(tc.name)
		if !errors.Is(err, tc.err) || string(got) != tc.want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	missing := r.OpenDir(filepath.Join(root, "nope"))
	defer missing.Close()
	if _, err := missing.ReadFile("x.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing folder: %v, want not exist", err)
	}
	out := r.OpenDir(filepath.Join(root, "up"))
	defer out.Close()
	if _, err := out.ReadFile("secret.yaml"); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("a folder outside through a symlink: %v, want ErrOutsideRoot", err)
	}
}

// TestMkdirBelowExisting: missing parents are made below the nearest
// folder that exists; an existing folder is left; a file in the way is an
// error, not replaced.
func TestMkdirBelowExisting(t *testing.T) {
	base := t.TempDir()
	deep := filepath.Join(base, "a", "b", "c")
	if err := MkdirBelowExisting(deep); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(deep); err != nil || !fi.IsDir() {
		t.Fatalf("%s not made: %v", deep, err)
	}
	if err := MkdirBelowExisting(deep); err != nil {
		t.Errorf("an existing folder: %v", err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := MkdirBelowExisting(filepath.Join(file, "sub")); err == nil {
		t.Error("made a folder below a file")
	}
	if b, _ := os.ReadFile(file); string(b) != "x" {
		t.Error("the file in the way was changed")
	}
}
