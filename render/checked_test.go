package render

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// decodeCounter is a generator whose specs cost a decode: its Check
// decodes and returns the result; Generate decodes again unless the
// engine hands it what Check decoded.
type decodeCounter struct{ decodes *atomic.Int64 }

type decoded struct{ name, namespace string }

func (g decodeCounter) decode(spec *manifest.Object) *decoded {
	g.decodes.Add(1)
	return &decoded{name: spec.Name(), namespace: spec.Namespace()}
}

func (g decodeCounter) Check(spec *manifest.Object) (any, error) { return g.decode(spec), nil }

func (g decodeCounter) Generate(_ context.Context, spec *manifest.Object, opts generators.Options) (generators.Result, error) {
	d, ok := opts.Checked.(*decoded)
	if !ok {
		d = g.decode(spec)
	}
	if d.name != spec.Name() || d.namespace != spec.Namespace() {
		return generators.Result{}, errors.New("the checked value is another spec's, or was decoded before the namespace was set")
	}
	return generators.Result{Objects: []*manifest.Object{manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": d.name, "namespace": d.namespace}})}}, nil
}

// TestSpecDecodedOnce: the engine checks every spec before the wave plan
// (generators.Checker) and hands what Check decoded to Generate, so a
// render decodes each spec once; a spec without a namespace is checked
// with the render's default already set, as Generate sees it.
func TestSpecDecodedOnce(t *testing.T) {
	var decodes atomic.Int64
	reg := generators.Registry{"example.com/Count": decodeCounter{&decodes}}
	var specs []*manifest.Object
	for _, n := range []string{"a", "b", "c"} {
		specs = append(specs, manifest.New(map[string]any{"apiVersion": "example.com/v1", "kind": "Count", "metadata": map[string]any{"name": n}}))
	}
	res, err := Render(context.Background(), specs, Options{Engines: engines.Dialects(), Root: "..", Generators: reg, Namespace: "apps"})
	if err != nil {
		t.Fatal(err)
	}
	if got := decodes.Load(); got != 3 {
		t.Errorf("%d decodes of 3 specs, want one each", got)
	}
	if n := len(res.Items); n != 6 {
		t.Errorf("%d items, want 3 specs and their 3 ConfigMaps", n)
	}
	// The control: a caller that does not check first (Generate alone)
	// decodes in Generate.
	decodes.Store(0)
	if _, err := (decodeCounter{&decodes}).Generate(context.Background(), specs[0], generators.Options{}); err != nil {
		t.Fatal(err)
	}
	if decodes.Load() != 1 {
		t.Errorf("Generate without Checked decoded %d times, want 1", decodes.Load())
	}
}
