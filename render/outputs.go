package render

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/internal/keyhash"
	"github.com/wavesmith/wavesmith/manifest"
)

// Outputs keeps what rendering each spec gave, by a digest of everything
// that decides it, across renders and processes (Options.Outputs): a spec
// whose digest is among the records of an earlier render is neither
// generated, decorated nor encoded again; its children are taken, encoded
// and resolved, from the record. The CLI keeps the records of the last
// render of each tree in the tree cache, so that a render after one spec
// changed renders that spec only.
//
// The digest of a spec's output is the Memo's (reuse.go: the spec's
// canonical bytes and source, the path and bytes of everything it reads,
// the files every spec may read, every generator option, the scope table,
// the binary's build) with what decorating its children depends on: the
// render's defaults, part-of, engines and dialects, and where the wave
// plan puts the spec (its base wave and the wave its dependencies end in).
// So a reused output is the output a full render gives. Everything the
// render checks across specs (duplicates, Namespace and CRD waves,
// inventories, order) still runs over every item; errors are never kept.
//
// Records are hostile input (they come from a cache on disk): one that
// does not decode whole is a miss. Outputs take effect with
// Options.DiscardObjects only (a reused child has no map).
type Outputs struct {
	files []string
	prev  map[[sha256.Size]byte][]byte
	mu    sync.Mutex
	used  map[[sha256.Size]byte][][]byte // a record's parts
	// byKey holds the pieces of each record taken or kept; pieces
	// indexes them by their first byte, made by the first Piece after a
	// record was added (nil until then), not while the specs render on
	// every core, and read without the lock once made.
	pieces       atomic.Pointer[pieceIndex]
	byKey        map[[sha256.Size]byte][][]byte
	hits, misses atomic.Int64
}

// Piece names one object's bytes inside a record: the record's key and
// the piece's index among RecordPieces' (the children in order, then the
// spec), with its size. A cache of the tree's files stores a file that is
// a piece as its Piece, the bytes being in the records already.
type Piece struct {
	Key   [sha256.Size]byte
	Index int
	Size  int
}

// Piece tells whether b is the bytes of an object this render took from
// or kept in a record (as Result.Tree's files are, slice for slice), and
// which. The same bytes elsewhere are not a piece.
func (o *Outputs) Piece(b []byte) (Piece, bool) {
	if o == nil || len(b) == 0 {
		return Piece{}, false
	}
	ix := o.pieces.Load()
	if ix == nil {
		ix = o.indexPieces()
	}
	at, ok := ix.at[&b[0]]
	if !ok {
		return Piece{}, false
	}
	r, i := at>>32, int(uint32(at))
	p := Piece{Key: ix.keys[r], Index: i, Size: len(ix.pieces[r][i])}
	return p, p.Size == len(b)
}

// pieceIndex finds a piece by its first byte: at holds the record's
// place in keys and pieces (the high 32 bits) and the piece's index in
// it (the low 32), 16 bytes a piece where a Piece would take 56.
type pieceIndex struct {
	at     map[*byte]uint64
	keys   [][sha256.Size]byte
	pieces [][][]byte
}

// indexPieces makes the index of the pieces, unless another call made it
// meanwhile.
func (o *Outputs) indexPieces() *pieceIndex {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ix := o.pieces.Load(); ix != nil {
		return ix
	}
	n := 0
	for _, ps := range o.byKey {
		n += len(ps)
	}
	ix := &pieceIndex{at: make(map[*byte]uint64, n), keys: make([][sha256.Size]byte, 0, len(o.byKey)), pieces: make([][][]byte, 0, len(o.byKey))}
	for k, ps := range o.byKey {
		r := uint64(len(ix.keys)) << 32
		ix.keys, ix.pieces = append(ix.keys, k), append(ix.pieces, ps)
		for i, b := range ps {
			if len(b) > 0 {
				ix.at[&b[0]] = r | uint64(uint32(i))
			}
		}
	}
	o.pieces.Store(ix)
	return ix
}

