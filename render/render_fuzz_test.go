package render

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/manifest"
)

// FuzzRender: whatever the engine accepts it renders deterministically
// (two renders of one input agree byte for byte, stream and tree), its
// stream decodes back to its objects, and its tree stays inside DIR:
// every path is local, and writing it creates nothing beside DIR.
//
// Inputs are decoded as a file in an empty repository root, so that a
// Component's sources resolve there and nothing outside is ever read.
func FuzzRender(f *testing.F) {
	for _, p := range []string{"../testdata/examples/*.yaml", "../testdata/examples/*.json"} {
		files, _ := filepath.Glob(p)
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(root, "in.yaml")
		render := func() (*Result, error) {
			objs, err := manifest.Decode(file, data)
			if err != nil {
				return nil, err
			}
			return Render(context.Background(), objs, Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: root})
		}
		res, err := render()
		if err != nil {
			return
		}
		again, err := render()
		if err != nil {
			t.Fatalf("the second render of an input the first accepted failed: %v", err)
		}
		stream := res.Stream()
		if !bytes.Equal(stream, again.Stream()) {
			t.Fatalf("two renders of one input differ:\n%s\n---- second:\n%s", stream, again.Stream())
		}
		files := res.Tree()
		if diff := cmp.Diff(files, again.Tree()); diff != "" {
			t.Fatalf("two trees of one input differ (-first +second):\n%s", diff)
		}
		back, err := manifest.Decode("stream.yaml", stream)
		if err != nil {
			t.Fatalf("the stream does not decode: %v\n%s", err, stream)
		}
		if len(back) != len(res.Items) {
			t.Fatalf("the stream decodes to %d objects, the render has %d:\n%s", len(back), len(res.Items), stream)
		}

		// Check every path before anything is written: a path that
		// escapes must not be tried on this machine.
		for p := range files {
			if !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p {
				t.Fatalf("tree path %q leaves DIR or is not clean", p)
			}
		}
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		if err := outtree.Write(dir, files); err != nil {
			t.Fatalf("writing the tree of an accepted render: %v", err)
		}
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "out" {
			t.Fatalf("writing the tree left %d entries beside DIR: %v", len(entries)-1, entries)
		}
		written, err := outtree.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(files, written); diff != "" {
			t.Fatalf("DIR is not the tree (-tree +DIR):\n%s", diff)
		}
	})
}
