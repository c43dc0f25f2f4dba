package outtree

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
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
//
// Dirs is the lstat identity of the folders below the top whose every
// entry the record holds (each file in Files, each folder in Dirs), taken
// before they were listed. A folder's mtime and ctime change whenever an
// entry is added to it, removed or renamed in or out, so a trusted folder
// whose identity is the recorded one holds exactly the recorded entries:
// it is not listed again, its files are stat'd by path (as git's
// untracked cache trusts a folder's mtime).
type Index struct {
	Taken int64 // nanoseconds since the epoch
	Files map[string]FileStat
	Dirs  map[string]FileStat
	// read is how many files the walk that made the index read, wrote
	// how many files it wrote or removed after, listed how many folders
	// it listed (not trusted), from the Index it was given (Same's quick
	// answer; tests).
	read, wrote, listed int
	from                *Index
	// order is the paths of Files in order, as decoded, or as the Index
	// a walk trusted had them (nil when neither): an encoding whose Files
	// have exactly these paths takes them without sorting (ordered).
	// orderStats are their identities, as decoded alone (then order is
	// exactly Files): kids groups them without a lookup per file.
	order      []string
	orderStats []FileStat
	// rule is the racy rule of the walk that made the Index (Same).
	rule racyRule
	// Sums are the SHA-256 digests of the bytes of the files the Index
	// records racy when it is made (sumRacy): such a file is read by the
	// next walk, and Intact compares its digest instead of the caller
	// loading the bytes recorded. Empty when more than maxRacySums files
	// are racy (a tree just written whole: reading it all costs no more).
	Sums map[string][sha256.Size]byte
}

// fileSum is a SHA-256 digest of a file's bytes (Index.Sums).
type fileSum = [sha256.Size]byte

// maxRacySums bounds Sums: a render that changed a few specs leaves a few
// racy files, a tree written whole tens of thousands.
const maxRacySums = 4096

// sumRacy sets ix.Sums to the digests of files' bytes for each file ix
// records with times within RacyMargin of Taken, the largest margin (a
// walk's own rule may trust some of them: their digests are then not
// read), when there are at most maxRacySums; files holds the bytes ix's
// files hold (they were written or found to hold them).
func (ix *Index) sumRacy(files map[string][]byte) {
	if ix == nil {
		return
	}
	ix.Sums = nil
	// Racy under the largest margin: a rule of no local file system,
	// whose walk began when the record was taken.
	rule := racyRule{now: ix.Taken}
	var racy []string
	for p, st := range ix.Files {
		if !ix.trusts(st, rule) {
			if len(racy) == maxRacySums {
				return
			}
			racy = append(racy, p)
		}
	}
	if len(racy) == 0 {
		return
	}
	ix.Sums = make(map[string]fileSum, len(racy))
	for _, p := range racy {
		if b, ok := files[p]; ok {
			ix.Sums[p] = sha256.Sum256(b)
		}
	}
}

// RacyMargin is how much older than the record a file's mtime and ctime
// must be for its identity to be trusted: far above any file system's
// timestamp granularity (ext4 and tmpfs: one kernel tick; FAT: 2 s).
const RacyMargin = 2 * time.Second

// LocalRacyMargin is RacyMargin for a file on the tree's own local file
// system (fsroot.LocalFileSystem) whose recorded mtime or ctime is not a
// whole millisecond: times kept to the nanosecond, from this machine's
// clock, which the kernel stamps at most one tick (1-10 ms) behind the
// clock the record's time is read from. It is 25 ticks of the slowest
// kernel clock. A file whose times are whole milliseconds (ext4 with
// 128-byte inodes keeps seconds; a network file system's times come from
// another clock) keeps RacyMargin.
const LocalRacyMargin = 250 * time.Millisecond

// racyMargin and localRacyMargin are RacyMargin and LocalRacyMargin in
// nanoseconds; tests lower them to see a file trusted without waiting.
var racyMargin, localRacyMargin = int64(RacyMargin), int64(LocalRacyMargin)

