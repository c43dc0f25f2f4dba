package load

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// The ARCHITECTURE recipes, proved: a spec kind and a Component source
// that loading and the engine know only through the registry.

// toyKind is a spec kind (toy.example.com/Toy): it renders one ConfigMap
// named after the spec, and reads the folder spec.dir.
type toyKind struct{}

func (toyKind) Generate(_ context.Context, spec *manifest.Object, _ generators.Options) (generators.Result, error) {
	cm := manifest.New(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": spec.Name() + "-toy", "namespace": spec.Namespace()},
	})
	return generators.Result{Objects: []*manifest.Object{cm}}, nil
}

func (toyKind) Reads(spec *manifest.Object, _ string) []generators.Read {
	s, _ := spec.Map["spec"].(map[string]any)
	if d, ok := s["dir"].(string); ok {
		return []generators.Read{{Field: "spec.dir", Path: d}}
	}
	return nil
}

// toySource is a Component source (spec.source.toy) that reads the folder
// spec.source.toy.dir (not a path field: only its Reader tells).
type toySource struct{}

func (toySource) Generate(context.Context, *manifest.Object, generators.Options) (generators.Result, error) {
	return generators.Result{}, nil
}

func (toySource) Reads(spec *manifest.Object, _ string) []generators.Read {
	s, _ := spec.Map["spec"].(map[string]any)
	src, _ := s["source"].(map[string]any)
	toy, _ := src["toy"].(map[string]any)
	if d, ok := toy["dir"].(string); ok {
		return []generators.Read{{Field: "spec.source.toy.dir", Path: d}}
	}
	return nil
}

// toyRegistry is wavesmith's registry with the toy kind (step 3 of "a spec
// kind") and the toy source (step 3 of "a Component source").
func toyRegistry() generators.Registry {
	reg := builtin.Registry()
	reg["toy.example.com/Toy"] = toyKind{}
	c := reg[v1alpha1.Group+"/"+v1alpha1.ComponentKind].(component.Generator)
	sources := map[string]generators.Generator{"toy": toySource{}}
	for k, g := range c.Sources {
		sources[k] = g
	}
	reg[v1alpha1.Group+"/"+v1alpha1.ComponentKind] = component.Generator{Sources: sources}
	return reg
}

const (
	toySpec    = "apiVersion: toy.example.com/v1\nkind: Toy\nmetadata: {name: %s, namespace: demo}\nspec: {dir: %s}\n"
	configMap  = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: demo}\n"
	kustomized = "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: %s, namespace: demo}\nspec:\n  source: {%s: {path: %s}}\n"
)

func fill(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

// TestRecipeSpecKind: a spec of the toy kind is rendered by its
// generator; the folder it reads is its source, not loose objects.
func TestRecipeSpecKind(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "toy.yaml"), fill(toySpec, "t", "data"))
	writeFile(t, filepath.Join(root, "data/loose.yaml"), fill(configMap, "read-by-toy"))
	writeFile(t, filepath.Join(root, "cm.yaml"), fill(configMap, "plain"))
	reg := toyRegistry()
	objs, err := Inputs(context.Background(), root, reg, []string{root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.Render(context.Background(), objs, render.Options{Generators: reg, Engines: engines.Dialects(), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Items {
		got = append(got, it.Object.Kind()+"/"+it.Object.Name())
	}
	sort.Strings(got)
	want := []string{"ConfigMap/plain", "ConfigMap/t-toy", "Toy/t"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the toy spec rendered by its generator, its folder not loaded: -want +got:\n%s", diff)
	}
}

// TestRecipeNeverDropsToySpec: a spec of the toy kind inside the folder
// another spec reads (a kustomization, a chart, the toy source's folder)
// is an error naming both, never dropped.
func TestRecipeNeverDropsToySpec(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		text  []string
	}{
		"InKustomization": {
			files: map[string]string{
				"c.yaml":                 fill(kustomized, "c", "kustomization", "app"),
				"app/kustomization.yaml": "resources: []\n",
				"app/toy.yaml":           fill(toySpec, "hidden", "x"),
			},
			text: []string{"c.yaml", "Component.wavesmith.io/demo/c", "spec.source.kustomization.path", "Toy.toy.example.com/demo/hidden"},
		},
		"InChart": {
			files: map[string]string{
				"c.yaml":            fill(kustomized, "c", "chart", "chart"),
				"chart/Chart.yaml":  "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
				"chart/toy.yaml":    fill(toySpec, "hidden", "x"),
				"chart/values.yaml": "{}\n",
			},
			text: []string{"c.yaml", "Component.wavesmith.io/demo/c", "spec.source.chart.path", "Toy.toy.example.com/demo/hidden"},
		},
		"InToySource": {
			files: map[string]string{
				"c.yaml":       "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: c, namespace: demo}\nspec:\n  source: {toy: {dir: stuff}}\n",
				"stuff/t.yaml": fill(toySpec, "hidden", "x"),
			},
			text: []string{"c.yaml", "spec.source.toy.dir", "Toy.toy.example.com/demo/hidden"},
		},
		"InToyKindFolder": {
			files: map[string]string{
				"toy.yaml":         fill(toySpec, "t", "data"),
				"data/c.yaml":      fill(kustomized, "inner", "kustomization", "k"),
				"data/k/kust.yaml": fill(configMap, "x"),
			},
			text: []string{"toy.yaml", "Toy.toy.example.com/demo/t", "spec.dir", "Component.wavesmith.io/demo/inner"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for p, s := range tc.files {
				writeFile(t, filepath.Join(root, p), s)
			}
			_, err := Inputs(context.Background(), root, toyRegistry(), []string{root}, nil)
			if !errors.Is(err, generators.ErrSourceCoversSpec) {
				t.Fatalf("got %v, want generators.ErrSourceCoversSpec", err)
			}
			for _, s := range tc.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("the error lacks %q: %v", s, err)
				}
			}
		})
	}
}

// TestRecipeComponentSource: the files of the toy source's folder are the
// Component's sources, not loose objects, in Inputs and in WithoutSources
// (the KRM function).
func TestRecipeComponentSource(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "c.yaml"), "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: c, namespace: demo}\nspec:\n  source: {toy: {dir: stuff}}\n")
	writeFile(t, filepath.Join(root, "stuff/a.yaml"), fill(configMap, "read-by-source"))
	writeFile(t, filepath.Join(root, "cm.yaml"), fill(configMap, "plain"))
	reg := toyRegistry()
	objs, err := Inputs(context.Background(), root, reg, []string{root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.Name())
	}
	if diff := cmp.Diff([]string{"c", "plain"}, got); diff != "" {
		t.Errorf("Inputs: -want +got:\n%s", diff)
	}

	// Without the toy source registered, its folder is loose objects:
	// the registry alone decides.
	objs, err = Inputs(context.Background(), root, builtin.Registry(), []string{root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 {
		t.Errorf("without the toy source: %d objects, want 3", len(objs))
	}

	// WithoutSources drops the same objects from a list (the KRM
	// function's items).
	kept, err := WithoutSources(objs, reg, root)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, o := range kept {
		got = append(got, o.Name())
	}
	if diff := cmp.Diff([]string{"c", "plain"}, got); diff != "" {
		t.Errorf("WithoutSources: -want +got:\n%s", diff)
	}
}
