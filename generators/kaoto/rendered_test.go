package kaoto_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/golden"
	"github.com/wavesmith/wavesmith/internal/testobj"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// decorationPrefixes are the annotation prefixes of what the engine adds to
// every object: wavesmith's waves and policies and their Argo CD and Flux
// forms. The operator's own annotations (nginx.ingress.kubernetes.io/*,
// haproxy.router.openshift.io/*) share none of them.
var decorationPrefixes = []string{"wavesmith.io/", "argocd.argoproj.io/", "kustomize.toolkit.fluxcd.io/"}

// splitDecoration removes the engine's annotations from m (and the
// annotations mapping if nothing else is left) and returns them.
func splitDecoration(m map[string]any) map[string]any {
	meta, _ := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	out := map[string]any{}
	for k, v := range ann {
		for _, p := range decorationPrefixes {
			if strings.HasPrefix(k, p) {
				out[k] = v
				delete(ann, k)
				break
			}
		}
	}
	if ann != nil && len(ann) == 0 {
		delete(meta, "annotations")
	}
	return out
}

// renderCase runs the whole engine (render.Render, as the CLI does) over a
// case's Kaoto and returns the children as a reader decodes them, in the
// order of want's objects (the engine orders by wave and kind, the operator
// applies one after the other), and their decoration by identity.
func renderCase(t *testing.T, c string, p generators.Platform, want []map[string]any) ([]map[string]any, map[string]map[string]any) {
	t.Helper()
	spec := testobj.Load(t, caseFile(c, "kaoto.yaml"))
	res, err := render.Render(context.Background(), []*manifest.Object{spec}, render.Options{Engines: engines.Dialects(), Root: "../..", Generators: builtin.Registry(), Platform: p})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]map[string]any{}
	decoration := map[string]map[string]any{}
	for _, it := range res.Items {
		if it.Role != render.Child {
			continue
		}
		m := decodeDocuments(t, "rendered", it.YAML)[0]
		id := identity(m)
		decoration[id] = splitDecoration(m)
		byID[id] = m
	}
	var got []map[string]any
	for _, w := range want {
		if m, ok := byID[identity(w)]; ok {
			got = append(got, m)
			delete(byID, identity(w))
		}
	}
	for _, m := range byID { // extra objects, reported by diffBodies
		got = append(got, m)
	}
	return got, decoration
}

// refusedCases are operator cases whose bodies the API server rejects: the
// operator's apply fails at run time, wavesmith refuses them at render time
// (the generator's output still equals the operator's bodies, see
// TestOperatorBodies).
var refusedCases = map[string]map[generators.Platform]string{
	"path-no-leading-slash": {
		generators.Kubernetes: `spec.rules[0].http.paths[0].path: invalid value: refused by the API server's rules: "designer(/|$)(.*)"; must be an absolute path`,
		generators.OpenShift:  `spec.path: invalid value: refused by the API server's rules: "designer"; must start with '/'`,
	},
}

// TestRenderedChildren holds the engine to docs/design.md's contract: a rendered
// child is the operator's body, field for field, except for the missing
// ownerReferences and the annotations wavesmith adds. The engine's labels
// must leave the operator's alone.
func TestRenderedChildren(t *testing.T) {
	for _, c := range operatorCases {
		for _, p := range platforms {
			t.Run(c+"/"+string(p), func(t *testing.T) {
				if msg, ok := refusedCases[c]; ok {
					spec := testobj.Load(t, caseFile(c, "kaoto.yaml"))
					_, err := render.Render(context.Background(), []*manifest.Object{spec}, render.Options{Engines: engines.Dialects(), Root: "../..", Generators: builtin.Registry(), Platform: p})
					if err == nil || !strings.Contains(err.Error(), msg[p]) {
						t.Fatalf("the operator applies what the API server refuses; wavesmith must refuse it at render time with %q, got %v", msg[p], err)
					}
					return
				}
				want := operatorBodies(t, c, p)
				got, decoration := renderCase(t, c, p, want)
				if diff := diffBodies(want, got); diff != "" {
					t.Errorf("rendered children of %s, less wavesmith's annotations, differ from the operator's bodies:\n%s", caseFile(c, "kaoto.yaml"), diff)
				}
				for id, d := range decoration {
					if _, ok := d["wavesmith.io/apply-order"]; !ok {
						t.Errorf("%s: no wavesmith.io/apply-order among the annotations taken away (%v): is this the decorated output?", id, d)
					}
				}
			})
		}
	}
}

// TestDecorationGolden records what the engine adds to the operator's
// bodies with default options: annotations only, the same on every child.
// The children themselves are compared with the operator fixtures, never
// with a golden file.
func TestDecorationGolden(t *testing.T) {
	var b bytes.Buffer
	for _, p := range platforms {
		want := operatorBodies(t, "ingress-host-path", p)
		_, decoration := renderCase(t, "ingress-host-path", p, want)
		ids := make([]string, 0, len(decoration))
		for id := range decoration {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			fmt.Fprintf(&b, "# %s: %s\n", p, id)
			manifest.Encode(&b, map[string]any{"annotations": decoration[id]})
		}
	}
	golden.Assert(t, "testdata/decoration.golden.yaml", b.Bytes())
}

func TestSplitDecoration(t *testing.T) {
	m := map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		"wavesmith.io/apply-order":                   "0",
		"argocd.argoproj.io/sync-wave":               "0",
		"kustomize.toolkit.fluxcd.io/ssa":            "Merge",
		"nginx.ingress.kubernetes.io/rewrite-target": "/$2",
	}}}
	got := splitDecoration(m)
	want := map[string]any{"wavesmith.io/apply-order": "0", "argocd.argoproj.io/sync-wave": "0", "kustomize.toolkit.fluxcd.io/ssa": "Merge"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("taken away, -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"nginx.ingress.kubernetes.io/rewrite-target": "/$2"}}}, m); diff != "" {
		t.Errorf("left, -want +got:\n%s", diff)
	}
}
