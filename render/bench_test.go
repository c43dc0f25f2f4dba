package render

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/manifest"
)

// benchInput returns N Kaoto specs as one YAML stream, every second one
// exposed: the work of make bench.
func benchInput(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: kaoto-%05d\n  namespace: team-%02d\nspec:\n  image: quay.io/kaotoio/kaoto-app:2.4.0\n", i, i%50)
		if i%2 == 0 {
			fmt.Fprintf(&b, "  ingress:\n    host: kaoto-%05d.example.com\n    path: /designer\n", i)
		}
	}
	return b.Bytes()
}

// BenchmarkRender measures decoding, rendering and encoding N specs, to a
// stream and to a tree written on disk.
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		in := benchInput(n)
		b.Run(fmt.Sprintf("N=%d/stream", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				_ = decodeAndRender(b, in).Stream()
			}
		})
		// A re-render whose specs all come from the records of the last
		// (Options.Outputs), as `render -o` after an edit renders all
		// but the edited one: decoding, checks, plan, reuse, the tree.
		b.Run(fmt.Sprintf("N=%d/reused", n), func(b *testing.B) {
			first := NewOutputs(nil)
			decodeAndRenderWith(b, in, first)
			recs := first.Records()
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				o := NewOutputs(recs)
				_ = decodeAndRenderWith(b, in, o).Tree()
				if h, _ := o.Stats(); h != n {
					b.Fatalf("%d specs reused, want %d", h, n)
				}
			}
		})
		b.Run(fmt.Sprintf("N=%d/tree", n), func(b *testing.B) {
			b.ReportAllocs()
			// Under out/ (git-ignored), not the system temp folder, whose
			// file creation is slow on some machines.
			base, err := os.MkdirTemp(filepath.Join("..", "out"), "bench-")
			if err != nil {
				if err := os.MkdirAll(filepath.Join("..", "out"), 0o755); err != nil {
					b.Fatal(err)
				}
				if base, err = os.MkdirTemp(filepath.Join("..", "out"), "bench-"); err != nil {
					b.Fatal(err)
				}
			}
			defer os.RemoveAll(base)
			dir := filepath.Join(base, "tree")
			for b.Loop() {
				if err := outtree.Write(dir, decodeAndRender(b, in).Tree()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func decodeAndRender(b *testing.B, in []byte) *Result {
	return decodeAndRenderWith(b, in, nil)
}

// decodeAndRenderWith renders with outputs (nil: none).
func decodeAndRenderWith(b *testing.B, in []byte, outputs *Outputs) *Result {
	objs, err := manifest.Decode("bench.yaml", in)
	if err != nil {
		b.Fatal(err)
	}
	res, err := Render(context.Background(), objs, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), DiscardObjects: true, Outputs: outputs})
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkTreeLayout measures laying out the files of a rendered tree
// (Result.Tree: paths and kustomization.yaml files) for 10,000 specs.
func BenchmarkTreeLayout(b *testing.B) {
	res := decodeAndRender(b, benchInput(10000))
	b.ReportAllocs()
	for b.Loop() {
		_ = res.Tree()
	}
}
