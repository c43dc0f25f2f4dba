package render

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// releaseGenerator renders "example.com/Release" specs: two ConfigMaps
// (the second named spec.second), with a Release that counts its calls
// and the children it found still holding their maps.
type releaseGenerator struct{ released, unreleasedMaps *atomic.Int64 }

func (g releaseGenerator) Generate(_ context.Context, spec *manifest.Object, _ generators.Options) (generators.Result, error) {
	s, _ := spec.Map["spec"].(map[string]any)
	second, _ := s["second"].(string)
	var objs []*manifest.Object
	for _, name := range []string{spec.Name(), second} {
		objs = append(objs, manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "ns"}, "data": map[string]any{"k": "v"}}))
	}
	return generators.Result{Objects: objs, Release: func() {
		g.released.Add(1)
		for _, o := range objs {
			if o.Map != nil {
				g.unreleasedMaps.Add(1)
			}
		}
	}}, nil
}

// TestRelease: the render releases a generator's result (Result.Release)
// once every child is encoded and its map dropped, only when it keeps no
// objects (DiscardObjects), shares no result (a Memo) and the spec's
// children had no error.
func TestRelease(t *testing.T) {
	spec := func(name, second string) string {
		return fmt.Sprintf("apiVersion: example.com/v1\nkind: Release\nmetadata: {name: %s, namespace: ns}\nspec: {second: %q}\n", name, second)
	}
	fine := spec("a", "a-2") + "---\n" + spec("b", "b-2") + "---\n" + spec("c", "c-2")
	for _, tc := range []struct {
		name    string
		in      string
		opts    Options
		renders int
		want    int64
		fails   bool
	}{
		{name: "objects dropped", in: fine, opts: Options{DiscardObjects: true}, renders: 1, want: 3},
		{name: "objects kept", in: fine, opts: Options{}, renders: 1, want: 0},
		{name: "a Memo shares the results", in: fine, opts: Options{DiscardObjects: true, Reuse: NewMemo()}, renders: 2, want: 0},
		{name: "a child's error", in: spec("a", "a-2") + "---\n" + spec("b", "Not_A_Name"), opts: Options{DiscardObjects: true}, renders: 1, want: 1, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var released, unreleased atomic.Int64
			opts := tc.opts
			opts.Generators = generators.Registry{"example.com/Release": releaseGenerator{released: &released, unreleasedMaps: &unreleased}}
			opts.Engines, opts.Root = engines.Dialects(), t.TempDir()
			for range tc.renders {
				objs, err := manifest.Decode("specs.yaml", []byte(tc.in))
				if err != nil {
					t.Fatal(err)
				}
				_, err = Render(context.Background(), objs, opts)
				if (err != nil) != tc.fails {
					t.Fatalf("error %v, want one: %v", err, tc.fails)
				}
			}
			if got := released.Load(); got != tc.want {
				t.Errorf("released %d results, want %d", got, tc.want)
			}
			if n := unreleased.Load(); n != 0 {
				t.Errorf("%d children still held their maps when released", n)
			}
		})
	}
}
