package render

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// planGenerator renders "example.com/Plan" specs for the wave plan tests:
// one ConfigMap per entry of spec.offsets, placed at that offset from the
// spec's wave (generators.Result.Offsets, as Helm hooks are placed), then
// one per entry of spec.own carrying it as its own
// wavesmith.io/apply-order (as a kustomization's object may), depending
// on the specs spec.dependsOn names, in the wave spec.wave sets.
type planGenerator struct{}

func (planGenerator) Generate(_ context.Context, spec *manifest.Object, _ generators.Options) (generators.Result, error) {
	s, _ := spec.Map["spec"].(map[string]any)
	offsets, _ := s["offsets"].([]any)
	own, _ := s["own"].([]any)
	res := generators.Result{Offsets: map[*manifest.Object]generators.Offset{}}
	cm := func(i int) *manifest.Object {
		return manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
			"name": fmt.Sprintf("%s-%d", spec.Name(), i), "namespace": "ns"}})
	}
	for i, off := range offsets {
		o := cm(i)
		res.Objects = append(res.Objects, o)
		res.Offsets[o] = generators.Offset{Apply: int(off.(int64))}
	}
	for i, w := range own {
		o := cm(len(offsets) + i)
		o.SetAnnotation("wavesmith.io/apply-order", w.(string))
		res.Objects = append(res.Objects, o)
	}
	return res, nil
}

func (planGenerator) DependsOn(spec *manifest.Object) []generators.Dependency {
	s, _ := spec.Map["spec"].(map[string]any)
	deps, _ := s["dependsOn"].([]any)
	var out []generators.Dependency
	for i, d := range deps {
		out = append(out, generators.Dependency{Field: fmt.Sprintf("spec.dependsOn[%d]", i), Group: "example.com", Kind: "Plan", Name: d.(string)})
	}
	return out
}

func (planGenerator) Wave(spec *manifest.Object) (int, string, bool) {
	s, _ := spec.Map["spec"].(map[string]any)
	w, ok := s["wave"].(int64)
	return int(w), "spec.wave", ok
}

// withOwn gives a Plan spec objects carrying their own apply-order.
func withOwn(spec *manifest.Object, own ...string) *manifest.Object {
	var l []any
	for _, w := range own {
		l = append(l, w)
	}
	spec.Map["spec"].(map[string]any)["own"] = l
	return spec
}

func planSpec(name string, wave *int64, offsets []int64, deps ...string) *manifest.Object {
	s := map[string]any{}
	var offs []any
	for _, o := range offsets {
		offs = append(offs, o)
	}
	s["offsets"] = offs
	if wave != nil {
		s["wave"] = *wave
	}
	var d []any
	for _, n := range deps {
		d = append(d, n)
	}
	if d != nil {
		s["dependsOn"] = d
	}
	return manifest.New(map[string]any{"apiVersion": "example.com/v1", "kind": "Plan",
		"metadata": map[string]any{"name": name, "namespace": "ns"}, "spec": s})
}

