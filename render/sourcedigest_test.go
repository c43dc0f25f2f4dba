package render

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestSourceDigests: the digests of what specs read change when a file
// read, a file in a folder read, or a folder's listing changes, and not
// otherwise; SourceDigest of one path agrees with SourceDigests.
func TestSourceDigests(t *testing.T) {
	root := countRepo(t)
	var runs atomic.Int64
	opts := Options{Generators: generators.Registry{"example.com/Count": countGenerator{runs: &runs}}, Root: root}
	file := filepath.Join(root, "specs", "specs.yaml")
	objs, err := manifest.Decode(file, []byte(countSpecs))
	if err != nil {
		t.Fatal(err)
	}
	digests := func() map[string][32]byte {
		t.Helper()
		d, err := SourceDigests(objs, opts)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := digests()
	a, folder := filepath.Join(root, "specs", "files", "a.txt"), filepath.Join(root, "specs", "folder")
	if len(before) != 2 || before[a] == ([32]byte{}) || before[folder] == ([32]byte{}) {
		t.Fatalf("digests %v: want one for %s and one for %s", before, a, folder)
	}
	if d, err := SourceDigest(root, folder); err != nil || d != before[folder] {
		t.Errorf("SourceDigest(%s) = %x, %v; want %x", folder, d, err, before[folder])
	}
	if again := digests(); again[a] != before[a] || again[folder] != before[folder] {
		t.Error("unchanged sources hash differently")
	}
	for name, change := range map[string]func(){
		"a file read":               func() { writeFiles(t, root, map[string]string{"specs/files/a.txt": "a2"}) },
		"a file in a folder read":   func() { writeFiles(t, root, map[string]string{"specs/folder/sub/y.txt": "y2"}) },
		"a file added to a folder":  func() { writeFiles(t, root, map[string]string{"specs/folder/z.txt": ""}) },
		"a file removed from reads": func() { os.Remove(a) },
	} {
		prev := digests()
		change()
		now := digests()
		if now[a] == prev[a] && now[folder] == prev[folder] {
			t.Errorf("%s changed, the digests did not", name)
		}
	}
	// A source leaving the root cannot be hashed: no digest, an error.
	objs[0].Map["spec"] = map[string]any{"read": "../../outside"}
	if _, err := SourceDigests(objs, opts); err == nil {
		t.Error("a source outside the root was hashed")
	}
}
