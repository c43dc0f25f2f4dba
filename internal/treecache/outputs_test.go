package treecache

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func records(n int, salt string) map[Sum][]byte {
	recs := map[Sum][]byte{}
	for i := 0; i < n; i++ {
		recs[sha256.Sum256([]byte(fmt.Sprint(salt, i)))] = []byte(strings.Repeat(fmt.Sprint("record ", i, "\n"), 50))
	}
	return recs
}

// TestOutputsPutGet: the records come back whole, whatever key the tree's
// entry has; one changed record rewrites at most two chunks.
func TestOutputsPutGet(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetOutputs("slot"); !errors.Is(err, ErrMiss) {
		t.Fatalf("no records: %v, want ErrMiss", err)
	}
	recs := records(500, "a")
	if err := c.PutOutputs("slot", parts(recs)); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetOutputs("slot")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Fatalf("-put +got:\n%s", diff)
	}
	before := chunkTimes(t, c.dir)
	if len(before) < 32 {
		t.Fatalf("%d chunks for 500 records: they are not split by key", len(before))
	}
	// One record replaced by another (a spec changed).
	for k := range recs {
		delete(recs, k)
		break
	}
	recs[sha256.Sum256([]byte("changed"))] = []byte("changed record")
	if err := c.PutOutputs("slot", parts(recs)); err != nil {
		t.Fatal(err)
	}
	after := chunkTimes(t, c.dir)
	kept := 0
	for n := range after {
		if before[n] {
			kept++
		}
	}
	if len(after)-kept > 2 {
		t.Errorf("one changed record wrote %d chunks, want at most 2", len(after)-kept)
	}
	if got, err := c.GetOutputs("slot"); err != nil || !cmp.Equal(recs, got) {
		t.Errorf("after the change: %v, records differ: %v", err, !cmp.Equal(recs, got))
	}
}

func chunkTimes(t *testing.T, dir string) map[string]bool {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.outchunk"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, n := range names {
		m[filepath.Base(n)] = true
	}
	return m
}

// TestOutputsHostile: a spoiled index or chunk, or one missing, is a
// miss; a spoiled chunk is removed, so the next PutOutputs writes it
// again and the next GetOutputs hits.
func TestOutputsHostile(t *testing.T) {
	for name, spoil := range map[string]func(t *testing.T, dir string){
		"index cut short": func(t *testing.T, dir string) {
			p := filepath.Join(dir, "slot.outs")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-1], 0o600)
		},
		"index of another format": func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "slot.outs"), []byte("wavesmith tree cache v1\n"), 0o600)
		},
		"chunk changed": func(t *testing.T, dir string) {
			names, _ := filepath.Glob(filepath.Join(dir, "slot-*.outchunk"))
			b, _ := os.ReadFile(names[0])
			b[len(b)/2] ^= 1
			os.WriteFile(names[0], b, 0o600)
		},
		"chunk in the place of another": func(t *testing.T, dir string) {
			names, _ := filepath.Glob(filepath.Join(dir, "slot-*.outchunk"))
			if len(names) < 2 {
				t.Fatalf("%d chunks, want two to swap", len(names))
			}
			a, _ := os.ReadFile(names[0])
			b, _ := os.ReadFile(names[1])
			os.WriteFile(names[0], b, 0o600)
			os.WriteFile(names[1], a, 0o600)
		},
		"chunk gone": func(t *testing.T, dir string) {
			names, _ := filepath.Glob(filepath.Join(dir, "slot-*.outchunk"))
			os.Remove(names[0])
		},
		"chunk a FIFO": func(t *testing.T, dir string) {
			names, _ := filepath.Glob(filepath.Join(dir, "slot-*.outchunk"))
			os.Remove(names[0])
			if err := syscall.Mkfifo(names[0], 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			recs := records(100, "b")
			if err := c.PutOutputs("slot", parts(recs)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.GetOutputs("slot"); err != nil {
				t.Fatalf("the control, before it is spoiled: %v", err)
			}
			spoil(t, c.dir)
			if _, err := c.GetOutputs("slot"); !errors.Is(err, ErrMiss) {
				t.Fatalf("spoiled: %v, want ErrMiss", err)
			}
			if err := c.PutOutputs("slot", parts(recs)); err != nil {
				t.Fatal(err)
			}
			if got, err := c.GetOutputs("slot"); err != nil || !cmp.Equal(recs, got) {
				t.Errorf("after PutOutputs again: %v (records equal: %v)", err, cmp.Equal(recs, got))
			}
		})
	}
}

// TestOutputsPutKeepsChunksRead: PutOutputs after GetOutputs encodes and
// hashes only the chunks whose keys changed (a key is the digest of
// everything that decides its record); the records come back whole. The
// control: without the read, every chunk is encoded.
func TestOutputsPutKeepsChunksRead(t *testing.T) {
	dir := t.TempDir()
	recs := records(500, "a")
	c, _ := Open(dir)
	if err := c.PutOutputs("slot", parts(recs)); err != nil {
		t.Fatal(err)
	}
	all := c.encoded
	next := map[Sum][]byte{}
	for k, v := range recs {
		next[k] = append([]byte(nil), v...)
	}
	for k := range next {
		delete(next, k)
		break
	}
	next[sha256.Sum256([]byte("changed"))] = []byte("changed record")
	for _, read := range []bool{true, false} {
		c, _ := Open(dir)
		if err := c.PutOutputs("slot", parts(recs)); err != nil {
			t.Fatal(err)
		}
		c, _ = Open(dir)
		if read {
			if _, err := c.GetOutputs("slot"); err != nil {
				t.Fatal(err)
			}
		}
		c.encoded = 0
		if err := c.PutOutputs("slot", parts(next)); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 2, false: all}[read]; c.encoded > want || !read && c.encoded != want {
			t.Errorf("read %v: %d chunks encoded, want %d", read, c.encoded, want)
		}
		if got, err := c.GetOutputs("slot"); err != nil || !cmp.Equal(next, got) {
			t.Errorf("read %v: %v, records differ: %v", read, err, !cmp.Equal(next, got))
		}
	}
}

// parts gives each record in two parts, as a render's come
// (render.Outputs.RecordParts): they are written as one.
func parts(recs map[Sum][]byte) map[Sum][][]byte {
	out := make(map[Sum][][]byte, len(recs))
	for k, b := range recs {
		out[k] = [][]byte{b[:len(b)/2], b[len(b)/2:]}
	}
	return out
}
