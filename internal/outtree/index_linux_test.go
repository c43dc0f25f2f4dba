package outtree

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestIndexedLocalMargin: on a local file system, files written before a
// record by more than LocalRacyMargin are trusted by the next walk, as in
// a render that follows another within a second; elsewhere they are read
// until RacyMargin has passed.
func TestIndexedLocalMargin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	want := indexTree()
	if _, err := WriteIndexed(context.Background(), "", dir, want, Known{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(LocalRacyMargin + 50*time.Millisecond)
	// This walk reads every file (no record) and records them, taken
	// LocalRacyMargin after the last write at least.
	_, ix, err := ReadIndexed(dir, want, Known{})
	if err != nil {
		t.Fatal(err)
	}
	_, again, err := ReadIndexed(dir, want, Known{Index: ix, Files: want})
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		t.Fatal(err)
	}
	switch uint32(sfs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		if !ix.rule.local {
			t.Fatalf("the walk did not see %s (file system %#x) as local", dir, sfs.Type)
		}
		if again.read != 0 {
			t.Errorf("read %d files, want none: they are older than the record by LocalRacyMargin", again.read)
		}
	default:
		if again.read != len(want) {
			t.Errorf("read %d files, want every one (%d): not a local file system (%#x), RacyMargin applies", again.read, len(want), sfs.Type)
		}
	}
}