// SetRacyMarginForTest sets both margins (RacyMargin, LocalRacyMargin)
// and returns what puts them back. Tests only (never in parallel): at 0,
// a file written before a record is trusted at once, so that a test sees
// files trusted without waiting.
func SetRacyMarginForTest(d time.Duration) (restore func()) {
	old, oldLocal := racyMargin, localRacyMargin
	racyMargin, localRacyMargin = int64(d), int64(d)
	return func() { racyMargin, localRacyMargin = old, oldLocal }
}

// racyRule is what a walk decides racy identities by: when it began
// (now), and the device of the tree's top folder when that is on a local
// file system (local; LocalRacyMargin applies to the files on it).
type racyRule struct {
	now   int64
	dev   uint64
	local bool
}

// Known is what a caller knows of a tree from the last time it was
// written or verified: the Index then taken and the bytes its files held
// (both from the tree cache). The zero Known knows nothing: every file is
// read.
type Known struct {
	Index *Index
	Files map[string][]byte
	// bySum: Files are placeholders (Intact), and a file read holds its
	// entry when its bytes have the digest the Index has of them
	// (Index.Sums); otherwise only bytes equal to Files' hold them.
	bySum bool
}

// unchanged reports whether the file p, whose lstat identity is st now
// (the walk began at now), holds want without reading it: its identity
// is the recorded one, not racy, and the bytes it held then are want
// (wantIsKnown: want is k.Files[p], which exists).
func (k Known) unchanged(p string, st FileStat, want []byte, wantIsKnown bool, rule racyRule) bool {
	if k.Index == nil {
		return false
	}
	rec, ok := k.Index.Files[p]
	return ok && k.matches(p, st, rec, want, wantIsKnown, rule)
}

// holds reports whether b, the bytes of the file p, are those k's Index
// has the digest of (Index.Sums), when k compares by digest (bySum).
func (k Known) holds(p string, b []byte) bool {
	if !k.bySum || k.Index == nil {
		return false
	}
	sum, ok := k.Index.Sums[p]
	return ok && sha256.Sum256(b) == sum
}

// matches is unchanged with rec, the identity k's Index records for p
// (taken from it already).
func (k Known) matches(p string, st, rec FileStat, want []byte, wantIsKnown bool, rule racyRule) bool {
	if rec != st || !k.Index.trusts(rec, rule) {
		return false
	}
	if wantIsKnown {
		return true
	}
	old, ok := k.Files[p]
	return ok && bytes.Equal(old, want)
}

// dirKids are the entries of a folder an Index records: the slash paths
// of its files (with their identities) and folders.
type dirKids struct {
	files, dirs []string
	stats       []FileStat
}

// kids groups the files and folders ix records by the recorded folder
// that holds them; nil when ix records no folder.
func (ix *Index) kids() map[string]*dirKids {
	if ix == nil || len(ix.Dirs) == 0 {
		return nil
	}
	all := make([]dirKids, len(ix.Dirs))
	m := make(map[string]*dirKids, len(ix.Dirs))
	i := 0
	for d := range ix.Dirs {
		m[d] = &all[i]
		i++
	}
	if len(ix.orderStats) == len(ix.order) && len(ix.order) == len(ix.Files) {
		// Decoded: in path order, a folder's files come in runs (a
		// folder's subfolders may split them): one lookup a run, and a
		// run that is all the folder holds is a slice of order, not a
		// copy.
		for start := 0; start < len(ix.order); {
			parent := parentDir(ix.order[start])
			end := start + 1
			for end < len(ix.order) && parentDir(ix.order[end]) == parent {
				end++
			}
			if k := m[parent]; k != nil {
				if k.files == nil {
					k.files, k.stats = ix.order[start:end:end], ix.orderStats[start:end:end]
				} else {
					k.files = append(k.files, ix.order[start:end]...)
					k.stats = append(k.stats, ix.orderStats[start:end]...)
				}
			}
			start = end
		}
	} else {
		for p, st := range ix.Files {
			if k := m[parentDir(p)]; k != nil {
				k.files = append(k.files, p)
				k.stats = append(k.stats, st)
			}
		}
	}
	for d := range ix.Dirs {
		if k := m[parentDir(d)]; k != nil {
			k.dirs = append(k.dirs, d)
		}
	}
	return m
}

