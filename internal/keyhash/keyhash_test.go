package keyhash

import (
	"crypto/sha256"
	"testing"
)

// TestFieldsDoNotRun: fields that concatenate to the same bytes hash
// apart ("ab","c" against "a","bc"); the same fields hash the same (the
// control).
func TestFieldsDoNotRun(t *testing.T) {
	sum := func(fields ...string) [32]byte {
		h := sha256.New()
		for _, f := range fields {
			Field(h, f)
		}
		var s [32]byte
		h.Sum(s[:0])
		return s
	}
	if sum("ab", "c") == sum("a", "bc") {
		t.Error(`"ab","c" and "a","bc" hash the same`)
	}
	first, again := sum("a", "bc"), sum("a", "bc")
	if first != again {
		t.Error("the same fields hash apart")
	}
	if BuildInfo() == "" {
		t.Error("no build info")
	}
}
