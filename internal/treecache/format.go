package treecache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"

	"github.com/wavesmith/wavesmith/internal/outtree"
)

// A chunk file is its bytes and a check of them: the CRC-32C of its name's
// digest and its bytes (4 bytes, little-endian). Its name is the SHA-256
// of chunkTag and the bytes, taken once, when it is written: a read
// checks the CRC, twenty times cheaper than the digest over the tens of
// megabytes a big tree's records hold, and as sure to find a spoiled
// file, one cut short or one put in the place of another. (The cache
// folder is the user's, mode 0700: what guards it is the file system,
// not a digest anyone who can write there could make as well.)
const chunkTag = "wavesmith cache chunk v3\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// chunkSum is the digest that names a chunk of bytes b.
func chunkSum(b []byte) Sum {
	h := sha256.New()
	h.Write([]byte(chunkTag))
	h.Write(b)
	var s Sum
	h.Sum(s[:0])
	return s
}

// chunkCheck is the check a chunk file named by s ends with.
func chunkCheck(s Sum, b []byte) uint32 {
	return crc32.Update(crc32.Checksum(s[:], castagnoli), castagnoli, b)
}

// checkedChunk returns the bytes of the chunk file f named by s, or false
// when its check does not hold.
func checkedChunk(s Sum, f []byte) ([]byte, bool) {
	n := len(f) - 4
	if n < 0 || binary.LittleEndian.Uint32(f[n:]) != chunkCheck(s, f[:n]) {
		return nil, false
	}
	return f[:n:n], true
}

const (
	magic     = "wavesmith tree cache v3\n"
	chunkSize = 4 << 20 // bytes of files per chunk, well below fsroot.MaxFileSize
)

const treeMagic = "wavesmith tree cache tree v1\n"

// encodeTree is the record of ix for the entry whose index file has the
// digest idx: magic, idx, ix, and the SHA-256 of all that.
func encodeTree(ix *outtree.Index, idx Sum) ([]byte, error) {
	body, err := ix.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return treeRecord(body, idx), nil
}

// treeRecord is the record of an Index encoded as body.
func treeRecord(body []byte, idx Sum) []byte {
	b := make([]byte, 0, len(treeMagic)+2*sha256.Size+len(body))
	b = append(b, treeMagic...)
	b = append(b, idx[:]...)
	b = append(b, body...)
	s := sha256.Sum256(b)
	return append(b, s[:]...)
}

// decodeTree is the Index a record b holds when it is whole and of the
// entry whose index file has the digest idx; nil otherwise.
func decodeTree(b []byte, idx Sum) *outtree.Index {
	n := len(treeMagic) + sha256.Size
	if len(b) < n+sha256.Size || string(b[:len(treeMagic)]) != treeMagic {
		return nil
	}
	body, tail := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], tail) || !bytes.Equal(body[len(treeMagic):n], idx[:]) {
		return nil
	}
	ix := &outtree.Index{}
	if err := ix.UnmarshalBinary(body[n:]); err != nil {
		return nil
	}
	return ix
}

func putBytes(b *bytes.Buffer, s []byte) {
	var n [binary.MaxVarintLen64]byte
	b.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	b.Write(s)
}

func putString(b *bytes.Buffer, s string) {
	var n [binary.MaxVarintLen64]byte
	b.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	b.WriteString(s)
}

func putInt(b *bytes.Buffer, v int) {
	var n [binary.MaxVarintLen64]byte
	b.Write(n[:binary.PutUvarint(n[:], uint64(v))])
}

// reader reads what putBytes and putInt wrote, failing on anything short
// or too long.
type reader struct {
	b   []byte
	err error
}

func (r *reader) int() int {
	if r.err != nil {
		return 0
	}
	if len(r.b) > 0 && r.b[0] < 0x80 {
		v := r.b[0] // one byte: most lengths and kinds
		r.b = r.b[1:]
		return int(v)
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b))+1<<20 {
		r.err = errors.New("truncated or corrupt")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *reader) bytes() []byte {
	n := r.int()
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) sum() Sum {
	var s Sum
	b := r.bytes()
	if r.err == nil && len(b) != len(s) {
		r.err = errors.New("corrupt digest")
	}
	copy(s[:], b)
	return s
}

func encodeIndex(e *Entry, chunks []Sum) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	putBytes(&b, e.Key[:])
	sources := make([]string, 0, len(e.Sources))
	for p := range e.Sources {
		sources = append(sources, p)
	}
	sort.Strings(sources)
	putInt(&b, len(sources))
	for _, p := range sources {
		s := e.Sources[p]
		putBytes(&b, []byte(p))
		putBytes(&b, s[:])
	}
	putInt(&b, len(e.Previous))
	for _, op := range e.Previous {
		putBytes(&b, []byte(op.Kind))
		putBytes(&b, []byte(op.Name))
		putBytes(&b, op.Sum[:])
	}
	putInt(&b, len(e.Warnings))
	for _, w := range e.Warnings {
		putBytes(&b, []byte(w))
	}
	putInt(&b, e.Objects)
	putInt(&b, e.Specs)
	putInt(&b, len(chunks))
	for _, s := range chunks {
		putBytes(&b, s[:])
	}
	s := sha256.Sum256(b.Bytes())
	b.Write(s[:])
	return b.Bytes()
}

