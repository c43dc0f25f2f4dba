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
		reason  string
		specs   []*manifest.Object
		want    map[string]int
		wantErr string
	}{
		"Chain": {"each dependent lands one wave after its latest dependency",
			[]*manifest.Object{componentSpec("c", nil, "b", "a"), componentSpec("b", nil, "a"), componentSpec("a", w(3))},
			map[string]int{"b": 4, "c": 5}, ""},
		"ExplicitOK": {"an explicit wave after the dependency is kept",
			[]*manifest.Object{componentSpec("a", nil), componentSpec("b", w(7), "a")}, map[string]int{}, ""},
		"ExplicitTooEarly": {"an explicit wave not after the dependency is an error",
			[]*manifest.Object{componentSpec("a", w(2)), componentSpec("b", w(1), "a")}, nil, "wave 1 is not after its dependencies (at least 3)"},
		"Cycle": {"a cycle is named",
			[]*manifest.Object{componentSpec("a", nil, "b"), componentSpec("b", nil, "c"), componentSpec("c", nil, "a")}, nil,
			"cycle Component ns/a -> Component ns/b -> Component ns/c -> Component ns/a"},
		"Missing": {"a missing dependency is named",
			[]*manifest.Object{componentSpec("a", nil, "ghost")}, nil, "Component ns/ghost not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var items []*Item
			for i, s := range tc.specs {
				items = append(items, &Item{Object: s, Role: Spec, Spec: i})
			}
			got, err := dependencyWaves(items)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrDependency) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: got %v, want ErrDependency with %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]int{}
			for i, w := range got {
				byName[tc.specs[i].Name()] = w
			}
			if diff := cmp.Diff(tc.want, byName); diff != "" {
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
