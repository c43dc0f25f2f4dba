package flux_test

import (
	"context"
	"errors"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/gitops/flux"
	"github.com/wavesmith/wavesmith/internal/golden"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/textdiff"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// renderYAML renders the objects of a YAML stream as pass-through objects.
func renderYAML(t *testing.T, stream string) *render.Result {
	t.Helper()
	objs, err := manifest.Decode("in.yaml", []byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.Render(context.Background(), objs, render.Options{Engines: engines.Dialects(), Root: "../..", Generators: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func cm(name string, wave string) string {
	return "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: demo\n  annotations:\n    wavesmith.io/apply-order: \"" + wave + "\"\n"
}

// tree is the full tree (objects and Flux files) of res over previous.
func tree(t *testing.T, res *render.Result, previous map[string][]byte) map[string][]byte {
	t.Helper()
	files := res.Tree()
	var fsys fs.FS
	if previous != nil {
		m := fstest.MapFS{}
		for k, v := range previous {
			m[k] = &fstest.MapFile{Data: v}
		}
		fsys = m
	}
	more, err := flux.Files(res.Plan(), fsys, flux.Options{Path: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range more {
		files[k] = v
	}
	return files
}

// fluxView lists, per wave folder, the resources and stubs (handoff-to).
func fluxView(files map[string][]byte) map[string][]string {
	out := map[string][]string{}
	for p, b := range files {
		if !strings.HasPrefix(p, flux.Dir+"/wave-") || strings.HasSuffix(p, ".yaml") && strings.Count(p, "/") == 1 {
			continue
		}
		dir := p[:strings.LastIndex(p, "/")]
		if strings.HasSuffix(p, "/kustomization.yaml") {
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "- ../../") {
					out[dir] = append(out[dir], strings.TrimPrefix(l, "- ../../"))
				}
			}
			continue
		}
		objs, err := manifest.Decode(p, b)
		if err != nil {
			panic(err)
		}
		to, _ := objs[0].Annotation(flux.HandoffAnnotation)
		ssa, _ := objs[0].Annotation(flux.SSAAnnotation)
		out[dir] = append(out[dir], "stub "+objs[0].Key().String()+" "+to+" ssa="+ssa)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

func TestHandoff(t *testing.T) {
	const (
		a = "_objects/demo--configmap-a.yaml"
		b = "_objects/demo--configmap-b.yaml"
		c = "_objects/demo--configmap-c.yaml"
	)
	cases := map[string]struct {
		reason        string
		before, after string
		want          map[string][]string
	}{
		"Unchanged": {
			reason: "nothing moves: no stubs",
			before: cm("a", "0") + cm("b", "1"), after: cm("a", "0") + cm("b", "1"),
			want: map[string][]string{"_flux/wave-0": {a}, "_flux/wave-1": {b}},
		},
		"MovesLater": {
			reason: "an object moving to a later wave leaves a stub in its old wave, which reconciles first",
			before: cm("a", "0") + cm("b", "0") + cm("c", "2"), after: cm("a", "0") + cm("b", "2") + cm("c", "2"),
			want: map[string][]string{
				"_flux/wave-0": {a, "stub ConfigMap/demo/b wave-2 ssa=Ignore"},
				"_flux/wave-2": {b, c},
			},
		},
		"MovesEarlier": {
			reason: "an object moving to an earlier wave is adopted before its old wave prunes: no stub",
			before: cm("a", "0") + cm("b", "2") + cm("c", "2"), after: cm("a", "0") + cm("b", "0") + cm("c", "2"),
			want: map[string][]string{"_flux/wave-0": {a, b}, "_flux/wave-2": {c}},
		},
		"OldWaveEmptied": {
			reason: "a wave left empty would be deleted with what it owns: it stays, holding stubs",
			before: cm("a", "0") + cm("b", "3"), after: cm("a", "0") + cm("b", "0"),
			want: map[string][]string{"_flux/wave-0": {a, b}, "_flux/wave-3": {"stub ConfigMap/demo/b wave-0 ssa=Ignore"}},
		},
		"Removed": {
			reason: "an object leaving the render is pruned by its wave: no stub",
			before: cm("a", "0") + cm("b", "1"), after: cm("a", "0"),
			want: map[string][]string{"_flux/wave-0": {a}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tree(t, renderYAML(t, tc.before), nil)
			res := renderYAML(t, tc.after)
			after := tree(t, res, before)
			if diff := cmp.Diff(tc.want, fluxView(after)); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			// Idempotent: rendering again over the new tree changes
			// nothing, so 'wavesmith check' passes after a render.
			again := tree(t, res, after)
			if diff := textdiff.Diff(again, after); diff != "" {
				t.Errorf("%s: a second render over the first changed the tree:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestHandoffFromLegacyDir: a tree rendered when the Flux files lay in
// flux/ still gives its handoffs to the first render into _flux/.
func TestHandoffFromLegacyDir(t *testing.T) {
	before := tree(t, renderYAML(t, cm("a", "0")+cm("b", "0")), nil)
	legacy := map[string][]byte{}
	for p, b := range before {
		if rest, ok := strings.CutPrefix(p, flux.Dir+"/"); ok {
			p = flux.LegacyDir + "/" + rest
		}
		legacy[p] = b
	}
	after := tree(t, renderYAML(t, cm("a", "0")+cm("b", "1")), legacy)
	if _, ok := after["_flux/wave-0/handoff-configmap-demo-b.yaml"]; !ok {
		t.Errorf("no handoff stub read from the legacy flux/ folder: %v", keys(after))
	}
}

func TestHandoffStubRemovedByHand(t *testing.T) {
	before := tree(t, renderYAML(t, cm("a", "0")+cm("b", "0")), nil)
	res := renderYAML(t, cm("a", "0")+cm("b", "1"))
	after := tree(t, res, before)
	stub := "_flux/wave-0/handoff-configmap-demo-b.yaml"
	if _, ok := after[stub]; !ok {
		t.Fatalf("want %s in the tree, got %v", stub, keys(after))
	}
	delete(after, stub)
	again := tree(t, res, after)
	if _, ok := again[stub]; ok {
		t.Errorf("a stub deleted by hand came back")
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestExamplesGolden(t *testing.T) {
	objs, err := load.Inputs(context.Background(), "../..", builtin.Registry(), []string{"../../testdata/examples"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := render.Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: "../.."}
	res, err := render.Render(context.Background(), objs, opts)
	if err != nil {
		t.Fatal(err)
	}
	files, err := flux.Files(res.Plan(), nil, flux.Options{Path: "clusters/prod/rendered", Source: flux.SourceRef{Kind: "OCIRepository", Name: "apps", Namespace: "flux-system"}})
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/examples.txt", golden.JoinFiles(files))
	// Every Kustomization passes the API server's metadata rules (a wave
	// label "-106" did not: negative waves could not be applied).
	for p, b := range files {
		if !strings.HasPrefix(p, "_flux/wave-") || !strings.HasSuffix(p, ".yaml") || strings.Count(p, "/") != 1 {
			continue
		}
		ks, err := manifest.Decode(p, b)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range ks[0].Labels() {
			if msgs := validation.IsValidLabelValue(v.(string)); len(msgs) > 0 {
				t.Errorf("%s: label %s=%q: %v", p, k, v, msgs)
			}
		}
	}
}

func TestOptionErrors(t *testing.T) {
	res := renderYAML(t, cm("a", "0"))
	cases := map[string]struct {
		reason string
		opts   flux.Options
		want   string
	}{
		"NoPath":      {"the path inside the source is required", flux.Options{}, "treePath: the path of the tree inside the source is required"},
		"AbsPath":     {"an absolute path", flux.Options{Path: "/x"}, `treePath: "/x"`},
		"Escapes":     {"a path leaving the source", flux.Options{Path: "../x"}, `treePath: "../x"`},
		"Kind":        {"an unknown source kind", flux.Options{Path: "x", Source: flux.SourceRef{Kind: "HelmRepository"}}, `flux.source: kind "HelmRepository": want one of GitRepository`},
		"Interval":    {"a bad interval", flux.Options{Path: "x", Interval: "soon"}, `flux.interval: "soon"`},
		"LongName":    {"a name too long for the owner label", flux.Options{Path: "x", Name: strings.Repeat("n", 60)}, "flux.name: \"nnn"},
		"BadName":     {"a name that is no DNS label", flux.Options{Path: "x", Name: "Prod_Apps"}, `flux.name: "Prod_Apps"`},
		"BadNamspace": {"a namespace that is no DNS label", flux.Options{Path: "x", Namespace: "Flux"}, `flux.namespace: "Flux"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := flux.Files(res.Plan(), nil, tc.opts)
			if !errors.Is(err, gitops.ErrOption) {
				t.Fatalf("%s: want gitops.ErrOption, got %v", tc.reason, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: want %q in %q", tc.reason, tc.want, err)
			}
		})
	}
}

func TestParseSource(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    flux.SourceRef
		wantErr bool
	}{
		"KindName":   {in: "GitRepository/flux-system", want: flux.SourceRef{Kind: "GitRepository", Name: "flux-system"}},
		"Namespaced": {in: "OCIRepository/apps/web", want: flux.SourceRef{Kind: "OCIRepository", Namespace: "apps", Name: "web"}},
		"Bare":       {in: "flux-system", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := flux.ParseSource(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("flux.ParseSource(%q): error %v, want error %v", tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); !tc.wantErr && diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

// TestComponentDependencies: a Component with a set wave far after its
// dependency depends explicitly on the dependency's last wave, besides the
// previous wave of the chain.
func TestComponentDependencies(t *testing.T) {
	objs, err := load.Inputs(context.Background(), "../..", builtin.Registry(), []string{"../../testdata/examples"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := manifest.Decode("../../testdata/examples/audit.yaml", []byte(`apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata:
  name: audit
  namespace: operators
spec:
  wave: 200
  source:
    kustomization:
      path: ../kustomizations/plain
  dependsOn:
  - name: widgets
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.Render(context.Background(), append(objs, extra...), render.Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: "../.."})
	if err != nil {
		t.Fatal(err)
	}
	files, err := flux.Files(res.Plan(), nil, flux.Options{Path: "x"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(files["_flux/wave-200.yaml"])
	for _, want := range []string{"  - name: wavesmith-wave-102\n", "  - name: wavesmith-wave-101\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("wave 200 should depend on %q (previous wave, and the last wave of widgets):\n%s", strings.TrimSpace(want), got)
		}
	}
}

func TestBrokenPreviousTree(t *testing.T) {
	res := renderYAML(t, cm("a", "0"))
	prev := fstest.MapFS{"_flux/wave-0/kustomization.yaml": &fstest.MapFile{Data: []byte("resources: [unterminated\n")}}
	_, err := flux.Files(res.Plan(), prev, flux.Options{Path: "x"})
	if !errors.Is(err, manifest.ErrInvalid) || !strings.Contains(err.Error(), "_flux/wave-0/kustomization.yaml") || !strings.Contains(err.Error(), "delete its _flux/ folder") {
		t.Errorf("want an error naming the broken file and the way out, got %v", err)
	}
}
