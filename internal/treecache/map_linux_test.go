package treecache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsMappedSurviveTheCache: on Linux the records GetOutputs gives
// are the chunk files' pages, mapped, not copies. A file mapped must never
// be cut short while a render holds its pages (reading past its new end
// faults the process), so the cache never writes a file in place: writing
// a chunk again puts a new file in its name (another inode), and the
// bytes given, through chunks written again and then removed (a spoiled
// or evicted chunk), stay as they were.
func TestOutputsMappedSurviveTheCache(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	recs := records(500, "a")
	if err := c.PutOutputs("slot", parts(recs)); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetOutputs("slot")
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := filepath.Glob(filepath.Join(c.dir, "*.outchunk"))
	if err != nil || len(chunks) < 2 {
		t.Fatalf("%d chunks (%v): the test needs several", len(chunks), err)
	}
	mapping, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range chunks {
		if !strings.Contains(string(mapping), ch) {
			t.Fatalf("%s is not mapped: GetOutputs copied the records", ch)
		}
	}
	for _, ch := range chunks {
		before, err := os.Stat(ch)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(ch)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.writeFile(filepath.Base(ch), b); err != nil {
			t.Fatal(err)
		}
		after, err := os.Stat(ch)
		if err != nil {
			t.Fatal(err)
		}
		if os.SameFile(before, after) {
			t.Fatalf("writeFile wrote %s in place: a render holding its mapped records could fault", filepath.Base(ch))
		}
		os.Remove(ch)
	}
	for k, b := range got {
		if !bytes.Equal(b, recs[k]) {
			t.Fatalf("record %x changed under the render that holds it", k[:4])
		}
	}
}