// parentDir is the slash path of the folder holding p ("" for the top).
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// forget drops the record of a folder d whose entries an update changed
// (a file put or removed in it), and of the folders above it: a folder is
// recorded only with every folder in it (its entries are the recorded
// files and folders), so without d's record those above would lose d.
func (ix *Index) forget(d string) {
	for ; d != "." && d != ""; d = path.Dir(d) {
		delete(ix.Dirs, d)
	}
}

// trusts reports whether the recorded identity rec is not racy under
// rule: its times are older than the record by RacyMargin
// (LocalRacyMargin on the tree's local file system, with times finer
// than a millisecond), and the clock did not go back since (rule.now,
// when the walk began, is not before Taken).
func (ix *Index) trusts(rec FileStat, rule racyRule) bool {
	margin := racyMargin
	if rule.local && rec.Dev == rule.dev && (rec.Mtime%1e6 != 0 || rec.Ctime%1e6 != 0) {
		margin = localRacyMargin
	}
	limit := ix.Taken - margin
	return rule.now >= ix.Taken && rec.Mtime < limit && rec.Ctime < limit
}

// Same reports whether ix records what old records and trusts nothing
// more: storing ix instead of old gains nothing.
func (ix *Index) Same(old *Index) bool {
	if ix == nil || old == nil {
		return ix == old
	}
	if len(ix.Files) != len(old.Files) || len(ix.Dirs) != len(old.Dirs) {
		return false
	}
	if ix.from == old && ix.read == 0 && ix.wrote == 0 && ix.listed == 0 {
		// Every file and folder was trusted by old (so recorded there,
		// as it is here): with as many, ix is old.
		return true
	}
	// Both judged by the rule of the walk that made ix (none: RacyMargin).
	rule := ix.rule
	rule.now = time.Now().UnixNano()
	return sameStats(ix, old, ix.Files, old.Files, rule) && sameStats(ix, old, ix.Dirs, old.Dirs, rule)
}

// sameStats reports whether the identities recorded in m (by ix) are
// those recorded in old (by o), none trusted by ix and not by o.
func sameStats(ix, o *Index, m, old map[string]FileStat, rule racyRule) bool {
	for p, st := range m {
		rec, ok := old[p]
		if !ok || rec != st || ix.trusts(st, rule) && !o.trusts(rec, rule) {
			return false
		}
	}
	return true
}

const indexMagic = "wavesmith tree index v3\n"

// MarshalBinary encodes ix: the files, then the folders, each in path
// order, each path sharing its prefix with the one before; then the
// digests of Sums, in the order of the files, each after the number of
// files since the one before.
//
// The encoding is made at its size (statsSize): grown as it is
// appended, it was twice the megabytes of a tree of tens of thousands of
// files, every one of them fresh memory.
func (ix *Index) MarshalBinary() ([]byte, error) {
	files := ix.ordered()
	if files == nil {
		files = sortedStats(ix.Files)
	}
	dirs := sortedStats(ix.Dirs)
	var taken [binary.MaxVarintLen64]byte
	t := binary.PutVarint(taken[:], ix.Taken)
	sums := appendSums(nil, files, ix.Sums) // a few: maxRacySums at most
	b := make([]byte, 0, len(indexMagic)+t+statsSize(files)+statsSize(dirs)+len(sums))
	b = append(b, indexMagic...)
	b = append(b, taken[:t]...)
	b = appendStats(b, files)
	b = appendStats(b, dirs)
	return append(b, sums...), nil
}

