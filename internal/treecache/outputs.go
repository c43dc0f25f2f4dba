package treecache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// Outputs are the per-spec records of the last render of a tree
// (render.Outputs.Records), kept beside the tree's entry under the same
// slot but read whatever the key: each record is keyed by the digest of
// everything that decides the spec's output, so a render whose inputs
// changed still reuses the records of the specs that did not.
//
// On disk: an index (the slot's ".outs" file: a format line, the digests
// of the chunks, its own SHA-256) and chunks named by the SHA-256 of their
// content, each holding the records whose key starts with the same six
// bits, so that one changed spec rewrites at most two chunks.

const outputsMagic = "wavesmith outputs v2\n"

func (c *Cache) outputsIndex(slot string) string { return slot + ".outs" }
func (c *Cache) outputsChunk(slot string, s Sum) string {
	return slot + "-" + hex.EncodeToString(s[:]) + ".outchunk"
}

// GetOutputs returns the records kept for slot, verified; an error
// wrapping ErrMiss when there are none that are whole.
func (c *Cache) GetOutputs(slot string) (map[Sum][]byte, error) {
	r, err := fsroot.OpenRoot(c.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMiss, err)
	}
	defer r.Close()
	b, err := r.ReadFile(filepath.Join(c.dir, c.outputsIndex(slot)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMiss, err)
	}
	chunks, err := decodeOutputsIndex(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMiss, c.outputsIndex(slot), err)
	}
	// Each chunk is decoded on the core that read it; the map is then
	// made at its size.
	read := make([]outputsRead, len(chunks))
	vals := make([][][]byte, len(chunks))
	_, err = c.readChunks(r, chunks, func(s Sum) string { return c.outputsChunk(slot, s) }, func(i int, b []byte) error {
		var err error
		read[i].keys, vals[i], err = decodeOutputsChunk(b)
		read[i].sum = chunks[i]
		return err
	})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, ch := range read {
		n += len(ch.keys)
	}
	recs := make(map[Sum][]byte, n)
	for i, ch := range read {
		for j, k := range ch.keys {
			recs[k] = vals[i][j]
		}
	}
	if c.outs == nil {
		c.outs = map[string][]outputsRead{}
	}
	c.outs[slot] = read
	return recs, nil
}

// decodeOutputsChunk returns the keys of the records of the chunk b, in
// order, and the records.
func decodeOutputsChunk(b []byte) ([]Sum, [][]byte, error) {
	rd := &reader{b: b}
	var keys []Sum
	var recs [][]byte
	for len(rd.b) > 0 && rd.err == nil {
		keys = append(keys, rd.sum())
		recs = append(recs, rd.bytes())
	}
	if rd.err == nil && len(keys) == 0 {
		rd.err = errors.New("empty chunk")
	}
	return keys, recs, rd.err
}

// outputsRead is a chunk of records as read: its digest and the keys of
// its records, in order.
type outputsRead struct {
	sum  Sum
	keys []Sum
}

// PutOutputs keeps recs as the records of slot, replacing those before:
// chunks first (those already there are kept), then the index, then the
// other chunks of slot are removed. A record may come in parts, written
// one after the other (render.Outputs.RecordParts).
func (c *Cache) PutOutputs(slot string, recs map[Sum][][]byte) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	keys := make([]Sum, 0, len(recs))
	for k := range recs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Sum) int { return bytes.Compare(a[:], b[:]) })
	w := c.chunks(func(s Sum) string { return c.outputsChunk(slot, s) })
	// A chunk read by GetOutputs with the same keys holds the same
	// records: a key is the digest of everything that decides its record.
	byFirst := map[Sum]outputsRead{}
	for _, ch := range c.outs[slot] {
		byFirst[ch.keys[0]] = ch
	}
	end := func(group []Sum) error {
		if len(group) == 0 {
			return nil
		}
		if ch, ok := byFirst[group[0]]; ok && slices.Equal(ch.keys, group) && w.kept(ch.sum) {
			return nil
		}
		size := 0
		for _, k := range group {
			n := 0
			for _, part := range recs[k] {
				n += len(part)
			}
			if size += n + 64; size > fsroot.MaxFileSize {
				return fmt.Errorf("output record of %d bytes: too large to cache", n)
			}
			putBytes(&w.buf, k[:])
			putInt(&w.buf, n)
			for _, part := range recs[k] {
				w.buf.Write(part)
			}
		}
		return w.flush()
	}
	start := 0
	for i := range keys {
		if i > 0 && keys[i][0]>>2 != keys[i-1][0]>>2 {
			if err := end(keys[start:i]); err != nil {
				return err
			}
			start = i
		}
	}
	if err := end(keys[start:]); err != nil {
		return err
	}
	var idx bytes.Buffer
	idx.WriteString(outputsMagic)
	putInt(&idx, len(w.sums))
	for _, s := range w.sums {
		putBytes(&idx, s[:])
	}
	s := sha256.Sum256(idx.Bytes())
	idx.Write(s[:])
	if err := c.writeFile(c.outputsIndex(slot), idx.Bytes()); err != nil {
		return err
	}
	for n := range w.have {
		if strings.HasPrefix(n, slot+"-") && strings.HasSuffix(n, ".outchunk") && !w.keep[n] {
			_ = os.Remove(filepath.Join(c.dir, n))
		}
	}
	return nil
}

// listing names the regular files of the cache folder.
func (c *Cache) listing() map[string]bool {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return nil
	}
	have := make(map[string]bool, len(entries))
	for _, de := range entries {
		if de.Type().IsRegular() {
			have[de.Name()] = true
		}
	}
	return have
}

func decodeOutputsIndex(b []byte) ([]Sum, error) {
	if len(b) < len(outputsMagic)+sha256.Size || string(b[:len(outputsMagic)]) != outputsMagic {
		return nil, errors.New("not an index of this format")
	}
	body, tail := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], tail) {
		return nil, errors.New("its digest does not match: truncated or corrupt")
	}
	r := &reader{b: body[len(outputsMagic):]}
	var chunks []Sum
	for n := r.int(); n > 0 && r.err == nil; n-- {
		chunks = append(chunks, r.sum())
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	return chunks, r.err
}
