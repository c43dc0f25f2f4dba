package render

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

func configMap(annotations map[string]any) *manifest.Object {
	meta := map[string]any{"name": "cm", "namespace": "ns"}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})
}

func TestDecorateAnnotations(t *testing.T) {
	native := func(extra map[string]any) map[string]any {
		m := map[string]any{
			"wavesmith.io/apply-order": "0", "wavesmith.io/delete-order": "0",
			"wavesmith.io/adoption-policy": "if-unowned", "wavesmith.io/reconcile-policy": "on-object-change",
			"wavesmith.io/update-policy": "ssa-override", "wavesmith.io/delete-policy": "delete",
			"argocd.argoproj.io/sync-wave": "0", "argocd.argoproj.io/sync-options": "ServerSideApply=true",
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := map[string]struct {
		reason       string
		annotations  map[string]any
		defaults     map[string]string
		want         map[string]any
		wantWarnings []string
	}{
		"Defaults": {
			reason: "every object carries the resolved native values, the Argo CD wave and SSA",
			want:   native(nil),
		},
		"OrphanAndWave": {
			reason:      "delete-policy orphan is written for both engines; the wave for Argo CD",
			annotations: map[string]any{"wavesmith.io/delete-policy": "orphan", "wavesmith.io/apply-order": "2"},
			want: native(map[string]any{
				"wavesmith.io/delete-policy": "orphan", "wavesmith.io/apply-order": "2", "argocd.argoproj.io/sync-wave": "2",
				"argocd.argoproj.io/sync-options":   "ServerSideApply=true,Prune=false,Delete=false",
				"kustomize.toolkit.fluxcd.io/prune": "Disabled",
			}),
		},
		"OnceWarnsArgo": {
			reason:       "reconcile-policy once maps to Flux IfNotPresent; Argo CD cannot express it",
			annotations:  map[string]any{"wavesmith.io/reconcile-policy": "Once"},
			want:         native(map[string]any{"wavesmith.io/reconcile-policy": "once", "kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}),
			wantWarnings: []string{"argocd cannot express this: reconcile-policy once"},
		},
		"ReplaceWarnsFlux": {
			reason:       "update-policy replace maps to Argo CD Replace=true; Flux cannot express it",
			annotations:  map[string]any{"wavesmith.io/update-policy": "replace"},
			want:         native(map[string]any{"wavesmith.io/update-policy": "replace", "argocd.argoproj.io/sync-options": "Replace=true"}),
			wantWarnings: []string{"flux cannot express this: update-policy replace"},
		},
		"Recreate": {
			reason:      "recreate is Replace+Force for Argo CD and force for Flux",
			annotations: map[string]any{"wavesmith.io/update-policy": "recreate"},
			want: native(map[string]any{"wavesmith.io/update-policy": "recreate", "argocd.argoproj.io/sync-options": "Replace=true,Force=true",
				"kustomize.toolkit.fluxcd.io/force": "Enabled"}),
		},
		"UserSyncOptionsWin": {
			reason:      "the object's own sync-options come first and win",
			annotations: map[string]any{"argocd.argoproj.io/sync-options": "ServerSideApply=false,Validate=false"},
			want:        native(map[string]any{"argocd.argoproj.io/sync-options": "ServerSideApply=false,Validate=false"}),
		},
		"ConfigDefaults": {
			reason:   "render defaults apply when neither object nor spec says otherwise, without a warning per object",
			defaults: map[string]string{"wavesmith.io/apply-order": "3", "wavesmith.io/update-policy": "ssa-merge"},
			want: native(map[string]any{"wavesmith.io/apply-order": "3", "argocd.argoproj.io/sync-wave": "3",
				"wavesmith.io/update-policy": "ssa-merge", "kustomize.toolkit.fluxcd.io/ssa": "Merge"}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := configMap(tc.annotations)
			res, err := Render(context.Background(), []*manifest.Object{o}, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), Defaults: tc.defaults})
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, res.Items[0].Object.Annotations()); diff != "" {
				t.Errorf("%s: annotations -want +got:\n%s", tc.reason, diff)
			}
			var got []string
			for _, w := range res.Warnings {
				got = append(got, w.Message)
			}
			if len(got) != len(tc.wantWarnings) {
				t.Fatalf("%s: warnings %q, want %q", tc.reason, got, tc.wantWarnings)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.wantWarnings[i]) {
					t.Errorf("%s: warning %q, want prefix %q", tc.reason, got[i], tc.wantWarnings[i])
				}
			}
		})
	}
}