// appendSums appends the digests sums holds of files (in path order):
// their count, then for each its distance from the one before in files
// and its digest.
func appendSums(b []byte, files []statPair, sums map[string]fileSum) []byte {
	n := 0
	for _, f := range files {
		if _, ok := sums[f.p]; ok {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	last := -1
	for i, f := range files {
		if s, ok := sums[f.p]; ok {
			b = binary.AppendUvarint(b, uint64(i-last))
			b = append(b, s[:]...)
			last = i
		}
	}
	return b
}

// sums reads what appendSums wrote of order, the files in path order.
func (d *statsDecoder) sums(order []string) (map[string]fileSum, error) {
	count := d.uvarint()
	if d.bad || count > uint64(len(order)) || count > uint64(len(d.b)/(sha256.Size+1)) {
		return nil, fmt.Errorf("%w: %d digests", errIndex, count)
	}
	if count == 0 {
		return nil, nil
	}
	sums := make(map[string]fileSum, count)
	at := -1
	for i := uint64(0); i < count; i++ {
		step := d.uvarint()
		if d.bad || step == 0 || step > uint64(len(order)-1-at) || len(d.b) < sha256.Size {
			return nil, fmt.Errorf("%w: digest %d", errIndex, i)
		}
		at += int(step)
		sums[order[at]] = fileSum(d.b[:sha256.Size])
		d.b = d.b[sha256.Size:]
	}
	return sums, nil
}

// statPair is a path and its identity, as encoded.
type statPair struct {
	p  string
	st FileStat
}

// ordered returns the files of ix in path order from order, when order
// holds exactly the paths of Files (in strict order, each in Files: a
// lookup a path, several times cheaper than sorting tens of thousands);
// nil when it does not.
func (ix *Index) ordered() []statPair {
	if len(ix.order) != len(ix.Files) || len(ix.order) == 0 {
		return nil
	}
	pairs := make([]statPair, len(ix.order))
	for i, p := range ix.order {
		st, ok := ix.Files[p]
		if !ok || i > 0 && p <= ix.order[i-1] {
			return nil
		}
		pairs[i] = statPair{p, st}
	}
	return pairs
}

// sortedStats returns the identities of m in path order: sorted as
// pairs, no lookup per path once sorted (tens of thousands of random map
// accesses).
func sortedStats(m map[string]FileStat) []statPair {
	pairs := make([]statPair, 0, len(m))
	for p, st := range m {
		pairs = append(pairs, statPair{p, st})
	}
	slices.SortFunc(pairs, func(x, y statPair) int { return strings.Compare(x.p, y.p) })
	return pairs
}

// appendStats appends the identities pairs, in path order, to b.
func appendStats(b []byte, pairs []statPair) []byte {
	b = binary.AppendUvarint(b, uint64(len(pairs)))
	prev := ""
	for _, pr := range pairs {
		b = appendStat(b, prev, pr)
		prev = pr.p
	}
	return b
}

// statsSize is how many bytes appendStats appends for pairs: each record
// appended to one scratch buffer, so that the layout has one home.
func statsSize(pairs []statPair) int {
	var scratch [256]byte
	n := binary.PutUvarint(scratch[:], uint64(len(pairs)))
	prev := ""
	for _, pr := range pairs {
		n += len(appendStat(scratch[:0], prev, pr))
		prev = pr.p
	}
	return n
}

// appendStat appends the record of pr, whose path follows prev, to b:
// how many bytes the path shares with prev, the rest of the path, and
// the identity.
func appendStat(b []byte, prev string, pr statPair) []byte {
	p := pr.p
	n := 0
	for n < len(p) && n < len(prev) && p[n] == prev[n] {
		n++
	}
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(len(p)-n))
	b = append(b, p[n:]...)
	st := pr.st
	b = binary.AppendVarint(b, st.Size)
	b = binary.AppendVarint(b, st.Mtime)
	b = binary.AppendVarint(b, st.Ctime)
	b = binary.AppendUvarint(b, st.Ino)
	b = binary.AppendUvarint(b, st.Dev)
	return binary.AppendUvarint(b, uint64(st.Mode))
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
	d := statsDecoder{b: b[len(indexMagic):]}
	taken := d.varint()
	if d.bad {
		return errIndex
	}
	files, order, orderStats, err := d.stats("file")
	if err != nil {
		return err
	}
	dirs, _, _, err := d.stats("folder")
	if err != nil {
		return err
	}
	sums, err := d.sums(order)
	if err != nil {
		return err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%w: trailing bytes", errIndex)
	}
	ix.Taken, ix.Files, ix.Dirs, ix.order, ix.orderStats, ix.Sums = taken, files, dirs, order, orderStats, sums
	return nil
}

// statsDecoder reads an encoded Index.
type statsDecoder struct {
	b   []byte
	bad bool
}

func (d *statsDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *statsDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// stats reads what appendStats wrote, and returns the paths and their
// identities in order too; what names the records (errors).
func (d *statsDecoder) stats(what string) (map[string]FileStat, []string, []FileStat, error) {
	count := d.uvarint()
	// Each record takes at least 8 bytes: a count beyond that is a lie.
	if d.bad || count > uint64(len(d.b)/8) {
		return nil, nil, nil, fmt.Errorf("%w: %d %ss in %d bytes", errIndex, count, what, len(d.b))
	}
	// The paths go into one arena, a strings.Builder sized once: no
	// allocation per path, and its String is the paths without a copy
	// (what was written is never changed; a growth copies what follows).
	// A path shares a prefix with the one before: bound each path and
	// all of them, so that a small record cannot ask for a huge arena.
	const maxPath = 4096
	limit := 8*len(d.b) + 1<<16
	var arena strings.Builder
	arena.Grow(min(pathBytes(*d, count, maxPath), limit))
	ends := make([]int, 0, count)
	stats := make([]FileStat, 0, count)
	start := 0
	for i := uint64(0); i < count; i++ {
		shared, suffix, st, mode := d.record()
		n := uint64(len(suffix))
		if d.bad || shared > uint64(arena.Len()-start) || shared+n > maxPath || arena.Len()+int(shared+n) > limit {
			return nil, nil, nil, fmt.Errorf("%w: %s %d", errIndex, what, i)
		}
		next := arena.Len()
		arena.WriteString(arena.String()[start : start+int(shared)])
		arena.Write(suffix)
		if all := arena.String(); next == len(all) || i > 0 && all[next:] <= all[start:next] {
			return nil, nil, nil, fmt.Errorf("%w: %s %d out of order", errIndex, what, i)
		}
		start = next
		if mode > 1<<32-1 || st.Size < 0 {
			return nil, nil, nil, fmt.Errorf("%w: %s %d", errIndex, what, i)
		}
		st.Mode = uint32(mode)
		ends = append(ends, arena.Len())
		stats = append(stats, st)
	}
	paths := arena.String()
	m := make(map[string]FileStat, count)
	order := make([]string, len(ends))
	from := 0
	for i, end := range ends {
		order[i] = paths[from:end]
		m[order[i]] = stats[i]
		from = end
	}
	return m, order, stats, nil
}

// record reads one record of appendStats: how many bytes its path shares
// with the one before, the rest of the path, its identity and its mode
// (not checked); d.bad when it does not decode.
func (d *statsDecoder) record() (shared uint64, suffix []byte, st FileStat, mode uint64) {
	shared, n := d.uvarint(), d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return 0, nil, FileStat{}, 0
	}
	suffix, d.b = d.b[:n], d.b[n:]
	st = FileStat{Size: d.varint(), Mtime: d.varint(), Ctime: d.varint(), Ino: d.uvarint(), Dev: d.uvarint()}
	return shared, suffix, st, d.uvarint()
}

// pathBytes is the length of the count paths d's records hold, read
// ahead on a copy of d, so that stats makes its arena at that size (at
// 45,000 files, 2.3 MB where twice the encoding was 6 MB); it stops at
// the first record stats would refuse, which then reports it.
func pathBytes(d statsDecoder, count uint64, maxPath uint64) int {
	total := 0
	for i := uint64(0); i < count; i++ {
		shared, suffix, _, _ := d.record()
		if d.bad || shared+uint64(len(suffix)) > maxPath {
			break
		}
		total += int(shared) + len(suffix)
	}
	return total
}

// count is how many files ix records (0 for none).
func (ix *Index) count() int {
	if ix == nil {
		return 0
	}
	return len(ix.Files)
}
