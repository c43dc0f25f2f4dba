//go:build linux || darwin || freebsd

package outtree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wavesmith/wavesmith/internal/fsroot"
	"golang.org/x/sys/unix"
)

// A tree holds tens of thousands of small files: its reads and writes are
// bound by system calls, not bytes. os.File costs several calls per file
// (on Linux: fcntl to learn the blocking mode, epoll_ctl to try the
// poller), and os.Root opens every folder of a path again. Here each file
// is one openat below its folder's descriptor (O_NOFOLLOW: a symlink is
// refused, never followed), fstat, read or write, close; each folder is
// opened once, by name below its parent (O_NOFOLLOW|O_DIRECTORY), so no
// path leaves the tree, as with os.Root.

const (
	openDir  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	openRead = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	openNew  = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
)

// maxTreeDepth bounds how deep Read descends (one descriptor is open per
// level): far beyond any tree wavesmith writes.
const maxTreeDepth = 256

// readTree is Read's walk: every regular file below dir, keyed by its
// slash path; a symlink or special file is fsroot.ErrNotRegular, a file over
// fsroot.MaxFileSize fsroot.ErrTooLarge, each naming the file.
func readTree(dir string) (map[string][]byte, error) {
	files, _, err := walkTree(dir, nil, Known{})
	return files, err
}