func TestDecorateLabels(t *testing.T) {
	o := configMap(nil)
	o.SetLabel("app.kubernetes.io/name", "mine")
	res, err := Render(context.Background(), []*manifest.Object{o}, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), PartOf: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"app.kubernetes.io/name": "mine", "app.kubernetes.io/instance": "cm", "app.kubernetes.io/component": "configmap",
		"app.kubernetes.io/part-of": "shop", "app.kubernetes.io/managed-by": "wavesmith",
	}
	if diff := cmp.Diff(want, res.Items[0].Object.Labels()); diff != "" {
		t.Errorf("labels present are kept, missing ones added: -want +got:\n%s", diff)
	}
}

// fakeGenerator stands in for a spec kind in engine tests; the real
// generators have their own tests and the examples' golden test runs them
// through the engine.
type fakeGenerator struct {
	children func(spec *manifest.Object) []*manifest.Object
	defaults map[string]string
}

func (f fakeGenerator) Generate(_ context.Context, spec *manifest.Object, _ generators.Options) (generators.Result, error) {
	return generators.Result{Objects: f.children(spec), Defaults: f.defaults}, nil
}

func widgetOptions(children func(spec *manifest.Object) []*manifest.Object, defaults map[string]string) Options {
	return Options{Engines: engines.Dialects(), Root: "..", Generators: map[string]generators.Generator{"example.com/Widget": fakeGenerator{children, defaults}}}
}

func widget(name string, annotations map[string]any) *manifest.Object {
	meta := map[string]any{"name": name}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return manifest.New(map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": map[string]any{}, "status": map[string]any{"x": "y"}})
}

func TestSpecInventoryAndPrecedence(t *testing.T) {
	children := func(spec *manifest.Object) []*manifest.Object {
		svc := manifest.New(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": spec.Name(), "namespace": spec.Namespace()}})
		dep := manifest.New(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": spec.Name(), "namespace": spec.Namespace(),
			"annotations": map[string]any{"wavesmith.io/apply-order": "5"}}})
		return []*manifest.Object{dep, svc}
	}
	opts := widgetOptions(children, map[string]string{"wavesmith.io/update-policy": "ssa-merge"})
	opts.Defaults = map[string]string{"wavesmith.io/apply-order": "9", "wavesmith.io/delete-policy": "orphan"}
	spec := widget("w", map[string]any{"wavesmith.io/apply-order": "1", "wavesmith.io/update-policy": "replace"})
	res, err := Render(context.Background(), []*manifest.Object{spec}, opts)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Key, Wave, Update, Delete string }
	var got []row
	for _, it := range res.Items {
		a := it.Object.Annotations()
		got = append(got, row{it.Object.Key().String(), a["wavesmith.io/apply-order"].(string), a["wavesmith.io/update-policy"].(string), a["wavesmith.io/delete-policy"].(string)})
	}
	want := []row{
		// the Service: generator defaults > spec annotations > render defaults
		{"Service/default/w", "1", "ssa-merge", "orphan"},
		// the Deployment's own annotation wins
		{"Deployment.apps/default/w", "5", "ssa-merge", "orphan"},
		// the spec: its own annotations, then the render defaults; its
		// wave is its last child's (5), not its own (1)
		{"Widget.example.com/default/w", "5", "replace", "orphan"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("precedence and order: -want +got:\n%s", diff)
	}
	s := res.Specs[0].Object
	if _, has := s.Map["status"]; has {
		t.Error("the rendered spec keeps its status; it must be dropped")
	}
	inv, _ := s.Annotation("wavesmith.io/inventory")
	if want := "/v1/Service/default/w\napps/v1/Deployment/default/w"; inv != want {
		t.Errorf("inventory %q, want %q", inv, want)
	}
	d, _ := s.Annotation("wavesmith.io/render-digest")
	if !strings.HasPrefix(d, "sha256:") || len(d) != 71 {
		t.Errorf("render digest %q", d)
	}
}

