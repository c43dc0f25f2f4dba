// Package keyhash writes the fields of a cache key into a hash, each with
// its length, so that no two sequences of fields hash the same, and names
// the build of the running binary. The render's Memo (render.Memo) and
// the tree cache's key (cmd/wavesmith) both use it.
package keyhash

import (
	"encoding/binary"
	"hash"
	"runtime/debug"
	"sync"
)

// Field writes s with its length.
func Field(h hash.Hash, s string) {
	Count(h, len(s))
	h.Write([]byte(s))
}

// Bytes writes b with its length, as Field writes a string.
func Bytes(h hash.Hash, b []byte) {
	Count(h, len(b))
	h.Write(b)
}

// Count writes n as 8 bytes.
func Count(h hash.Hash, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

// BuildInfo is what the running binary was built from: Go's version, the
// main module's version and sum, every dependency's (replacements
// included) and the build settings (-ldflags, which stamp wavesmith's
// version, VCS revision and whether the tree was modified).
var BuildInfo = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "no build info"
	}
	return info.String()
})
