package outtree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"
)

// FileStat is a file's lstat identity: what changes when anything writes
// it, renames another file over it or touches it. ctime cannot be set
// back by a user (os.Chtimes sets mtime and atime only), so an edit that
// keeps the size and restores the mtime still changes it.
type FileStat struct {
	Size  int64
	Mtime int64 // nanoseconds since the epoch
	Ctime int64 // nanoseconds since the epoch
	Ino   uint64
	Dev   uint64
	Mode  uint32 // st_mode, the file type included
}

// Index is the lstat identity of the files of a tree as wavesmith last
// wrote or verified them (as git's index is for a work tree), paired with
// the bytes those files held then, which the caller keeps (the tree
// cache's entry): a file whose identity is the recorded one holds the
// recorded bytes, and is not read again. Taken is when the record was
// taken, before the first file was stat'd or written: a file whose mtime
// or ctime is not older than Taken minus RacyMargin may have changed
// within one tick of the file system's clock after it was stat'd, and is
// read, never trusted (git's "racy clean" files).
type Index struct {
	Taken int64 // nanoseconds since the epoch
	Files map[string]FileStat
	// read is how many files the walk that made the index read, wrote
	// how many files it wrote or removed after, from the Index it was
	// given (Same's quick answer; tests).
	read, wrote int
	from        *Index
}

// RacyMargin is how much older than the record a file's mtime and ctime
// must be for its identity to be trusted: far above any file system's
// timestamp granularity (ext4 and tmpfs: one kernel tick; FAT: 2 s).
const RacyMargin = 2 * time.Second

// racyMargin is RacyMargin in nanoseconds; tests lower it to see a file
// trusted without waiting two seconds.
var racyMargin = int64(RacyMargin)

// SetRacyMarginForTest sets the margin of RacyMargin and returns what
// puts it back. Tests only (never in parallel): at 0, a file written
// before a record is trusted at once, so that a test sees files trusted
// without waiting two seconds.
func SetRacyMarginForTest(d time.Duration) (restore func()) {
	old := racyMargin
	racyMargin = int64(d)
	return func() { racyMargin = old }
}

// Known is what a caller knows of a tree from the last time it was
// written or verified: the Index then taken and the bytes its files held
// (both from the tree cache). The zero Known knows nothing: every file is
// read.
type Known struct {
	Index *Index
	Files map[string][]byte
}

// unchanged reports whether the file p, whose lstat identity is st now
// (the walk began at now), holds want without reading it: its identity
// is the recorded one, not racy, and the bytes it held then are want
// (wantIsKnown: want is k.Files[p], which exists).
func (k Known) unchanged(p string, st FileStat, want []byte, wantIsKnown bool, now int64) bool {
	if k.Index == nil {
		return false
	}
	rec, ok := k.Index.Files[p]
	if !ok || rec != st || !k.Index.trusts(rec, now) {
		return false
	}
	if wantIsKnown {
		return true
	}
	old, ok := k.Files[p]
	return ok && bytes.Equal(old, want)
}

// trusts reports whether the recorded identity rec is not racy: its
// times are older than the record by RacyMargin, and the clock did not
// go back since (now, when the walk began, is not before Taken).
func (ix *Index) trusts(rec FileStat, now int64) bool {
	limit := ix.Taken - racyMargin
	return now >= ix.Taken && rec.Mtime < limit && rec.Ctime < limit
}

// Same reports whether ix records what old records and trusts nothing
// more: storing ix instead of old gains nothing.
func (ix *Index) Same(old *Index) bool {
	if ix == nil || old == nil {
		return ix == old
	}
	if len(ix.Files) != len(old.Files) {
		return false
	}
	if ix.from == old && ix.read == 0 && ix.wrote == 0 {
		// Every file was trusted by old (so recorded there, as it is
		// here): with as many files, ix is old.
		return true
	}
	now := time.Now().UnixNano()
	for p, st := range ix.Files {
		rec, ok := old.Files[p]
		if !ok || rec != st || ix.trusts(st, now) && !old.trusts(rec, now) {
			return false
		}
	}
	return true
}