// Pieces returns the pieces of the record under k that this render took
// or kept (RecordPieces, without decoding it again).
func (o *Outputs) Pieces(k [sha256.Size]byte) ([][]byte, bool) {
	if o == nil {
		return nil, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	p, ok := o.byKey[k]
	return p, ok
}

// addPieces notes the pieces of the record kept under k (o.mu held).
func (o *Outputs) addPieces(k [sha256.Size]byte, pieces [][]byte) {
	if o.byKey == nil {
		// Sized for the records before, so that the map seldom grows.
		o.byKey = make(map[[sha256.Size]byte][][]byte, len(o.prev))
	}
	o.byKey[k] = pieces
	o.pieces.Store(nil) // made again when next asked
}

// RecordPieces returns the bytes of the objects a record holds: its
// children's in order, then its spec's (Piece.Index); an error when the
// record does not decode whole.
func RecordPieces(b []byte) ([][]byte, error) {
	return scanPieces(b)
}

// scanPieces reads a record as decodeOutput does, field for field, and
// keeps only its pieces: nothing else is allocated (FuzzDecodeOutput
// holds the two to the same answer).
func scanPieces(b []byte) ([][]byte, error) {
	r := &recordReader{b: b}
	skip := func(n int) {
		for ; n > 0 && r.err == nil; n-- {
			r.bytes()
		}
	}
	ref := func() bool {
		present := r.bool()
		if present {
			skip(4)
		}
		return present
	}
	warnings := func() {
		for n := r.count(); n > 0 && r.err == nil; n-- {
			skip(4)
			ref()
		}
	}
	r.int() // wave
	skip(2 * r.count())
	warnings()
	n := r.count()
	pieces := make([][]byte, 0, n+1)
	for ; n > 0 && r.err == nil; n-- {
		pieces = append(pieces, r.bytes())
		skip(4) // the key
		if !ref() {
			r.err = errRecord
		}
		skip(1) // the source's file
		r.int()
		r.int()
		skip(1)       // defines
		for range 3 { // wave, apply and delete order
			r.int()
		}
		if r.bool() {
			r.int()
		}
		skip(6)
	}
	if m := r.count(); r.err == nil && m != len(pieces) {
		r.err = errRecord
	}
	var small [64]bool
	var seen []bool
	if m := len(pieces); m > len(small) {
		seen = make([]bool, m)
	} else {
		seen = small[:m]
	}
	for range pieces {
		j := r.int()
		if r.err != nil || j < 0 || j >= len(seen) || seen[j] {
			r.err = errRecord
			break
		}
		seen[j] = true
	}
	if d := r.bytes(); r.err == nil && len(d) != sha256.Size {
		r.err = errRecord
	}
	r.bytes()  // inventory
	warnings() // the spec's own
	spec := r.bytes()
	if r.err == nil && (len(spec) == 0 || len(r.b) != 0) {
		r.err = errRecord
	}
	if r.err != nil {
		return nil, r.err
	}
	return append(pieces, spec), nil
}

func outputPieces(out *specOutput) [][]byte {
	pieces := make([][]byte, 0, len(out.children)+1)
	for _, c := range out.children {
		pieces = append(pieces, c.YAML)
	}
	return append(pieces, out.specYAML)
}

// NewOutputs returns Outputs holding prev, the records of an earlier render
// (Records). files are paths relative to a render's root that generators
// read for any spec (as NewMemo's).
func NewOutputs(prev map[[sha256.Size]byte][]byte, files ...string) *Outputs {
	return &Outputs{files: slices.Clone(files), prev: prev, used: map[[sha256.Size]byte][][]byte{}}
}

// Records returns the records of the specs this render rendered or
// reused: what the next render passes to NewOutputs. Records of specs this
// render did not have are dropped, so they do not pile up.
func (o *Outputs) Records() map[[sha256.Size]byte][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	recs := make(map[[sha256.Size]byte][]byte, len(o.used))
	for k, parts := range o.used {
		recs[k] = slices.Concat(parts...)
	}
	return recs
}

// RecordParts is Records with each record in parts, to be written one
// after the other (the parts of a record rendered are its objects'
// bytes: copying them into one slice would double them).
func (o *Outputs) RecordParts() map[[sha256.Size]byte][][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.used)
}