// TestWavePlan drives every wave rule through Render and reads the waves
// of the result: each object's and each spec's.
func TestWavePlan(t *testing.T) {
	w := func(n int64) *int64 { return &n }
	type args struct {
		specs       []*manifest.Object
		defaultWave string
	}
	type want struct {
		waves map[string]int // object name -> wave; specs by their name
		err   string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Chain": {
			reason: "each dependent lands one wave after the latest object of its dependencies",
			args:   args{specs: []*manifest.Object{planSpec("c", nil, []int64{0}, "b", "a"), planSpec("b", nil, []int64{0}, "a"), planSpec("a", w(3), []int64{0, 0})}},
			want:   want{waves: map[string]int{"a": 3, "a-0": 3, "a-1": 3, "b": 4, "b-0": 4, "c": 5, "c-0": 5}},
		},
		"SpecAfterLastChild": {
			reason: "a spec lands in the wave of its last child, not before it (engines wait on its health)",
			args:   args{specs: []*manifest.Object{planSpec("op", nil, []int64{-106, 0, 101})}},
			want:   want{waves: map[string]int{"op": 101, "op-0": -106, "op-1": 0, "op-2": 101}},
		},
		"AfterHooks": {
			reason: "a dependency's post-install hook (wave 101), and so the dependency itself, come before the dependent",
			args:   args{specs: []*manifest.Object{planSpec("app", nil, []int64{0}, "op"), planSpec("op", nil, []int64{-106, 0, 101})}},
			want:   want{waves: map[string]int{"op": 101, "op-0": -106, "op-1": 0, "op-2": 101, "app": 102, "app-0": 102}},
		},
		"DependentShiftedWhole": {
			reason: "a dependent with a pre-install hook is shifted whole: its earliest object follows the dependency",
			args:   args{specs: []*manifest.Object{planSpec("app", nil, []int64{-106, 0, 101}, "op"), planSpec("op", nil, []int64{0})}},
			want:   want{waves: map[string]int{"op": 0, "op-0": 0, "app-0": 1, "app-1": 107, "app-2": 208, "app": 208}},
		},
		"DefaultWave": {
			reason: "a dependency rendered in the default wave 5 (--wave 5) puts its dependent in 6",
			args:   args{specs: []*manifest.Object{planSpec("app", nil, []int64{0}, "op"), planSpec("op", nil, []int64{0})}, defaultWave: "5"},
			want:   want{waves: map[string]int{"op": 5, "op-0": 5, "app": 6, "app-0": 6}},
		},
		"ChildlessSpec": {
			reason: "a spec without objects keeps its own wave and still orders its dependents",
			args:   args{specs: []*manifest.Object{planSpec("app", nil, []int64{0}, "op"), planSpec("op", w(4), nil)}},
			want:   want{waves: map[string]int{"op": 4, "app": 5, "app-0": 5}},
		},
		"ExplicitOK": {
			reason: "a wave set after the dependency is kept",
			args:   args{specs: []*manifest.Object{planSpec("a", nil, []int64{0}), planSpec("b", w(7), []int64{0}, "a")}},
			want:   want{waves: map[string]int{"a": 0, "a-0": 0, "b": 7, "b-0": 7}},
		},
		"ExplicitTooEarly": {
			reason: "a wave set not after the dependency is an error naming the wave needed",
			args:   args{specs: []*manifest.Object{planSpec("a", w(2), []int64{0}), planSpec("b", w(1), []int64{0}, "a")}},
			want:   want{err: "spec.wave: spec dependency: wave 1 puts its earliest object in wave 1, not after its dependencies (at least 3); remove the wave or set it to at least 3"},
		},
		"ExplicitHookTooEarly": {
			reason: "a set wave whose pre-install hook would come before the dependency is an error",
			args:   args{specs: []*manifest.Object{planSpec("a", nil, []int64{0}), planSpec("b", w(7), []int64{-106, 0}, "a")}},
			want:   want{err: "wave 7 puts its earliest object in wave -99, not after its dependencies (at least 1); remove the wave or set it to at least 107"},
		},
		"OwnWaveShifted": {
			reason: "an object's own apply-order is a wave, not an offset, and a dependent is shifted whole with it",
			args: args{specs: []*manifest.Object{planSpec("op", w(2), []int64{0}),
				withOwn(planSpec("app", nil, []int64{0}, "op"), " -3 ", "5")}},
			want: want{waves: map[string]int{"op": 2, "op-0": 2, "app-0": 9, "app-1": 3, "app-2": 11, "app": 11}},
		},
		"OutOfRange": {
			reason: "a dependency beyond the last wave is an error at the dependent's dependsOn, naming the dependency, not at an annotation the plan wrote",
			args:   args{specs: []*manifest.Object{planSpec("a", w(32767), []int64{0}), planSpec("b", nil, []int64{0}, "a")}},
			want:   want{err: `Plan.example.com/ns/b: spec.dependsOn[0]: spec dependency: depending on Plan ns/a, whose objects reach wave 32767, puts this spec's objects up to wave 32768, past the last wave 32767`},
		},
		"OutOfRangeShift": {
			reason: "a shift past the last wave names the latest of the dependencies",
			args: args{specs: []*manifest.Object{planSpec("a", w(32760), []int64{0}), planSpec("c", w(3), []int64{0}),
				planSpec("b", nil, []int64{-5, 0, 10}, "c", "a")}},
			want: want{err: `Plan.example.com/ns/b: spec.dependsOn[1]: spec dependency: depending on Plan ns/a, whose objects reach wave 32760, puts this spec's objects up to wave 32776`},
		},
		"Cycle": {
			reason: "a cycle is named",
			args:   args{specs: []*manifest.Object{planSpec("a", nil, nil, "b"), planSpec("b", nil, nil, "c"), planSpec("c", nil, nil, "a")}},
			want:   want{err: "cycle Plan ns/a -> Plan ns/b -> Plan ns/c -> Plan ns/a"},
		},
		"SelfCycle": {
			reason: "a spec depending on itself is a cycle",
			args:   args{specs: []*manifest.Object{planSpec("a", nil, nil, "a")}},
			want:   want{err: "cycle Plan ns/a -> Plan ns/a"},
		},
		"Missing": {
			reason: "a missing dependency is named",
			args:   args{specs: []*manifest.Object{planSpec("a", nil, nil, "ghost")}},
			want:   want{err: "spec.dependsOn[0]: spec dependency: Plan ns/ghost not found among the inputs"},
		},
		"MissingQuoted": {
			reason: "a missing dependency whose name holds control characters is named quoted",
			args:   args{specs: []*manifest.Object{planSpec("a", nil, nil, "gh\nost\x1b")}},
			want:   want{err: `spec.dependsOn[0]: spec dependency: "Plan ns/gh\nost\x1b" not found among the inputs`},
		},
		"NoName": {
			reason: "a dependency without a name is an error at its field",
			args:   args{specs: []*manifest.Object{planSpec("a", nil, nil, "")}},
			want:   want{err: "spec.dependsOn[0].name: spec dependency: a name is required"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := Options{Engines: engines.Dialects(), Root: "..", Generators: generators.Registry{"example.com/Plan": planGenerator{}}}
			if tc.args.defaultWave != "" {
				opts.Defaults = map[string]string{"wavesmith.io/apply-order": tc.args.defaultWave}
			}
			res, err := Render(context.Background(), tc.args.specs, opts)
			if tc.want.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want.err) {
					t.Fatalf("%s:\ngot  %v\nwant an error containing %q", tc.reason, err, tc.want.err)
				}
				var me *manifest.Error
				if !errors.Is(err, ErrDependency) || !errors.As(err, &me) || me.Object == "" {
					t.Errorf("%s: want a located ErrDependency about a spec, got %#v", tc.reason, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			got := map[string]int{}
			for _, it := range res.Items {
				got[it.Key.Name] = it.Wave
				if a, _ := it.Object.Annotation("wavesmith.io/apply-order"); a != strconv.Itoa(it.Wave) {
					t.Errorf("%s: apply-order annotation %q, wave %d", it.Key, a, it.Wave)
				}
			}
			if diff := cmp.Diff(tc.want.waves, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			// The plan the delivery packages read says the same.
			p := res.Plan()
			for _, s := range p.Specs {
				if s.Wave != got[s.Key.Name] || s.Last != s.Wave || s.First > s.Wave {
					t.Errorf("plan of %s: wave %d, span %d..%d; the result says %d", s.Key.Name, s.Wave, s.First, s.Last, got[s.Key.Name])
				}
			}
		})
	}
	// The errors are ErrDependency.
	_, err := Render(context.Background(), []*manifest.Object{planSpec("a", nil, nil, "a")}, Options{Engines: engines.Dialects(), Root: "..", Generators: generators.Registry{"example.com/Plan": planGenerator{}}})
	if !errors.Is(err, ErrDependency) {
		t.Errorf("want ErrDependency, got %v", err)
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
	res, err := Render(context.Background(), objs, Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: ".."})
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
	// The pre-install hook (hook-succeeded) is purged one wave before the
	// release's objects (the Component's W, docs/component.md), in the
	// wave the dependency moved them to: on the annotation and in the
	// inventory.
	var spec, hook, release *Item
	for _, it := range res.Items {
		switch {
		case it.Role == Spec && it.Object.Name() == "widgets":
			spec = it
		case it.Role == Child && it.Object.Name() == "widgets-migrate":
			hook = it
		case it.Role == Child && it.Object.Kind() == "Deployment" && it.Object.Name() == "widgets-operator":
			release = it
		}
	}
	if spec == nil || hook == nil || release == nil {
		t.Fatal("want the widgets Component, its widgets-migrate hook and its widgets-operator Deployment")
	}
	if release.Wave <= 1 {
		t.Fatalf("widgets' objects are in wave %d: the dependency did not shift them", release.Wave)
	}
	want := strconv.Itoa(release.Wave - 1)
	if got, _ := hook.Object.Annotation(inventory.PurgeOrder); got != want {
		t.Errorf("widgets-migrate: purge-order %q, want %s (one before the release's wave %d, where the dependency moved it); its apply-order %d", got, want, release.Wave, hook.Wave)
	}
	inv, _ := spec.Object.Annotation(inventory.Inventory)
	if entry := "batch/v1/Job/operators/widgets-migrate hook=pre-install purge-order=" + want; !strings.Contains(inv, entry) {
		t.Errorf("widgets' inventory lacks %q:\n%s", entry, inv)
	}
}

// TestWavePlanOwnWaveInvalid: an object's own apply-order is read once, as
// written: one outside the waves is an error at its annotation, never
// moved into them by a dependency's shift.
func TestWavePlanOwnWaveInvalid(t *testing.T) {
	for _, own := range []string{"-40000", "40000", "soon"} {
		t.Run(own, func(t *testing.T) {
			specs := []*manifest.Object{planSpec("op", nil, []int64{0}), withOwn(planSpec("app", nil, nil, "op"), own)}
			_, err := Render(context.Background(), specs, Options{Engines: engines.Dialects(), Root: "..", Generators: generators.Registry{"example.com/Plan": planGenerator{}}})
			var me *manifest.Error
			if !errors.Is(err, ErrAnnotation) || !errors.As(err, &me) || me.Object != "ConfigMap/ns/app-0" || me.Field != "metadata.annotations[wavesmith.io/apply-order]" {
				t.Fatalf("want ErrAnnotation at ConfigMap/ns/app-0's apply-order, got %v", err)
			}
			if want := strconv.Quote(own) + " is not an integer in -32768..32767"; !strings.Contains(err.Error(), want) {
				t.Errorf("the error quotes the value as written: %v", err)
			}
		})
	}
}