const indexMagic = "wavesmith tree index v1\n"

// MarshalBinary encodes ix: paths in order, each sharing its prefix with
// the one before.
func (ix *Index) MarshalBinary() ([]byte, error) {
	paths := make([]string, 0, len(ix.Files))
	for p := range ix.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b := make([]byte, 0, len(indexMagic)+16+len(paths)*48)
	b = append(b, indexMagic...)
	b = binary.AppendVarint(b, ix.Taken)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	prev := ""
	for _, p := range paths {
		n := 0
		for n < len(p) && n < len(prev) && p[n] == prev[n] {
			n++
		}
		b = binary.AppendUvarint(b, uint64(n))
		b = binary.AppendUvarint(b, uint64(len(p)-n))
		b = append(b, p[n:]...)
		st := ix.Files[p]
		b = binary.AppendVarint(b, st.Size)
		b = binary.AppendVarint(b, st.Mtime)
		b = binary.AppendVarint(b, st.Ctime)
		b = binary.AppendUvarint(b, st.Ino)
		b = binary.AppendUvarint(b, st.Dev)
		b = binary.AppendUvarint(b, uint64(st.Mode))
		prev = p
	}
	return b, nil
}

// errIndex: an encoded Index that is truncated, corrupt or of another
// format.
var errIndex = errors.New("not a tree index of this format, or corrupt")

// UnmarshalBinary decodes what MarshalBinary wrote. b is hostile input
// (a cache on disk): anything short, long, out of order or out of range
// is an error, and ix is then left as it was.
func (ix *Index) UnmarshalBinary(b []byte) error {
	if !bytes.HasPrefix(b, []byte(indexMagic)) {
		return errIndex
	}
	b = b[len(indexMagic):]
	bad := false
	varint := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	uvarint := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	taken := varint()
	count := uvarint()
	// Each file takes at least 8 bytes: a count beyond that is a lie.
	if bad || count > uint64(len(b)/8) {
		return fmt.Errorf("%w: %d files in %d bytes", errIndex, count, len(b))
	}
	// The paths go into one arena, made a string once: no allocation
	// per path.
	type rec struct {
		end int
		st  FileStat
	}
	recs := make([]rec, 0, count)
	// A path shares a prefix with the one before: bound each path and
	// all of them, so that a small record cannot ask for a huge arena.
	const maxPath = 4096
	limit := 8*len(b) + 1<<16
	arena := make([]byte, 0, min(2*len(b), limit))
	start := 0
	for i := uint64(0); i < count; i++ {
		shared, n := uvarint(), uvarint()
		if bad || shared > uint64(len(arena)-start) || n > uint64(len(b)) || shared+n > maxPath || len(arena)+int(shared+n) > limit {
			return fmt.Errorf("%w: file %d", errIndex, i)
		}
		next := len(arena)
		arena = append(arena, arena[start:start+int(shared)]...)
		arena = append(arena, b[:n]...)
		b = b[n:]
		if next == len(arena) || i > 0 && string(arena[next:]) <= string(arena[start:next]) {
			return fmt.Errorf("%w: file %d out of order", errIndex, i)
		}
		start = next
		st := FileStat{Size: varint(), Mtime: varint(), Ctime: varint(), Ino: uvarint(), Dev: uvarint()}
		mode := uvarint()
		if bad || mode > 1<<32-1 || st.Size < 0 {
			return fmt.Errorf("%w: file %d", errIndex, i)
		}
		st.Mode = uint32(mode)
		recs = append(recs, rec{len(arena), st})
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: trailing bytes", errIndex)
	}
	paths := string(arena)
	files := make(map[string]FileStat, count)
	from := 0
	for _, r := range recs {
		files[paths[from:r.end]] = r.st
		from = r.end
	}
	ix.Taken, ix.Files = taken, files
	return nil
}