func TestKeepInputs(t *testing.T) {
	cm := configMap(nil)
	spec := widget("w", nil)
	opts := widgetOptions(func(s *manifest.Object) []*manifest.Object {
		return []*manifest.Object{manifest.New(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "w", "namespace": "default"}})}
	}, nil)
	opts.KeepInputs = true
	res, err := Render(context.Background(), []*manifest.Object{cm, spec}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels() != nil || cm.Annotations() != nil {
		t.Errorf("KeepInputs decorated a user object: %v %v", cm.Labels(), cm.Annotations())
	}
	for _, it := range res.Items {
		if it.Role == Child && it.Object.Labels()["app.kubernetes.io/managed-by"] != "wavesmith" {
			t.Errorf("children are decorated in every mode: %v", it.Object.Labels())
		}
	}
	if _, ok := spec.Annotation("argocd.argoproj.io/sync-wave"); ok {
		t.Errorf("a spec in the wave of its children keeps its annotations as written: %v", spec.Annotations())
	}

	// A spec whose children land later (here by the render default) gets
	// the wave an engine reads, else Argo CD would sync it in wave 0 and
	// wait there for children it syncs later.
	spec = widget("w", nil)
	opts.Defaults = map[string]string{"wavesmith.io/apply-order": "3"}
	res, err = Render(context.Background(), []*manifest.Object{spec}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := spec.Annotation("argocd.argoproj.io/sync-wave"); w != "3" {
		t.Errorf("spec sync-wave %q, want 3 (its children's)", w)
	}
	if diff := cmp.Diff([]string{"argocd.argoproj.io/sync-wave", "wavesmith.io/inventory", "wavesmith.io/render-digest"}, res.Specs[0].Written); diff != "" {
		t.Errorf("what the engine wrote on the spec (-want +got):\n%s", diff)
	}
}

func TestRenderErrors(t *testing.T) {
	crd := manifest.New(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com", "annotations": map[string]any{"wavesmith.io/apply-order": "2"}},
		"spec":     map[string]any{"group": "example.com", "names": map[string]any{"kind": "Widget"}}})
	ns := manifest.New(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ns", "annotations": map[string]any{"wavesmith.io/apply-order": "1"}}})
	dupA, dupB := configMap(nil), configMap(nil)
	dupA.Source.File, dupB.Source.File = "a.yaml", "b.yaml"
	gen := manifest.New(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"generateName": "p-"}})
	cases := map[string]struct {
		reason   string
		objs     []*manifest.Object
		wantErr  error
		wantText []string
	}{
		"Empty": {reason: "an empty input is an error, never an empty output", wantErr: ErrEmptyInput},
		"BadWave": {reason: "an invalid wave names the field", objs: []*manifest.Object{configMap(map[string]any{"wavesmith.io/apply-order": "soon"})},
			wantErr: ErrAnnotation, wantText: []string{"ConfigMap/ns/cm", "metadata.annotations[wavesmith.io/apply-order]", "-32768..32767"}},
		"BadPolicy": {reason: "an invalid policy lists the allowed values", objs: []*manifest.Object{configMap(map[string]any{"wavesmith.io/delete-policy": "keep"})},
			wantErr: ErrAnnotation, wantText: []string{"delete, orphan, orphan-on-apply, orphan-on-delete"}},
		"BadHint": {reason: "status hints are checked", objs: []*manifest.Object{configMap(map[string]any{"wavesmith.io/status-hint": "ready"})},
			wantErr: ErrAnnotation, wantText: []string{"has-observed-generation"}},
		"Duplicate": {reason: "a duplicate names both sources", objs: []*manifest.Object{dupA, dupB},
			wantErr: ErrDuplicate, wantText: []string{"a.yaml", "b.yaml"}},
		"GenerateName": {reason: "generateName is refused", objs: []*manifest.Object{gen}, wantErr: ErrGenerateName},
		"NamespaceWave": {reason: "a namespaced object may not come before its Namespace", objs: []*manifest.Object{ns, configMap(nil)},
			wantErr: ErrWaveOrder, wantText: []string{"Namespace ns"}},
		"CRDWave": {reason: "a custom resource may not come before its CRD", objs: []*manifest.Object{crd, widget("w", nil)},
			wantErr: ErrWaveOrder, wantText: []string{"CustomResourceDefinition widgets.example.com"}},
		"PurgeOnNamespace": {reason: "purge-order is not allowed on a Namespace",
			objs:    []*manifest.Object{manifest.New(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x", "annotations": map[string]any{"wavesmith.io/purge-order": "1"}}})},
			wantErr: ErrAnnotation},
		"LabelNotString": {reason: "label values must be strings",
			objs:    []*manifest.Object{manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "labels": map[string]any{"a": int64(1)}}})},
			wantErr: manifest.ErrInvalid, wantText: []string{"metadata.labels.a"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(context.Background(), tc.objs, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.wantErr, err)
			}
			for _, s := range tc.wantText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: %q does not mention %q", tc.reason, err, s)
				}
			}
		})
	}
}

