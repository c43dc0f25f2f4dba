//go:build linux || darwin || freebsd

package outtree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/testobj"
	"golang.org/x/sys/unix"
)

// TestReadWalksAgree: the system-call walk Read uses on Linux and the
// portable os.Root walk read the same files from a tree, and refuse the
// same hostile entries with the same error, naming the same file.
func TestReadWalksAgree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	want := bigTree("v")
	want["a/b/c/deep.yaml"] = []byte("deep\n")
	want["empty.yaml"] = nil
	want["big.yaml"] = make([]byte, 1<<20+3)
	if err := Write(dir, want); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty-folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, walk := range map[string]func(string) (map[string][]byte, error){"syscalls": readTree, "os.Root": readPortable} {
		got, err := walk(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
			t.Errorf("%s: -want +got:\n%s", name, diff)
		}
	}

	root, _ := testobj.HostileDir(t, fsroot.MaxFileSize+1)
	for _, name := range []string{"evil.yaml", "evil-rel.yaml", "zero.yaml", "inside.yaml", "abs-in.yaml", "up", "fifo.yaml", "big.yaml"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			mustWrite(t, filepath.Join(dir, "kustomization.yaml"), Header)
			mustWrite(t, filepath.Join(dir, "z", "after.yaml"), "after\n")
			if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(root, name)
			if fi, _ := os.Lstat(src); fi.Mode()&os.ModeSymlink != 0 {
				target, _ := os.Readlink(src)
				if err := os.Symlink(target, filepath.Join(dir, "sub", name)); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Rename(src, filepath.Join(dir, "sub", name)); err != nil {
				t.Fatal(err)
			}
			var fast, portable error
			testobj.InTime(t, name, func() { _, fast = readTree(dir) })
			testobj.InTime(t, name, func() { _, portable = readPortable(dir) })
			for _, sentinel := range []error{fsroot.ErrNotRegular, fsroot.ErrTooLarge} {
				if errors.Is(fast, sentinel) != errors.Is(portable, sentinel) {
					t.Errorf("syscalls: %v\nos.Root: %v", fast, portable)
				}
			}
			if fast == nil || fast.Error() != portable.Error() {
				t.Errorf("the walks name it differently:\nsyscalls: %v\nos.Root:  %v", fast, portable)
			}
		})
	}
}

// TestReadTooDeep: a committed tree nested past maxTreeDepth is refused,
// not walked with a descriptor per level until the process runs out.
func TestReadTooDeep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	p := dir
	for i := 0; i <= maxTreeDepth+1; i++ {
		p = filepath.Join(p, fmt.Sprint(i%10))
	}
	mustWrite(t, filepath.Join(p, "f.yaml"), "x\n")
	if _, err := Read(dir); !errors.Is(err, ErrNotTree) {
		t.Fatalf("want ErrNotTree, got %v", err)
	}
}

// TestWriteWritersAgree: the system-call writer Write uses on Linux and
// the portable os.Root writer leave the same tree, and both refuse to
// replace a file already there (O_EXCL) and to write through a symlink
// planted for a folder.
func TestWriteWritersAgree(t *testing.T) {
	files := bigTree("v")
	files["a/b/c/deep.yaml"] = []byte("deep\n")
	files["a/b/c/d/deeper.yaml"] = []byte("deeper\n")
	files["empty.yaml"] = nil
	writers := map[string]func(ctx context.Context, dir string, top *folderNode) error{
		"syscalls": writeTree,
		"os.Root":  writeTreeRoot,
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			top := planFolders(files)
			if err := write(context.Background(), dir, top); err != nil {
				t.Fatal(err)
			}
			got, err := readPortable(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(files, got, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
			if name == "syscalls" {
				stats := nodeStats(top, len(files))
				if len(stats) != len(files) {
					t.Fatalf("%d identities for %d files", len(stats), len(files))
				}
				for p, st := range stats {
					var want unix.Stat_t
					if err := unix.Lstat(filepath.Join(dir, p), &want); err != nil {
						t.Fatal(err)
					}
					if st != fileStat(&want) {
						t.Errorf("%s: identity %+v, lstat %+v", p, st, fileStat(&want))
					}
				}
			}

			// O_EXCL: a file already there is not replaced.
			again := t.TempDir()
			mustWrite(t, filepath.Join(again, "kustomization.yaml"), "mine")
			if err := write(context.Background(), again, planFolders(files)); !errors.Is(err, fs.ErrExist) {
				t.Errorf("writing over an existing file: want fs.ErrExist, got %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(again, "kustomization.yaml")); string(b) != "mine" {
				t.Errorf("the file already there was replaced: %q", b)
			}

			// A symlink planted where a folder goes is never written through.
			planted := t.TempDir()
			outside := t.TempDir()
			if err := os.Symlink(outside, filepath.Join(planted, "a")); err != nil {
				t.Fatal(err)
			}
			if err := write(context.Background(), planted, planFolders(files)); err == nil {
				t.Error("wrote through a symlink planted for a folder")
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("a file landed outside the tree: %v", entries)
			}

			// A cancelled write stops.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := write(ctx, t.TempDir(), planFolders(files)); !errors.Is(err, context.Canceled) {
				t.Errorf("a cancelled write: want context.Canceled, got %v", err)
			}
		})
	}
}

// TestLstat: the walk's fstatat (treeReader.lstat, its path made in the
// reader's scratch) gives what unix.Fstatat gives for the same path, the
// folder's path and the name joined; does not follow a symlink; and
// refuses a path holding a NUL, which would otherwise stat the path cut
// at the NUL (a file that exists).
func TestLstat(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ns", "spec"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ns", "spec", "a.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.yaml", filepath.Join(dir, "ns", "spec", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, openDir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	r := &treeReader{}
	for _, c := range []struct {
		dir, name string
		mode      uint32
	}{
		{"ns/spec/", "a.yaml", unix.S_IFREG},
		{"", "ns/spec/a.yaml", unix.S_IFREG},
		{"ns/spec", "", unix.S_IFDIR},
		{"ns/spec/", "link.yaml", unix.S_IFLNK},
	} {
		var got, want unix.Stat_t
		if err := r.lstat(fd, []byte(c.dir), c.name, &got); err != nil {
			t.Fatalf("lstat(%q, %q): %v", c.dir, c.name, err)
		}
		if err := unix.Fstatat(fd, c.dir+c.name, &want, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
		if uint32(got.Mode)&unix.S_IFMT != c.mode || fileStat(&got) != fileStat(&want) {
			t.Errorf("lstat(%q, %q) = mode %o, %+v; want mode %o, %+v", c.dir, c.name, got.Mode, fileStat(&got), c.mode, fileStat(&want))
		}
	}
	if err := r.lstat(fd, []byte("ns/nope/"), "a.yaml", new(unix.Stat_t)); !errors.Is(err, unix.ENOENT) {
		t.Errorf("lstat of a missing file: %v, want ENOENT", err)
	}
	for _, c := range [][2]string{{"ns/spec/", "a.yaml\x00junk"}, {"ns/spec/a.yaml\x00", "junk"}} {
		if err := r.lstat(fd, []byte(c[0]), c[1], new(unix.Stat_t)); !errors.Is(err, unix.EINVAL) {
			t.Errorf("lstat(%q, %q): %v, want EINVAL (a path holding a NUL)", c[0], c[1], err)
		}
	}
}
