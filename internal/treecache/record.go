package treecache

import (
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"sort"
	"sync"
)

// Op is one read of the previous tree, with the digest of what it gave.
type Op struct {
	Kind string // "absent" (no previous tree), "stat", "dir", "read", "open"
	Name string
	Sum  Sum
}

// Recorder is an fs.FS over the previous tree (what a GitOps engine reads
// to decide Flux handoffs) that records every read and what it gave, so
// that a later render can tell, by doing the same reads (Replay), that
// the engine would decide the same. The engines' output depends on the
// previous tree only through these reads.
type Recorder struct {
	fsys fs.FS
	mu   sync.Mutex
	ops  []Op
}

// Record wraps fsys.
func Record(fsys fs.FS) *Recorder { return &Recorder{fsys: fsys} }

// Ops returns the reads so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Absent is the record of a render without a previous tree.
func Absent() []Op { return []Op{{Kind: "absent"}} }

func (r *Recorder) add(kind, name string, s Sum) {
	r.mu.Lock()
	r.ops = append(r.ops, Op{Kind: kind, Name: name, Sum: s})
	r.mu.Unlock()
}

func (r *Recorder) Open(name string) (fs.File, error) {
	r.add("open", name, sumOf(fsys{r.fsys}, "open", name))
	return r.fsys.Open(name)
}

func (r *Recorder) ReadFile(name string) ([]byte, error) {
	r.add("read", name, sumOf(fsys{r.fsys}, "read", name))
	return fs.ReadFile(r.fsys, name)
}

func (r *Recorder) ReadDir(name string) ([]fs.DirEntry, error) {
	r.add("dir", name, sumOf(fsys{r.fsys}, "dir", name))
	return fs.ReadDir(r.fsys, name)
}

func (r *Recorder) Stat(name string) (fs.FileInfo, error) {
	r.add("stat", name, sumOf(fsys{r.fsys}, "stat", name))
	return fs.Stat(r.fsys, name)
}

type fsys struct{ fs.FS }

// Replay does ops again on the previous tree (nil: none) and reports
// whether every one gives what it gave when recorded.
func Replay(prev fs.FS, ops []Op) bool {
	for _, op := range ops {
		if op.Kind == "absent" {
			if prev != nil {
				return false
			}
			continue
		}
		if prev == nil || sumOf(fsys{prev}, op.Kind, op.Name) != op.Sum {
			return false
		}
	}
	return true
}

// sumOf is the digest of what the read kind of name gives on f: an
// error's kind, a file's bytes, a folder's names and kinds.
func sumOf(f fsys, kind, name string) Sum {
	h := sha256.New()
	fail := func(err error) Sum {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			h.Write([]byte("not exist"))
		default:
			h.Write([]byte("error"))
		}
		var s Sum
		h.Sum(s[:0])
		return s
	}
	fi, err := fs.Stat(f.FS, name)
	if err != nil {
		return fail(err)
	}
	if kind == "stat" {
		if fi.IsDir() {
			h.Write([]byte("dir"))
		} else {
			h.Write([]byte("file"))
		}
		var s Sum
		h.Sum(s[:0])
		return s
	}
	if fi.IsDir() {
		entries, err := fs.ReadDir(f.FS, name)
		if err != nil {
			return fail(err)
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			t := "f"
			if e.IsDir() {
				t = "d"
			}
			names = append(names, e.Name()+"\x00"+t)
		}
		sort.Strings(names)
		h.Write([]byte("dir\x00"))
		for _, n := range names {
			io.WriteString(h, n+"\x00")
		}
	} else {
		b, err := fs.ReadFile(f.FS, name)
		if err != nil {
			return fail(err)
		}
		h.Write([]byte("file\x00"))
		h.Write(b)
	}
	var s Sum
	h.Sum(s[:0])
	return s
}

var (
	_ fs.ReadFileFS = (*Recorder)(nil)
	_ fs.ReadDirFS  = (*Recorder)(nil)
	_ fs.StatFS     = (*Recorder)(nil)
)
