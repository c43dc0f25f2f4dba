//go:build linux || darwin || freebsd

package outtree

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stamp is what an unchanged file keeps: its inode and mtime.
type stamp struct {
	ino   uint64
	mtime int64
}

func stamps(t *testing.T, dir string, files map[string][]byte) map[string]stamp {
	t.Helper()
	out := map[string]stamp{}
	for p := range files {
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		out[p] = stamp{ino: st.Ino, mtime: fi.ModTime().UnixNano()}
	}
	return out
}

func treeA() map[string][]byte {
	return map[string][]byte{
		"kustomization.yaml":     []byte(Header + "a\n"),
		"ns/kaoto-a/svc.yaml":    []byte("svc a\n"),
		"ns/kaoto-a/deploy.yaml": []byte("deploy a\n"),
		"ns/kaoto-b/svc.yaml":    []byte("svc b\n"),
		"gone/deep/x.yaml":       []byte("x\n"),
		"becomes-folder":         []byte("file\n"),
		"becomes-file/y.yaml":    []byte("y\n"),
	}
}

func treeB() map[string][]byte {
	return map[string][]byte{
		"kustomization.yaml":     []byte(Header + "a\n"),        // same
		"ns/kaoto-a/svc.yaml":    []byte("svc a\n"),             // same
		"ns/kaoto-a/deploy.yaml": []byte("deploy a, changed\n"), // changed
		"ns/kaoto-c/svc.yaml":    []byte("svc c\n"),             // new folder
		"becomes-folder/z.yaml":  []byte("z\n"),                 // file -> folder
		"becomes-file":           []byte("now a file\n"),        // folder -> file
	}
}

func TestUpdateRewritesOnlyChanged(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := Write(dir, treeA()); err != nil {
		t.Fatal(err)
	}
	before := stamps(t, dir, treeA())
	if err := Write(dir, treeB()); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(treeB(), got); diff != "" {
		t.Fatalf("-want +got:\n%s", diff)
	}
	after := stamps(t, dir, treeB())
	for _, p := range []string{"kustomization.yaml", "ns/kaoto-a/svc.yaml"} {
		if before[p] != after[p] {
			t.Errorf("%s is unchanged, yet was rewritten: %+v -> %+v", p, before[p], after[p])
		}
	}
	if before["ns/kaoto-a/deploy.yaml"].ino == after["ns/kaoto-a/deploy.yaml"].ino {
		t.Errorf("a changed file keeps its inode: it was written in place, not replaced atomically")
	}
	for _, gone := range []string{"ns/kaoto-b", "gone"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a folder left empty must go (%v)", gone, err)
		}
	}
	if diff := cmp.Diff([]string{"out"}, entries(t, parent)); diff != "" {
		t.Errorf("staging folder or lock left behind: -want +got:\n%s", diff)
	}
}

func TestUpdateUnchangedWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, treeA()); err != nil {
		t.Fatal(err)
	}
	before := stamps(t, dir, treeA())
	fi, _ := os.Stat(dir)
	if err := Write(dir, treeA()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, stamps(t, dir, treeA()), cmp.AllowUnexported(stamp{})); diff != "" {
		t.Errorf("an unchanged render rewrote files: -before +after:\n%s", diff)
	}
	if fi2, _ := os.Stat(dir); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("an unchanged render changed the tree folder (mtime %s -> %s)", fi.ModTime(), fi2.ModTime())
	}
}

// interrupt leaves dir, holding from, as a render killed right after it
// committed the update to want leaves it: the journal is in the tree, the
// first done steps of it ran (none with done 0).
func interrupt(t *testing.T, dir string, from, want map[string][]byte, done int) {
	t.Helper()
	if err := Write(dir, from); err != nil {
		t.Fatal(err)
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	j := plan(from, want)
	staging, err := os.MkdirTemp(parent, tempPrefix(base))
	if err != nil {
		t.Fatal(err)
	}
	j.staging = filepath.Base(staging)
	for i, p := range j.puts {
		mustWrite(t, filepath.Join(staging, stagedName(i)), string(want[p]))
	}
	mustWrite(t, filepath.Join(dir, MarkerFile), string(j.encode()))
	if done > 0 {
		part := *j
		part.puts = j.puts[:min(done, len(j.puts))]
		tfd, _ := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		sfd, _ := syscall.Open(staging, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		defer syscall.Close(tfd)
		defer syscall.Close(sfd)
		if err := apply(tfd, sfd, &part, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUpdateInterrupted(t *testing.T) {
	for _, done := range []int{0, 1, 2, 100} {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		interrupt(t, dir, treeA(), treeB(), done)
		if _, err := Read(dir); !errors.Is(err, ErrInterrupted) {
			t.Errorf("done %d: Read of an interrupted tree: %v, want ErrInterrupted", done, err)
		}
		if _, err := OpenFS(dir); !errors.Is(err, ErrInterrupted) {
			t.Errorf("done %d: OpenFS of an interrupted tree: %v, want ErrInterrupted", done, err)
		}
		if err := finishHeld(t, dir); err != nil {
			t.Fatal(err)
		}
		got, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(treeB(), got); diff != "" {
			t.Errorf("done %d: finishing must give the new tree: -want +got:\n%s", done, diff)
		}
		// A Write after the kill finishes the journal, then writes.
		interrupt(t, dir, treeA(), treeB(), done)
		if err := Write(dir, treeA()); err != nil {
			t.Fatal(err)
		}
		if got, err := Read(dir); err != nil || !cmp.Equal(treeA(), got) {
			t.Errorf("done %d: Write over an interrupted tree: %v\n%s", done, err, cmp.Diff(treeA(), got))
		}
		if diff := cmp.Diff([]string{"out"}, entries(t, parent)); diff != "" {
			t.Errorf("done %d: left behind: -want +got:\n%s", done, diff)
		}
	}
}

// TestUpdateHostileMarker: a marker committed with the tree, or written by
// hand, never makes Write touch anything outside the tree nor keep a
// wrong file: it is removed and the tree compared as always.
func TestUpdateHostileMarker(t *testing.T) {
	cases := map[string]string{
		"no staging folder":     "staging .out.new-1\ndel \"kustomization.yaml\"\n",
		"staging outside":       "staging ../../etc\n",
		"path leaving the tree": "staging .out.new-2\ndel \"../victim\"\n",
		"unknown step":          "staging .out.new-3\nchmod \"a\"\n",
		"garbage":               "\x00\x01\x02",
	}
	for name, marker := range cases {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			if err := Write(dir, treeA()); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(parent, "victim"), "keep me")
			if err := os.Mkdir(filepath.Join(parent, ".out.new-2"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, MarkerFile), marker)
			if err := Write(dir, treeB()); err != nil {
				t.Fatal(err)
			}
			got, err := Read(dir)
			if err != nil || !cmp.Equal(treeB(), got) {
				t.Errorf("%v\n%s", err, cmp.Diff(treeB(), got))
			}
			if b, err := os.ReadFile(filepath.Join(parent, "victim")); err != nil || string(b) != "keep me" {
				t.Errorf("a file beside the tree was touched: %q %v", b, err)
			}
		})
	}
}
