// Package testobj loads test fixtures as manifest objects.
package testobj

import (
	"os"
	"testing"

	"github.com/wavesmith/wavesmith/manifest"
)

// Load reads a file holding exactly one object, failing t otherwise.
func Load(t testing.TB, file string) *manifest.Object {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Decode(file, b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v (%d objects)", file, err, len(objs))
	}
	return objs[0]
}