// walkTree is readTree, indexed when want is not nil: each regular file
// is first stat'd (fstatat, no open), and one that known says holds
// want's bytes (its recorded identity, not racy) is not read: its entry
// is want's slice. The others are read as readTree reads them. It also
// returns (nil when want is nil) the lstat identity of every regular file
// that holds want's bytes and when the walk began: the Index of the tree
// as it is, for want. When the walk covered want (walkStats.covered from
// the Index known), the files are nil: walkStats.tree makes them.
func walkTree(dir string, want map[string][]byte, known Known) (map[string][]byte, *walkStats, error) {
	var ws *walkStats
	if want != nil {
		ws = &walkStats{taken: time.Now().UnixNano()}
	}
	fd, err := unix.Open(dir, openDir, 0)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	if ws != nil {
		ws.rule = walkRule(fd, ws.taken)
	}
	entries, err := readDirFd(fd, "", nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	// The top's folders (namespaces, _flux, ...) are read by several
	// readers at once: a tree is latency-bound, one system call per step.
	// Errors are kept per entry, so the first one in name order is
	// reported, as a single reader would.
	readers := make([]*treeReader, min(ioWorkers, len(entries)))
	// On a cache hit the bytes wanted are the bytes known: one lookup
	// less per file.
	wantIsKnown := want != nil && known.Files != nil && reflect.ValueOf(want).UnsafePointer() == reflect.ValueOf(known.Files).UnsafePointer()
	var kids map[string]*dirKids
	if ws != nil {
		kids = known.Index.kids()
	}
	for w := range readers {
		readers[w] = &treeReader{dir: dir, want: want, known: known, wantIsKnown: wantIsKnown, kids: kids}
		if ws != nil {
			readers[w].rule = ws.rule
			// The files the record trusts, shared out: no slice grown
			// and copied over and over in a tree of tens of thousands.
			if n := known.Index.count(); n > 0 {
				readers[w].kept = make([]string, 0, n/len(readers)+n/16)
			}
			readers[w].indexed = true
		}
	}
	errs := onWorkersOf(context.Background(), len(entries), false, func(w, i int) error {
		_, err := readers[w].entry(fd, entries[i], 0)
		return err
	})
	if err := firstError(errs); err != nil {
		return nil, nil, err
	}
	var c walkCounts
	for _, r := range readers {
		c.files += len(r.kept) + len(r.files)
		c.stats += len(r.kept) + len(r.stats)
		c.trusted += len(r.kept)
		c.read += r.read
		c.dirs += len(r.dirs)
		c.listed += r.listed
	}
	if ws != nil {
		ws.read, ws.listed = c.read, c.listed
		ws.dirs = make(map[string]FileStat, c.dirs)
		for _, r := range readers {
			for _, d := range r.dirs {
				ws.dirs[d.p] = d.st
			}
		}
		if stats, ok := c.fromKnown(readers, want, known); ok {
			ws.files = stats
			ws.same = c.read == 0
			ws.covered = true
			for _, r := range readers {
				ws.readFiles = append(ws.readFiles, r.files...)
			}
			return nil, ws, nil // ws.tree
		}
	}
	files := make(map[string][]byte, c.files)
	for _, r := range readers {
		for _, p := range r.kept {
			files[p] = want[p]
		}
		for _, f := range r.files {
			files[f.p] = f.b
		}
	}
	if ws != nil {
		ws.files = make(map[string]FileStat, c.stats)
		for _, r := range readers {
			for _, p := range r.kept {
				ws.files[p] = known.Index.Files[p]
			}
			for _, f := range r.stats {
				ws.files[f.p] = f.st
			}
		}
		ws.same = c.read == 0 && c.trusted == len(want)
	}
	return files, ws, nil
}

// walkCounts counts what the readers of an indexed walk found: files
// (trusted or read), identities recorded, files trusted, files read.
type walkCounts struct {
	files, stats, trusted, read, dirs, listed int
}

// fromKnown makes the walk's identities from a copy of known's Index,
// when want and the Index name every file trusted and every file read
// only adds to them (no map built entry by entry: a tree of tens of
// thousands of files most of which are trusted); the walk's files are
// then want with the files read over it, made only when asked
// (walkStats.tree). ok is false when they do not: a file wanted or
// recorded was not found.
//
// The trusted files T are in want and in the Index (walk: a file is
// trusted only then), the files read R are all the others found. With
// |T| + |R in want| = |want|, want's paths are T and R's: the files are
// want, R's bytes put over it. With |T| + |R in Index| = |Index|, the
// Index's paths are T and R's: the identities are the Index's, R's
// removed, then those of R's files that hold the bytes wanted.
func (c walkCounts) fromKnown(readers []*treeReader, want map[string][]byte, known Known) (stats map[string]FileStat, ok bool) {
	if known.Index == nil || c.trusted == 0 || 2*c.read > c.trusted {
		return nil, false
	}
	inWant, inIndex := 0, 0
	for _, r := range readers {
		for _, f := range r.files {
			if _, ok := want[f.p]; ok {
				inWant++
			}
			if _, ok := known.Index.Files[f.p]; ok {
				inIndex++
			}
		}
	}
	if c.trusted+inWant != len(want) || c.trusted+inIndex != len(known.Index.Files) {
		return nil, false
	}
	if c.read == 0 {
		// Nothing read (a check, a render of an unchanged tree): the
		// identities are the Index's, and so is the map, shared rather
		// than copied. Nothing writes it: the only writer of an Index's
		// Files is an update's apply, and an update that read nothing
		// has nothing to apply (walkStats.same).
		return known.Index.Files, true
	}
	stats = maps.Clone(known.Index.Files)
	for _, r := range readers {
		for _, f := range r.files {
			delete(stats, f.p)
		}
		for _, f := range r.stats {
			stats[f.p] = f.st
		}
	}
	return stats, true
}

// tree returns the files the walk found, keyed by their slash paths:
// files as walkTree returned them, or when that is nil because the walk
// covered want (fromKnown), want with the bytes of the files it read put
// over it. An update that plans from the files read alone never makes
// it (planRead).
func (ws *walkStats) tree(files, want map[string][]byte) map[string][]byte {
	if files != nil || ws == nil || !ws.covered {
		return files
	}
	files = maps.Clone(want)
	for _, f := range ws.readFiles {
		files[f.p] = f.b
	}
	return files
}

type fileID struct {
	p  string
	st FileStat
}

// walkStats is what an indexed walk saw: when it began, the identity of
// every regular file and of every folder whose entries it recorded, how
// many files it read and folders it listed.
type walkStats struct {
	taken        int64
	rule         racyRule
	files, dirs  map[string]FileStat
	read, listed int
	// same: every file found was trusted and every file wanted found:
	// the tree holds exactly the files wanted.
	same bool
	// covered: every file wanted was found, trusted to hold the bytes
	// wanted or read (readFiles, with the files found that are not
	// wanted): the tree differs from the one wanted in those files only
	// (planRead).
	covered   bool
	readFiles []fileBytes
}

// index is the Index of what the walk saw; known is what it was told.
func (ws *walkStats) index(known Known) *Index {
	ix := &Index{Taken: ws.taken, Files: ws.files, Dirs: ws.dirs, read: ws.read, listed: ws.listed, from: known.Index, rule: ws.rule}
	if known.Index != nil {
		ix.order = known.Index.order // mostly the same files: see ordered
	}
	return ix
}

// walkRule is the racy rule of a walk that began at now of the tree whose
// top folder is open as fd.
func walkRule(fd int, now int64) racyRule {
	rule := racyRule{now: now}
	var st unix.Stat_t
	if fsroot.LocalFileSystem(fd) && unix.Fstat(fd, &st) == nil {
		rule.dev, rule.local = uint64(st.Dev), true
	}
	return rule
}

// statRegular is the lstat identity of dir+name below the folder open as
// fd when it is a regular file of at most fsroot.MaxFileSize bytes (ok);
// anything else is read, and refused or compared, the careful way.
func (r *treeReader) statRegular(fd int, dir []byte, name string) (id FileStat, ok bool) {
	var st unix.Stat_t
	if r.lstat(fd, dir, name, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > fsroot.MaxFileSize {
		return FileStat{}, false
	}
	return fileStat(&st), true
}

// lstat is fstatat(fd, dir+name, AT_SYMLINK_NOFOLLOW), the path made in
// the reader's scratch: no string is made per call (unix.Fstatat copies
// its path into a new C string), and a walk stats tens of thousands of
// files. A path holding a NUL is refused, as unix.Fstatat refuses it.
func (r *treeReader) lstat(fd int, dir []byte, name string, st *unix.Stat_t) error {
	if bytes.IndexByte(dir, 0) >= 0 || strings.IndexByte(name, 0) >= 0 {
		return unix.EINVAL
	}
	r.path = append(append(append(r.path[:0], dir...), name...), 0)
	return lstatPath(fd, r.path, st)
}

// fileStat is the identity of st.
func fileStat(st *unix.Stat_t) FileStat {
	return FileStat{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: uint64(st.Dev), Mode: uint32(st.Mode)}
}

// firstError is the first non-nil error of errs, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

type treeReader struct {
	dir string
	// files are the files read (every file, not indexed).
	files []fileBytes
	// An indexed walk (walkTree): the files wanted (the very map of
	// known's bytes: wantIsKnown), what is known of the tree, when the
	// walk began, the paths of the files trusted (kept: each holds want's
	// bytes, and its identity is the one known's Index records, or it
	// would not be trusted), the identities of the files read that hold
	// the bytes wanted and how many files were read.
	indexed     bool
	want        map[string][]byte
	wantIsKnown bool
	known       Known
	rule        racyRule
	kept        []string
	stats       []fileID
	read        int
	// kids are the entries of the folders known's Index records (nil:
	// none), dirs the identities of the folders whose every entry the
	// new Index holds (trusted, or listed and found so), listed how many
	// folders were listed.
	kids   map[string]*dirKids
	dirs   []fileID
	listed int
	// buf is the listing's buffer (fsroot.ReadDirents), names the
	// paths' scratch, rel the path of the folder trusted looks at and
	// path that of the path stat'd (lstat), one of each per reader: a
	// tree has a folder per spec.
	buf, names, rel, path []byte
}

// folder reads the folder open as fd, whose slash path is rel (below the
// top), in name order, so that the first error is always the same.
// Indexed, it records the folder's identity, taken before the listing,
// when every entry holds what is wanted (whole).
func (r *treeReader) folder(fd int, rel string, depth int) (whole bool, err error) {
	if depth > maxTreeDepth {
		return false, fmt.Errorf("%s: %w: folders nest more than %d deep", filepath.Join(r.dir, rel), ErrNotTree, maxTreeDepth)
	}
	if r.buf == nil {
		r.buf = make([]byte, 32<<10)
	}
	var st unix.Stat_t
	record := r.indexed && unix.Fstat(fd, &st) == nil
	entries, err := readDirFd(fd, rel, r.buf, &r.names)
	if err != nil {
		return false, fmt.Errorf("%s: %w", filepath.Join(r.dir, rel), err)
	}
	r.listed++
	whole = true
	for _, e := range entries {
		w, err := r.entry(fd, e, depth)
		if err != nil {
			return false, err
		}
		whole = whole && w
	}
	if record && whole {
		r.dirs = append(r.dirs, fileID{rel, fileStat(&st)})
	}
	return whole, nil
}

// trusted reports whether the folder p, at r.rel below the folder open
// as fd (a path kept in the reader's scratch, grown and cut as trusted
// descends: no string made per folder), is one the Index records and
// trusts, with its recorded identity (so its entries are the recorded
// ones), and every file in it and below it is trusted to hold the bytes
// wanted: they are then kept, without a listing or an open. On anything else nothing is kept: the folder is
// listed. A path is only stat'd here (a folder swapped for a symlink
// since it was stat'd would lead the stats elsewhere, whose identities
// are not the recorded ones); every read goes through the listing.
func (r *treeReader) trusted(fd int, p string, depth int) bool {
	ix := r.known.Index
	rec, ok := ix.Dirs[p]
	if !ok || depth > maxTreeDepth || !ix.trusts(rec, r.rule) {
		return false
	}
	var st unix.Stat_t
	if r.lstat(fd, r.rel, "", &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || fileStat(&st) != rec {
		return false
	}
	k := r.kids[p]
	kept, dirs := len(r.kept), len(r.dirs)
	undo := func() bool {
		r.kept, r.dirs = r.kept[:kept], r.dirs[:dirs]
		return false
	}
	for i, f := range k.files {
		w, wanted := r.want[f]
		if !wanted {
			return undo()
		}
		// The identity the record gave the folder's file: no lookup.
		id, ok := r.statRegular(fd, r.rel, f[len(p):])
		if !ok || !r.known.matches(f, id, k.stats[i], w, r.wantIsKnown, r.rule) {
			return undo()
		}
		r.kept = append(r.kept, f)
	}
	for _, d := range k.dirs {
		n := len(r.rel)
		r.rel = append(r.rel, d[len(p):]...)
		ok := r.trusted(fd, d, depth+1)
		r.rel = r.rel[:n]
		if !ok {
			return undo()
		}
	}
	r.dirs = append(r.dirs, fileID{p, rec})
	return true
}

// entry reads the entry e of the folder open as fd: a folder below it, or
// a regular file. whole: indexed, the entry holds what is wanted (a file
// the bytes wanted, a folder recorded whole).
func (r *treeReader) entry(fd int, e dirent, depth int) (whole bool, err error) {
	// A name from the listing holds no slash and is not "." or "..".
	p := e.p
	if e.typ == unix.DT_UNKNOWN {
		// A file system that does not fill in d_type: ask.
		var st unix.Stat_t
		if err := r.lstat(fd, nil, e.name, &st); err != nil {
			return false, &fs.PathError{Op: "stat", Path: filepath.Join(r.dir, p), Err: err}
		}
		e.typ = fsroot.StatDirent(uint32(st.Mode))
	}
	switch e.typ {
	case unix.DT_DIR:
		if r.kids != nil {
			r.rel = append(r.rel[:0], e.name...)
			if r.trusted(fd, p, depth+1) {
				return true, nil
			}
		}
		sub, err := unix.Openat(fd, e.name, openDir, 0)
		if err != nil {
			return false, r.openError(p, err)
		}
		whole, err = r.folder(sub, p, depth+1)
		unix.Close(sub)
		return whole, err
	case unix.DT_REG:
		if r.indexed {
			// Indexed: a file whose identity says it holds the bytes
			// wanted is not opened. fstatat does not follow a symlink
			// planted since the listing; anything but a regular file is
			// read below, which refuses it as Read does.
			if w, ok := r.want[p]; ok {
				if id, ok := r.statRegular(fd, nil, e.name); ok && r.known.unchanged(p, id, w, r.wantIsKnown, r.rule) {
					r.kept = append(r.kept, p)
					return true, nil
				}
			}
		}
		b, st, err := r.file(fd, e.name)
		if err != nil {
			return false, fmt.Errorf("%s: %w", filepath.Join(r.dir, p), err)
		}
		r.files = append(r.files, fileBytes{p, b})
		if r.indexed {
			r.read++
			// Only a file holding the bytes wanted goes in the Index: the
			// bytes themselves, or, when they are the bytes known as
			// placeholders (Intact: Known.bySum), the digest the Index
			// has of them.
			if w, ok := r.want[p]; ok && (bytes.Equal(b, w) || r.wantIsKnown && r.known.holds(p, b)) {
				r.stats = append(r.stats, fileID{p, fileStat(&st)})
				return true, nil
			}
		}
		return false, nil
	}
	mode, ok := fsroot.DirentMode(e.typ)
	if !ok {
		mode = fs.ModeIrregular
	}
	return false, fmt.Errorf("%s: %w: it is a %s", filepath.Join(r.dir, p), fsroot.ErrNotRegular, fsroot.ModeName(mode))
}

// openError names what an openat of a folder entry met: a symlink planted
// after the listing is fsroot.ErrNotRegular, as in the listing.
func (r *treeReader) openError(p string, err error) error {
	if fsroot.IsNoFollow(err) || errors.Is(err, unix.ENOTDIR) {
		return fmt.Errorf("%s: %w: it is a %s", filepath.Join(r.dir, p), fsroot.ErrNotRegular, fsroot.ModeName(fs.ModeSymlink))
	}
	return &fs.PathError{Op: "open", Path: filepath.Join(r.dir, p), Err: err}
}

// file reads the regular file name below fd, at most fsroot.MaxFileSize
// bytes, and returns its identity as fstat gave it before the read; the
// open does not block on a FIFO planted after the listing.
func (r *treeReader) file(fd int, name string) ([]byte, unix.Stat_t, error) {
	var st unix.Stat_t
	f, err := unix.Openat(fd, name, openRead, 0)
	if fsroot.IsNoFollow(err) {
		return nil, st, fmt.Errorf("%w: it is a %s", fsroot.ErrNotRegular, fsroot.ModeName(fs.ModeSymlink))
	}
	if err != nil {
		return nil, st, err
	}
	defer unix.Close(f)
	if err := unix.Fstat(f, &st); err != nil {
		return nil, st, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil, st, fmt.Errorf("%w: it is a folder", fsroot.ErrNotRegular)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, st, fmt.Errorf("%w: it is a %s", fsroot.ErrNotRegular, fsroot.ModeName(fsroot.StatMode(uint32(st.Mode))))
	}
	if st.Size > fsroot.MaxFileSize {
		return nil, st, fmt.Errorf("%w: %d bytes, more than %d", fsroot.ErrTooLarge, st.Size, fsroot.MaxFileSize)
	}
	// Read one byte past the size fstat gave, to see a file that grew.
	b := make([]byte, 0, st.Size+1)
	for {
		if len(b) == cap(b) {
			if len(b) > fsroot.MaxFileSize {
				return nil, st, fmt.Errorf("%w: more than %d bytes", fsroot.ErrTooLarge, fsroot.MaxFileSize)
			}
			b = append(b, 0)[:len(b)]
		}
		want := cap(b) - len(b)
		n, err := unix.Read(f, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, st, err
		}
		b = b[:len(b)+n]
		// A regular file reads short only at its end: one call per
		// file, not a second one to see the end.
		if n < want {
			break
		}
	}
	if len(b) > fsroot.MaxFileSize {
		return nil, st, fmt.Errorf("%w: more than %d bytes", fsroot.ErrTooLarge, fsroot.MaxFileSize)
	}
	return b, st, nil
}

// dirent is an entry of a folder: its slash path below the tree, its
// name (the end of p) and its type.
type dirent struct {
	p, name string
	typ     uint8
}

// readDirFd lists the folder open as fd, whose slash path is rel ("" for
// the top), without "." and "..", sorted by name, with buf (nil: a new
// one) as the listing's buffer and *names (nil: none) as scratch for the
// entries' paths, which share one string. fd stays open and its offset
// is left at the end.
func readDirFd(fd int, rel string, buf []byte, names *[]byte) ([]dirent, error) {
	if buf == nil {
		buf = make([]byte, 32<<10)
	}
	var scratch []byte
	if names != nil {
		scratch = (*names)[:0]
	}
	prefix := len(rel)
	if rel != "" {
		prefix++
	}
	type span struct {
		end int
		typ uint8
	}
	var small [64]span
	spans := small[:0]
	err := fsroot.ReadDirents(fd, buf, func(name []byte, typ uint8) {
		if rel != "" {
			scratch = append(scratch, rel...)
			scratch = append(scratch, '/')
		}
		scratch = append(scratch, name...)
		spans = append(spans, span{len(scratch), typ})
	})
	if err != nil {
		return nil, err
	}
	if names != nil {
		*names = scratch
	}
	// One string for the folder's paths: one allocation, not one a file.
	all := string(scratch)
	out := make([]dirent, len(spans))
	start := 0
	for i, sp := range spans {
		out[i] = dirent{p: all[start:sp.end], name: all[start+prefix : sp.end], typ: sp.typ}
		start = sp.end
	}
	slices.SortFunc(out, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// openBelow opens the folder at slash path d below the folder fd, one
// component at a time, never following a symlink.
func openBelow(fd int, d string) (int, error) {
	cur := fd
	for len(d) > 0 {
		name := d
		rest := ""
		for i := 0; i < len(d); i++ {
			if d[i] == '/' {
				name, rest = d[:i], d[i+1:]
				break
			}
		}
		next, err := unix.Openat(cur, name, openDir, 0)
		if cur != fd {
			unix.Close(cur)
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		cur, d = next, rest
	}
	return cur, nil
}

// writeNewFd creates the file name below dirfd, which must not exist,
// holding b; with st, it fstats the file once written.
func writeNewFd(dirfd int, name string, b []byte, st *unix.Stat_t) error {
	f, err := unix.Openat(dirfd, name, openNew, 0o644)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		n, err := unix.Write(f, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(f)
			return err
		}
		b = b[n:]
	}
	if st != nil {
		if err := unix.Fstat(f, st); err != nil {
			unix.Close(f)
			return err
		}
	}
	return unix.Close(f)
}

// readFiles is Read's walk on Linux, macOS and FreeBSD.
func readFiles(dir string) (map[string][]byte, error) { return readTree(dir) }

// readIndexed is ReadIndexed's walk on Linux, macOS and FreeBSD: files
// known to hold want's bytes are stat'd, not read.
func readIndexed(dir string, want map[string][]byte, known Known) (map[string][]byte, *Index, error) {
	if want == nil {
		want = map[string][]byte{}
	}
	got, ws, err := walkTree(dir, want, known)
	if err != nil {
		return nil, nil, err
	}
	return ws.tree(got, want), ws.index(known), nil
}

// writeTree makes the folders below top and writes the files of the new
// tree at dir with ioWorkers writers (making a file is kernel work, the
// inode and the folder entry, which spreads over the cores; 2, 3, 4 and 8
// writers took as long on 2 cores). Each folder is made below its
// parent's descriptor (mkdirat) and opened there (O_NOFOLLOW|O_DIRECTORY:
// a symlink planted in between is refused), each file is created below
// its folder's descriptor (O_EXCL|O_NOFOLLOW), written, fstat'd for its
// identity and closed: no path is ever resolved from the top, and no
// descriptor leaves the tree. A folder is handed to the writers as soon as
// it is made, so that every writer has work from the start.
func writeTree(ctx context.Context, dir string, top *folderNode) error {
	fd, err := unix.Open(dir, openDir, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	q := newFolderQueue()
	q.push(folderJob{top, fd})
	var wg sync.WaitGroup
	for range ioWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j, ok := q.pop()
				if !ok {
					return
				}
				if !q.stopped() {
					if err := ctx.Err(); err != nil {
						j.n.err = err
					} else {
						j.n.err = writeFolder(q, j.n, j.fd)
					}
					if j.n.err != nil {
						q.stop()
					}
				}
				unix.Close(j.fd)
				q.done()
			}
		}()
	}
	wg.Wait()
	if err := nodeErrors(top); err != nil {
		return err
	}
	return ctx.Err()
}

// writeFolder makes the subfolders of the folder n (open as fd), hands
// each to the writers, and writes n's files.
func writeFolder(q *folderQueue, n *folderNode, fd int) error {
	sortNode(n)
	for _, s := range n.subs {
		name := s.name()
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			return &fs.PathError{Op: "mkdir", Path: s.rel, Err: err}
		}
		sfd, err := unix.Openat(fd, name, openDir, 0)
		if err != nil {
			return &fs.PathError{Op: "open", Path: s.rel, Err: err}
		}
		q.push(folderJob{s, sfd})
	}
	n.stats = make([]FileStat, len(n.files))
	var st unix.Stat_t
	skip := len(n.rel) + 1
	if n.rel == "" {
		skip = 0
	}
	for i, f := range n.files {
		if err := writeNewFd(fd, f.p[skip:], f.b, &st); err != nil {
			return &fs.PathError{Op: "write", Path: f.p, Err: err}
		}
		n.stats[i] = fileStat(&st)
	}
	return nil
}

// folderJob is a folder of the new tree to fill, open as fd.
type folderJob struct {
	n  *folderNode
	fd int
}

// folderQueue hands folders to writeTree's writers, the last made first
// (few descriptors open at once), until none is queued or being written.
type folderQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	jobs    []folderJob
	pending int // queued or being written
	failed  atomic.Bool
}

func newFolderQueue() *folderQueue {
	q := &folderQueue{}
	q.cond.L = &q.mu
	return q
}

func (q *folderQueue) push(j folderJob) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.pending++
	q.mu.Unlock()
	q.cond.Signal()
}

// pop waits for a folder; false when every folder is done.
func (q *folderQueue) pop() (folderJob, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.jobs) == 0 && q.pending > 0 {
		q.cond.Wait()
	}
	if len(q.jobs) == 0 {
		return folderJob{}, false
	}
	j := q.jobs[len(q.jobs)-1]
	q.jobs = q.jobs[:len(q.jobs)-1]
	return j, true
}

// done ends a folder popped.
func (q *folderQueue) done() {
	q.mu.Lock()
	q.pending--
	last := q.pending == 0
	q.mu.Unlock()
	if last {
		q.cond.Broadcast()
	}
}

// stop makes the writers close the folders still queued without writing
// them: one failed.
func (q *folderQueue) stop()         { q.failed.Store(true) }
func (q *folderQueue) stopped() bool { return q.failed.Load() }