func decodeIndex(b []byte) (*Entry, []Sum, error) {
	if len(b) < len(magic)+sha256.Size || string(b[:len(magic)]) != magic {
		return nil, nil, errors.New("not an index of this format")
	}
	body, tail := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], tail) {
		return nil, nil, errors.New("its digest does not match: truncated or corrupt")
	}
	r := &reader{b: body[len(magic):]}
	e := &Entry{Key: r.sum(), Sources: map[string]Sum{}}
	for n := r.int(); n > 0 && r.err == nil; n-- {
		p := string(r.bytes())
		e.Sources[p] = r.sum()
	}
	for n := r.int(); n > 0 && r.err == nil; n-- {
		e.Previous = append(e.Previous, Op{Kind: string(r.bytes()), Name: string(r.bytes()), Sum: r.sum()})
	}
	for n := r.int(); n > 0 && r.err == nil; n-- {
		e.Warnings = append(e.Warnings, string(r.bytes()))
	}
	e.Objects, e.Specs = r.int(), r.int()
	var chunks []Sum
	for n := r.int(); n > 0 && r.err == nil; n-- {
		chunks = append(chunks, r.sum())
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	return e, chunks, r.err
}

// How a chunk holds a file: its bytes, or a Ref.
const (
	literalFile = 0
	refFile     = 1
)

// chunkCount is what countChunk finds in a chunk: its files, those held
// as references, the bytes of their paths, its first and last path.
type chunkCount struct {
	files, refs, pathBytes int
	first, last            []byte
}

// countChunk walks the chunk b as decodeChunk does, and fails where it
// would, but for references resolve cannot resolve; and where the paths
// are not in strict order, as a Put writes them (a path twice is not an
// entry's).
func countChunk(b []byte) (chunkCount, error) {
	var n chunkCount
	r := &reader{b: b}
	for len(r.b) > 0 && r.err == nil {
		p := r.bytes()
		switch kind := r.int(); {
		case r.err != nil:
		case n.files > 0 && bytes.Compare(p, n.last) <= 0:
			r.err = fmt.Errorf("%q after %q: the paths are not in order", p, n.last)
		case kind == literalFile:
			r.bytes()
		case kind == refFile:
			r.sum()
			r.int()
			r.int()
			n.refs++
		default:
			r.err = errors.New("corrupt file kind")
		}
		if n.files == 0 {
			n.first = p
		}
		n.last = p
		n.files++
		n.pathBytes += len(p)
	}
	if r.err == nil && n.files == 0 {
		r.err = errors.New("empty chunk")
	}
	return n, r.err
}

// decodeChunk adds the files of the chunk b, whose form countChunk
// checked and whose count it gave (n), to files, those held as
// references to refs (their bytes are added by resolveChunk); it returns
// their paths in order, cut from one string. Literal files' bytes are
// b's.
func decodeChunk(b []byte, n chunkCount, files map[string][]byte, refs map[string]Ref) []string {
	r := &reader{b: b}
	paths := make([]string, 0, n.files)
	var all strings.Builder
	all.Grow(n.pathBytes)
	for len(r.b) > 0 {
		// The paths are written one after the other in all, which never
		// changes the bytes of a string it returned.
		start := all.Len()
		all.Write(r.bytes())
		p := all.String()[start:]
		if r.int() == literalFile {
			files[p] = r.bytes()
		} else {
			refs[p] = Ref{Key: r.sum(), Index: r.int(), Size: r.int()}
		}
		paths = append(paths, p)
	}
	return paths
}

// resolveChunk adds the bytes of the files the chunk b holds as
// references to files, from resolve; paths are the chunk's
// (decodeChunk). A reference resolve cannot resolve, or to bytes of
// another size, is an error.
func resolveChunk(b []byte, paths []string, files map[string][]byte, resolve Resolve) error {
	r := &reader{b: b}
	for _, p := range paths {
		r.bytes()
		if r.int() == literalFile {
			r.bytes()
			continue
		}
		ref := Ref{Key: r.sum(), Index: r.int(), Size: r.int()}
		var f []byte
		ok := resolve != nil
		if ok {
			f, ok = resolve(ref)
		}
		if !ok || len(f) != ref.Size {
			return fmt.Errorf("%s: its bytes are not in the output records", p)
		}
		files[p] = f
	}
	return nil
}