// TestSpecAnnotationReportedOnce: a bad lifecycle annotation on a spec is
// reported once, at the spec's file and the annotation's line, not once per
// child at a file its user never edited; a child's own bad annotation stays
// reported at the child's source.
func TestSpecAnnotationReportedOnce(t *testing.T) {
	spec := func(t *testing.T, annotations string) *manifest.Object {
		objs, err := manifest.Decode("w.yaml", []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: ns\n  annotations:\n"+annotations+"spec: {}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return objs[0]
	}
	children := func(own map[string]any) func(*manifest.Object) []*manifest.Object {
		return func(*manifest.Object) []*manifest.Object {
			var out []*manifest.Object
			for _, n := range []string{"a", "b", "c"} {
				c := manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": n, "namespace": "ns", "annotations": own}})
				c.Source.File, c.Source.Line = "chart/templates/cm.yaml", 3
				out = append(out, c)
			}
			return out
		}
	}
	type located struct{ File, Object, Field string }
	cases := map[string]struct {
		reason      string
		annotations string
		own         map[string]any
		want        []located
		wantLines   []int
	}{
		"SpecPolicies": {
			reason:      "the spec's bad update-policy and delete-policy, each once, at their lines",
			annotations: "    x.io/other: y\n    wavesmith.io/update-policy: apply\n    wavesmith.io/delete-policy: keep\n",
			own:         map[string]any{},
			want: []located{
				{"w.yaml", "Widget.example.com/ns/w", "metadata.annotations[wavesmith.io/delete-policy]"},
				{"w.yaml", "Widget.example.com/ns/w", "metadata.annotations[wavesmith.io/update-policy]"},
			},
			wantLines: []int{9, 8},
		},
		"SpecWaveAndHint": {
			reason:      "every lifecycle annotation of a spec is checked at the spec",
			annotations: "    wavesmith.io/apply-order: soon\n    wavesmith.io/status-hint: ready\n",
			own:         map[string]any{},
			want: []located{
				{"w.yaml", "Widget.example.com/ns/w", "metadata.annotations[wavesmith.io/apply-order]"},
				{"w.yaml", "Widget.example.com/ns/w", "metadata.annotations[wavesmith.io/status-hint]"},
			},
			wantLines: []int{7, 8},
		},
		"ChildOwn": {
			reason:      "a child's own annotation is reported at its template, once per child",
			annotations: "    x.io/other: y\n",
			own:         map[string]any{"wavesmith.io/update-policy": "apply"},
			want: []located{
				{"chart/templates/cm.yaml", "ConfigMap/ns/a", "metadata.annotations[wavesmith.io/update-policy]"},
				{"chart/templates/cm.yaml", "ConfigMap/ns/b", "metadata.annotations[wavesmith.io/update-policy]"},
				{"chart/templates/cm.yaml", "ConfigMap/ns/c", "metadata.annotations[wavesmith.io/update-policy]"},
			},
			wantLines: []int{3, 3, 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(context.Background(), []*manifest.Object{spec(t, tc.annotations)}, widgetOptions(children(tc.own), nil))
			if !errors.Is(err, ErrAnnotation) {
				t.Fatalf("%s: want ErrAnnotation, got %v", tc.reason, err)
			}
			var es manifest.Errors
			if !errors.As(err, &es) {
				es = manifest.Errors{err}
			}
			var got []located
			var lines []int
			for _, e := range es {
				var me *manifest.Error
				if !errors.As(e, &me) {
					t.Fatalf("%s: %v is not located", tc.reason, e)
				}
				got = append(got, located{me.File, me.Object, me.Field})
				lines = append(lines, me.Line)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantLines, lines); diff != "" {
				t.Errorf("%s: lines (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestEveryErrorAtOnce: one spec with a fault of every stage (a bad name,
// an unknown and a bad wavesmith.io annotation, an unknown field, a
// string-typed wave, a missing dependency) and another file's spec with
// its own faults give every error in one run, sorted.
func TestEveryErrorAtOnce(t *testing.T) {
	var objs []*manifest.Object
	for file, doc := range map[string]string{
		"comp.yaml": `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata:
  name: App_1
  namespace: apps
  annotations:
    wavesmith.io/aply-order: "1"
    wavesmith.io/update-policy: apply
spec:
  wave: "1"
  colour: red
  dependsOn:
  - name: nothere
  source:
    chart:
      path: chart
`,
		"other.yaml": `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata:
  name: other
  namespace: apps
spec:
  wave: "2"
  dependsOn:
  - name: missing
  source:
    chart: {path: chart, colour: blue}
`,
	} {
		o, err := manifest.Decode(file, []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	type want struct {
		file  string
		line  int
		field string
		err   error
	}
	wants := []want{
		{"comp.yaml", 7, "metadata.annotations[wavesmith.io/aply-order]", ErrAnnotation},
		{"comp.yaml", 8, "metadata.annotations[wavesmith.io/update-policy]", ErrAnnotation},
		{"comp.yaml", 4, "metadata.name", manifest.ErrInvalid},
		{"comp.yaml", 11, "spec.colour", manifest.ErrInvalid},
		{"comp.yaml", 13, "spec.dependsOn[0]", ErrDependency},
		{"comp.yaml", 10, "spec.wave", manifest.ErrInvalid},
		{"other.yaml", 9, "spec.dependsOn[0]", ErrDependency},
		{"other.yaml", 11, "spec.source.chart.colour", manifest.ErrInvalid},
		{"other.yaml", 7, "spec.wave", manifest.ErrInvalid},
	}
	_, err := Render(context.Background(), objs, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()})
	var es manifest.Errors
	if !errors.As(err, &es) {
		t.Fatalf("want every error at once, got %v", err)
	}
	if len(es) != len(wants) {
		t.Fatalf("got %d errors, want %d:\n%v", len(es), len(wants), err)
	}
	for i, w := range wants {
		var me *manifest.Error
		if !errors.As(es[i], &me) {
			t.Errorf("error %d (%v) is not located", i, es[i])
			continue
		}
		if me.File != w.file || me.Line != w.line || me.Field != w.field || !errors.Is(es[i], w.err) {
			t.Errorf("error %d: got %s:%d %s (%v), want %s:%d %s (%v)", i, me.File, me.Line, me.Field, es[i], w.file, w.line, w.field, w.err)
		}
	}
}

// TestCheck: the checks Render runs first, alone: every error of every
// object, the spec's own fields (generators.Checker) included, nothing
// rendered.
func TestCheck(t *testing.T) {
	objs, err := manifest.Decode("c.yaml", []byte("apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: App_1\n  annotations: {wavesmith.io/update-policy: apply}\nspec:\n  wave: \"1\"\n  source: {chart: {path: chart}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = Check(objs, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()})
	var fields []string
	for _, e := range flattenErrors(err) {
		var me *manifest.Error
		if !errors.As(e, &me) {
			t.Fatalf("not located: %v", e)
		}
		fields = append(fields, me.Field)
	}
	if diff := cmp.Diff([]string{"metadata.annotations[wavesmith.io/update-policy]", "metadata.name", "spec.wave"}, fields); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if !errors.Is(err, ErrAnnotation) || !errors.Is(err, manifest.ErrInvalid) {
		t.Errorf("the sentinels are lost: %v", err)
	}
}

// TestCheckAsRender: Check reports what Render reports of the same
// objects, word for word: a spec without a namespace named with the
// render's (as the CLI and the KRM function report a spec's errors beside
// another file's that could not be read).
func TestCheckAsRender(t *testing.T) {
	for name, doc := range map[string]string{
		"kaoto":     "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: shop}\nspec: {image: \"UPPER CASE:bad\"}\n",
		"component": "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: App_1\n  annotations: {wavesmith.io/update-policy: apply}\nspec:\n  wave: \"1\"\n  source: {chart: {path: chart}}\n",
		"unserved":  "apiVersion: wavesmith.io/v1alpha1\nkind: Kaoto\nmetadata: {name: shop}\n",
	} {
		t.Run(name, func(t *testing.T) {
			decode := func() []*manifest.Object {
				objs, err := manifest.Decode(name+".yaml", []byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				return objs
			}
			opts := Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), Namespace: "team"}
			_, rerr := Render(context.Background(), decode(), opts)
			cerr := Check(decode(), opts)
			if rerr == nil || cerr == nil {
				t.Fatalf("Render: %v; Check: %v; want both to fail", rerr, cerr)
			}
			if diff := cmp.Diff(rerr.Error(), cerr.Error()); diff != "" {
				t.Errorf("-Render +Check:\n%s", diff)
			}
		})
	}
}

func flattenErrors(err error) []error {
	var es manifest.Errors
	if errors.As(err, &es) {
		return es
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// TestExplicitKeys: Lifecycle.Explicit holds exactly the keys whose value
// came from the object or its spec, not the render's defaults, and objects
// with the same keys share one map (read only), whatever their values.
func TestExplicitKeys(t *testing.T) {
	opts, err := Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), Defaults: map[string]string{inventory.DeletePolicy: inventory.DeleteOrphan}}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	spec := map[string]string{inventory.ReconcilePolicy: inventory.ReconcileOnce}
	both := func(adoption, update string) map[string]any {
		return map[string]any{inventory.AdoptionPolicy: adoption, inventory.UpdatePolicy: update}
	}
	explicit := func(obj *manifest.Object, spec map[string]string) map[string]bool {
		t.Helper()
		lc, err := resolve(obj, waves{}, spec, &opts)
		if err != nil {
			t.Fatal(err)
		}
		return lc.Explicit
	}
	a := explicit(configMap(both(inventory.AdoptionAlways, inventory.UpdateReplace)), spec)
	want := map[string]bool{inventory.AdoptionPolicy: true, inventory.UpdatePolicy: true, inventory.ReconcilePolicy: true}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("Explicit of an object with two policies and a spec default (-want +got):\n%s", diff)
	}
	b := explicit(configMap(both(inventory.AdoptionNever, inventory.UpdateSSAMerge)), spec)
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Error("two objects with the same explicit keys have a map each, want one shared")
	}
	if c := explicit(configMap(both(inventory.AdoptionNever, inventory.UpdateSSAMerge)), nil); len(c) != 2 || c[inventory.ReconcilePolicy] {
		t.Errorf("Explicit without the spec default = %v, want the object's two keys", c)
	}
	if d := explicit(configMap(nil), nil); d != nil {
		t.Errorf("Explicit of an object with nothing explicit = %v, want nil (the render default of %s is not explicit)", d, inventory.DeletePolicy)
	}
}
