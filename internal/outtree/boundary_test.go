package outtree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wavesmith/wavesmith/internal/fsroot"
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

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteInRefusesParentOutside(t *testing.T) {
	root, outside := boundary(t)
	if err := os.Symlink(outside, filepath.Join(root, "clusters")); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"a.yaml": []byte("a: 1\n")}
	for _, dir := range []string{
		filepath.Join(root, "clusters", "rendered"),
		filepath.Join(root, "clusters", "deep", "rendered"),
		filepath.Join(root, "..", "outside", "rendered"),
	} {
		err := WriteIn(context.Background(), root, dir, files)
		if !errors.Is(err, fsroot.ErrOutsideRoot) || !errors.Is(err, ErrWrite) {
			t.Errorf("WriteIn(%s) = %v, want fsroot.ErrOutsideRoot", dir, err)
		}
	}
	if got := dirNames(t, outside); len(got) != 0 {
		t.Errorf("written outside: %v", got)
	}
	if err := WriteIn(context.Background(), root, filepath.Join(root, "a", "b", "out"), files); err != nil {
		t.Fatalf("a parent made inside the anchor: %v", err)
	}
}

func TestLockRefusesSymlink(t *testing.T) {
	root, outside := boundary(t)
	target := filepath.Join(outside, "created")
	// A dangling lock symlink: following it would create target.
	if err := os.Symlink(target, filepath.Join(root, ".out.lock")); err != nil {
		t.Fatal(err)
	}
	err := Write(filepath.Join(root, "out"), map[string][]byte{"a.yaml": []byte("a: 1\n")})
	if !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Write = %v, want a refused lock symlink", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock symlink's target was created: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("out was written: %v", err)
	}
}

func TestWriteInCancelledCleansUp(t *testing.T) {
	root, _ := boundary(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var during []string
	TestHookBeforeSwap = func(context.Context) {
		during = dirNames(t, root)
		cancel()
	}
	defer func() { TestHookBeforeSwap = nil }()
	err := WriteIn(ctx, root, filepath.Join(root, "out"), map[string][]byte{"a.yaml": []byte("a: 1\n")})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrWrite) {
		t.Fatalf("WriteIn = %v, want context.Canceled", err)
	}
	if len(during) != 2 || during[0] != ".out.lock" || !strings.HasPrefix(during[1], ".out.new-") {
		t.Errorf("during the write: %v, want the lock and the temporary folder", during)
	}
	if got := dirNames(t, root); len(got) != 0 {
		t.Errorf("left after cancel: %v", got)
	}
}

func TestWriteErrorOnce(t *testing.T) {
	var errs []error
	for i := 0; i < 50; i++ {
		errs = append(errs, &os.PathError{Op: "open", Path: fmt.Sprintf("f%d.yaml", i), Err: syscall.ENOSPC})
	}
	err := writeError("/repo/out", errors.Join(errs...))
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrWrite) {
		t.Fatalf("writeError = %v, want ENOSPC", err)
	}
	if msg := err.Error(); strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "/repo/out") {
		t.Errorf("writeError = %q, want one line naming the folder", msg)
	}
	err = swapError("/repo/out", &os.LinkError{Op: "renameat2", Old: "/repo/.out.new-1", New: "/repo/out", Err: syscall.EBUSY})
	if !errors.Is(err, syscall.EBUSY) || !strings.Contains(err.Error(), "/repo/out: it is a mount point") {
		t.Errorf("swapError = %v, want the folder named and why", err)
	}
}

func TestReadLockedWaits(t *testing.T) {
	root, _ := boundary(t)
	dir := filepath.Join(root, "out")
	if err := Write(dir, map[string][]byte{"a.yaml": []byte("a: 1\n")}); err != nil {
		t.Fatal(err)
	}
	release, err := lock(context.Background(), root, "out", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadLocked(ctx, dir); !errors.Is(err, ErrLocked) {
		t.Errorf("ReadLocked while locked, ctx done = %v, want ErrLocked", err)
	}
	done := make(chan error)
	go func() {
		files, err := ReadLocked(context.Background(), dir)
		if err == nil && string(files["a.yaml"]) != "a: 1\n" {
			err = fmt.Errorf("read %v", files)
		}
		done <- err
	}()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("ReadLocked after release: %v", err)
	}
	if got := dirNames(t, root); len(got) != 1 {
		t.Errorf("left after ReadLocked: %v", got)
	}
}
