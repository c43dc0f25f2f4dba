package render

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/manifest"
)

func componentSpec(name string, wave *int64, deps ...string) *manifest.Object {
	s := map[string]any{"source": map[string]any{"kustomization": map[string]any{"path": "x"}}}
	if wave != nil {
		s["wave"] = *wave
	}
	var d []any
	for _, n := range deps {
		d = append(d, map[string]any{"name": n})
	}
	if d != nil {
		s["dependsOn"] = d
	}
	return manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component",
		"metadata": map[string]any{"name": name, "namespace": "ns"}, "spec": s})
}

func TestDependencyWaves(t *testing.T) {
	w := func(n int64) *int64 { return &n }
	cases := map[string]struct {
		reason   string
		specs    []*manifest.Object
		children map[string][]int // waves of the objects each spec renders
		want     map[string]int
		wantErr  string
	}{
		"Chain": {"each dependent lands one wave after the latest object of its dependencies",
			[]*manifest.Object{componentSpec("c", nil, "b", "a"), componentSpec("b", nil, "a"), componentSpec("a", w(3))},
			map[string][]int{"a": {3, 3}}, map[string]int{"b": 4, "c": 5}, ""},
		"Hooks": {"a dependency's post-install hook (wave 101) comes before the dependent",
			[]*manifest.Object{componentSpec("app", nil, "op"), componentSpec("op", nil)},
			map[string][]int{"op": {-106, 0, 101}}, map[string]int{"app": 102}, ""},
		"DefaultWave": {"a dependency rendered in the default wave 5 (--wave 5) puts its dependent in 6",
			[]*manifest.Object{componentSpec("app", nil, "op"), componentSpec("op", nil)},
			map[string][]int{"op": {5}}, map[string]int{"app": 6}, ""},
		"ExplicitOK": {"an explicit wave after the dependency is kept",
			[]*manifest.Object{componentSpec("a", nil), componentSpec("b", w(7), "a")}, map[string][]int{"a": {0}}, map[string]int{}, ""},
		"ExplicitTooEarly": {"an explicit wave not after the dependency is an error",
			[]*manifest.Object{componentSpec("a", w(2)), componentSpec("b", w(1), "a")}, map[string][]int{"a": {2}}, nil, "wave 1 is not after its dependencies (at least 3)"},
		"Cycle": {"a cycle is named",
			[]*manifest.Object{componentSpec("a", nil, "b"), componentSpec("b", nil, "c"), componentSpec("c", nil, "a")}, nil, nil,
			"cycle Component ns/a -> Component ns/b -> Component ns/c -> Component ns/a"},
		"Missing": {"a missing dependency is named",
			[]*manifest.Object{componentSpec("a", nil, "ghost")}, nil, nil, "Component ns/ghost not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var items []*Item
			for i, s := range tc.specs {
				items = append(items, &Item{Object: s, Role: Spec, Spec: i})
			}
			g, err := dependencyGraph(items)
			outs := make([]specOutput, len(items))
			got := map[string]int{}
			for _, level := range levelsOrNil(g, err) {
				for _, i := range level {
					w, ok, werr := g.wave(i, items, outs, 0)
					if werr != nil {
						err = werr
						continue
					}
					if ok {
						got[items[i].Object.Name()] = w
					}
					// What the spec renders: the configured waves, or one
					// object in the wave it was given.
					for _, cw := range tc.children[items[i].Object.Name()] {
						outs[i].children = append(outs[i].children, &Item{Wave: cw})
					}
					if ok && len(outs[i].children) == 0 {
						outs[i].children = []*Item{{Wave: w}}
					}
				}
			}
			if tc.wantErr != "" {
				if !errors.Is(err, ErrDependency) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: got %v, want ErrDependency with %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
	// Through Render: the cycle is reported before any generator runs.
	_, err := Render(context.Background(), []*manifest.Object{componentSpec("a", nil, "a")}, Options{})
	if !errors.Is(err, ErrDependency) {
		t.Errorf("Render: want ErrDependency, got %v", err)
	}
}

func TestManagedInstancesLast(t *testing.T) {
	children := func(spec *manifest.Object) []*manifest.Object {
		obj := func(av, kind, name string) *manifest.Object {
			return manifest.New(map[string]any{"apiVersion": av, "kind": kind, "metadata": map[string]any{"name": name, "namespace": "ns"}})
		}
		return []*manifest.Object{obj("monitoring.coreos.com/v1", "ServiceMonitor", "a"), obj("v1", "ConfigMap", "b"), obj("apps/v1", "Deployment", "c"), obj("example.com/v1", "Aardvark", "d")}
	}
	opts := widgetOptions(children, nil)
	spec := widget("w", nil)
	spec.Map["spec"] = map[string]any{"additionalManagedTypes": []any{map[string]any{"group": "*.coreos.com", "kind": "*"}}}
	res, err := Render(context.Background(), []*manifest.Object{spec}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Items {
		got = append(got, it.Key.Kind)
	}
	want := []string{"ConfigMap", "Deployment", "Aardvark", "Widget", "ServiceMonitor"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("instances of additional managed types come after the wave's regular objects: -want +got:\n%s", diff)
	}
}

func TestComponentPolicyInvalid(t *testing.T) {
	opts := widgetOptions(func(*manifest.Object) []*manifest.Object { return nil }, map[string]string{"wavesmith.io/update-policy": "sometimes"})
	_, err := Render(context.Background(), []*manifest.Object{widget("w", nil)}, opts)
	if !errors.Is(err, ErrAnnotation) || !strings.Contains(err.Error(), "replace, ssa-merge") {
		t.Errorf("an unknown policy value in a spec lists the allowed values: %v", err)
	}
}

func levelsOrNil(g *depGraph, err error) [][]int {
	if err != nil {
		return nil
	}
	return g.levels
}

// TestDependentWithHooks: a chart Component with install hooks that depends
// on another Component starts, pre-install hooks and CRDs included, after
// the last object of its dependency.
func TestDependentWithHooks(t *testing.T) {
	objs, err := manifest.Decode("../testdata/examples/deps.yaml", []byte(`apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata: {name: shop, namespace: operators}
spec:
  source: {kustomization: {path: ../kustomizations/shop}}
---
apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata: {name: widgets, namespace: operators}
spec:
  source: {chart: {path: ../charts/operator}}
  dependsOn: [{name: shop}]
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Render(context.Background(), objs, Options{Root: ".."})
	if err != nil {
		t.Fatal(err)
	}
	waves := map[string][]int{} // Component -> min, max wave of its objects
	for _, it := range res.Items {
		if it.Role != Child {
			continue
		}
		name := res.Specs[it.Spec].Key.Name
		if w, ok := waves[name]; !ok {
			waves[name] = []int{it.Wave, it.Wave}
		} else {
			waves[name] = []int{min(w[0], it.Wave), max(w[1], it.Wave)}
		}
	}
	if len(waves["shop"]) == 0 || len(waves["widgets"]) == 0 {
		t.Fatalf("want objects of both Components, got waves %v", waves)
	}
	if waves["widgets"][0] != waves["shop"][1]+1 {
		t.Errorf("widgets (with a pre-install hook) should start one wave after shop's last object: shop %v, widgets %v", waves["shop"], waves["widgets"])
	}
	// The hooks keep their distance: pre-install 106 waves before the
	// release's objects, post-install 101 after.
	if got := waves["widgets"][1] - waves["widgets"][0]; got != 207 {
		t.Errorf("widgets spans %d waves, want 207 (pre-install at -106, post-install at +101): %v", got, waves["widgets"])
	}
}