// Stats returns how many specs were taken from the records (hits) and
// rendered with their record kept (misses) so far.
func (o *Outputs) Stats() (hits, misses int) {
	return int(o.hits.Load()), int(o.misses.Load())
}

// staleOutputKeyForTest leaves the wave plan out of the output digest: the
// control of the tests that compare reused and full renders.
var staleOutputKeyForTest bool

// decorationKey digests the options decorating a child depends on,
// beyond what the Memo's common digest holds.
func decorationKey(opts *Options) [sha256.Size]byte {
	h := sha256.New()
	keyhash.Field(h, "wavesmith outputs v3")
	keys := slices.Sorted(maps.Keys(opts.Defaults))
	keyhash.Count(h, len(keys))
	for _, k := range keys {
		keyhash.Field(h, k)
		keyhash.Field(h, opts.Defaults[k])
	}
	keyhash.Field(h, opts.PartOf)
	keyhash.Field(h, opts.Namespace)
	keyhash.Field(h, fmt.Sprint(opts.KeepInputs))
	for _, ds := range [][]gitops.Dialect{opts.Engines, opts.Dialects} {
		keyhash.Count(h, len(ds))
		for _, d := range ds {
			keyhash.Field(h, fmt.Sprintf("%T %s %+v", d, d.Name(), d))
		}
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// outputKey is the digest of everything that decides spec i's output,
// given the Memo digest of its generation.
func (r *reuse) outputKey(gen [sha256.Size]byte, plan *wavePlan, i int) [sha256.Size]byte {
	h := sha256.New()
	h.Write(r.decoration[:])
	h.Write(gen[:])
	if !staleOutputKeyForTest {
		need, ok := plan.after(i)
		// fmt.Sprint(base, need, ok)'s bytes, without its allocations.
		var b [48]byte
		f := strconv.AppendInt(b[:0], int64(plan.base(i)), 10)
		f = strconv.AppendInt(append(f, ' '), int64(need), 10)
		keyhash.Bytes(h, strconv.AppendBool(append(f, ' '), ok))
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// lookup returns the spec's output kept under k, its children made items
// of spec.
func (o *Outputs) lookup(k [sha256.Size]byte, spec *Item) (specOutput, int, bool) {
	b, ok := o.prev[k]
	if !ok {
		return specOutput{}, 0, false
	}
	out, wave, err := decodeOutput(b, spec)
	if err != nil {
		return specOutput{}, 0, false
	}
	o.mu.Lock()
	o.used[k] = [][]byte{b}
	o.addPieces(k, outputPieces(&out))
	o.mu.Unlock()
	o.hits.Add(1)
	return out, wave, true
}

// keep records a spec's output rendered without errors, once the spec
// is encoded (writeInventories): the head made when it was generated, a
// tail, and the spec's bytes, which stay where they are.
func (o *Outputs) keep(k [sha256.Size]byte, out *specOutput) {
	tail := encodeTail(out)
	o.mu.Lock()
	o.used[k] = [][]byte{out.head, tail, out.specYAML}
	o.addPieces(k, outputPieces(out))
	o.mu.Unlock()
	o.misses.Add(1)
}

// The record of one spec's output, in two parts. The head, made when the
// spec is generated: its placed wave, the labels it gives its spec, its
// warnings, each child's encoded bytes, identity, source, the type it
// defines (CRDs) and resolved lifecycle, as generated. The tail, made
// once the spec is encoded: its children's places in output order, its
// render digest, inventory, the warnings writing its own labels and
// annotations gave (a spec taken from a record is not written again) and
// its bytes.

type recordWriter struct {
	b    []byte
	offs []int // where each piece starts (piece)
}

// recordWriters are reused: a record is encoded in a writer's buffer,
// then copied once into one of its size.
var recordWriters = sync.Pool{New: func() any { return new(recordWriter) }}

// piece writes an object's bytes and notes where they start.
func (w *recordWriter) piece(s []byte) {
	w.int(len(s))
	w.offs = append(w.offs, len(w.b))
	w.b = append(w.b, s...)
}

func (w *recordWriter) int(v int)      { w.b = binary.AppendVarint(w.b, int64(v)) }
func (w *recordWriter) str(s string)   { w.int(len(s)); w.b = append(w.b, s...) }
func (w *recordWriter) bytes(s []byte) { w.int(len(s)); w.b = append(w.b, s...) }
func (w *recordWriter) bool(v bool) {
	var b byte
	if v {
		b = 1
	}
	w.b = append(w.b, b)
}
func (w *recordWriter) warnings(ws []manifest.Warning) {
	w.int(len(ws))
	for _, x := range ws {
		w.str(x.File)
		w.str(x.Object)
		w.str(x.Field)
		w.str(x.Message)
		w.ref(x.Ref)
	}
}

func (w *recordWriter) ref(r *manifest.Ref) {
	w.bool(r != nil)
	if r != nil {
		w.str(r.APIVersion)
		w.str(r.Kind)
		w.str(r.Namespace)
		w.str(r.Name)
	}
}

// encodeHead returns the head of out's record and its children's bytes
// in it.
func encodeHead(out *specOutput, wave int) ([]byte, [][]byte) {
	w := recordWriters.Get().(*recordWriter)
	w.b, w.offs = w.b[:0], w.offs[:0]
	defer recordWriters.Put(w)
	w.int(wave)
	labels := slices.Sorted(maps.Keys(out.specLabels))
	w.int(len(labels))
	for _, k := range labels {
		w.str(k)
		w.str(out.specLabels[k])
	}
	w.warnings(out.warnings)
	w.int(len(out.children))
	for _, it := range out.children {
		w.piece(it.YAML)
		w.str(it.Key.Group)
		w.str(it.Key.Kind)
		w.str(it.Key.Namespace)
		w.str(it.Key.Name)
		w.ref(it.Ref)
		w.str(it.Object.Source.File)
		w.int(it.Object.Source.Index)
		w.int(it.Object.Source.Line)
		w.str(it.defines)
		lc := it.lc.Lifecycle
		w.int(it.Wave)
		w.int(lc.ApplyOrder)
		w.int(lc.DeleteOrder)
		w.bool(lc.PurgeOrder != nil)
		if lc.PurgeOrder != nil {
			w.int(*lc.PurgeOrder)
		}
		for _, s := range []string{lc.Adoption, lc.Reconcile, lc.Update, lc.Delete, lc.StatusHint, lc.Hook} {
			w.str(s)
		}
	}
	b := append([]byte(nil), w.b...)
	pieces := make([][]byte, len(w.offs))
	for i, off := range w.offs {
		n := len(out.children[i].YAML)
		pieces[i] = b[off : off+n : off+n]
	}
	return b, pieces
}

// encodeTail returns the tail of out's record, up to its spec's bytes
// (the last part, written after it).
func encodeTail(out *specOutput) []byte {
	w := &recordWriter{}
	w.int(len(out.order))
	for _, j := range out.order {
		w.int(j)
	}
	w.bytes(out.digest[:])
	w.str(out.inventory)
	w.warnings(out.specWarnings)
	w.int(len(out.specYAML))
	return w.b
}

// encodeOutput is the whole record of out (tests).
func encodeOutput(out *specOutput, wave int) []byte {
	head, _ := encodeHead(out, wave)
	return slices.Concat(head, encodeTail(out), out.specYAML)
}

var errRecord = errors.New("truncated or corrupt output record")

type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) int() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 || v != int64(int(v)) {
		r.err = errRecord
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// count reads a length of at most what remains (each element takes a
// byte at least).
func (r *recordReader) count() int {
	n := r.int()
	if n < 0 || n > len(r.b) {
		r.err = errRecord
		return 0
	}
	return n
}

func (r *recordReader) bytes() []byte {
	n := r.count()
	if r.err != nil {
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *recordReader) str() string { return intern(r.bytes()) }

// internTable holds short strings decoded from records lately, one per
// slot: a record's kinds, groups, API versions, namespaces, files and
// names mostly repeat what the render already decoded (one spec's
// children share most of theirs), so the table spares most of their
// allocations. Slots are replaced at will: any slot's string is a string.
var (
	internTable [1 << 12]atomic.Pointer[string]
	internSeed  = maphash.MakeSeed()
)

// intern returns b as a string, the table's when it holds it.
func intern(b []byte) string {
	if len(b) == 0 || len(b) > 64 {
		return string(b)
	}
	slot := &internTable[maphash.Bytes(internSeed, b)&(uint64(len(internTable))-1)]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}

func (r *recordReader) bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.b) == 0 || r.b[0] > 1 {
		r.err = errRecord
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

func (r *recordReader) warnings() []manifest.Warning {
	var ws []manifest.Warning
	for n := r.count(); n > 0 && r.err == nil; n-- {
		ws = append(ws, manifest.Warning{File: r.str(), Object: r.str(), Field: r.str(), Message: r.str(), Ref: r.ref()})
	}
	return ws
}

func (r *recordReader) ref() *manifest.Ref {
	if !r.bool() {
		return nil
	}
	return &manifest.Ref{APIVersion: r.str(), Kind: r.str(), Namespace: r.str(), Name: r.str()}
}

// decodedChild is what a child decoded from a record takes.
type decodedChild struct {
	item   Item
	object manifest.Object
	ref    manifest.Ref
}

// decodeOutput reads a record into the output of spec, or fails.
func decodeOutput(b []byte, spec *Item) (specOutput, int, error) {
	r := &recordReader{b: b}
	var out specOutput
	wave := r.int()
	if n := r.count(); n > 0 {
		out.specLabels = make(map[string]string, n)
		for ; n > 0 && r.err == nil; n-- {
			k := r.str()
			out.specLabels[k] = r.str()
		}
	}
	out.warnings = r.warnings()
	n := r.count()
	out.children = make([]*Item, 0, n)
	owner := spec.Object.Name()
	// A child's item, object and reference are allocated together, in
	// blocks of a few (never more than the record can hold).
	var block []decodedChild
	for ; n > 0 && r.err == nil; n-- {
		if len(block) == 0 {
			block = make([]decodedChild, min(n, 16))
		}
		d := &block[0]
		block = block[1:]
		it := &d.item
		*it = Item{Role: Child, Spec: spec.Spec, YAML: r.bytes(), owner: owner}
		it.Key = manifest.Key{Group: r.str(), Kind: r.str(), Namespace: r.str(), Name: r.str()}
		if r.bool() {
			d.ref = manifest.Ref{APIVersion: r.str(), Kind: r.str(), Namespace: r.str(), Name: r.str()}
			it.Ref = &d.ref
		}
		d.object = manifest.Object{Source: manifest.Source{File: r.str(), Index: r.int(), Line: r.int()}}
		it.Object = &d.object
		it.defines = r.str()
		it.Wave = r.int()
		lc := gitops.Lifecycle{ApplyOrder: r.int(), DeleteOrder: r.int()}
		if r.bool() {
			p := r.int()
			lc.PurgeOrder = &p
		}
		lc.Adoption, lc.Reconcile, lc.Update, lc.Delete, lc.StatusHint, lc.Hook = r.str(), r.str(), r.str(), r.str(), r.str(), r.str()
		it.lc = lifecycle{lc}
		it.rank = kindRank(it.Key.Kind)
		it.idx = len(out.children)
		if it.Ref == nil {
			r.err = errRecord
		}
		out.children = append(out.children, it)
	}
	// The order: a place of each child, each once.
	if n := r.count(); r.err == nil && n != len(out.children) {
		r.err = errRecord
	}
	var small [64]bool
	var seen []bool
	if n := len(out.children); n > len(small) {
		seen = make([]bool, n)
	} else {
		seen = small[:n]
	}
	out.order = make([]int, 0, len(out.children))
	for range out.children {
		j := r.int()
		if r.err != nil || j < 0 || j >= len(seen) || seen[j] {
			r.err = errRecord
			break
		}
		seen[j] = true
		out.order = append(out.order, j)
	}
	if d := r.bytes(); r.err == nil && len(d) != len(out.digest) {
		r.err = errRecord
	} else {
		copy(out.digest[:], d)
	}
	out.inventory = r.str()
	out.specWarnings = r.warnings()
	out.specYAML = r.bytes()
	if r.err == nil && len(out.specYAML) == 0 {
		r.err = errRecord
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errRecord
	}
	if r.err != nil {
		return specOutput{}, 0, r.err
	}
	return out, wave, nil
}
