package render

import (
	"testing"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestSpecDigest: with reconcile-policy on-object-or-component-change,
// every child carries its spec's digest, the same for one spec's
// children and another for another spec's; a change of a spec's field
// changes its children's digest only. Without the policy (or with
// another of its own: hooks), no child carries one.
func TestSpecDigest(t *testing.T) {
	render := func(policy string, edit func([]*manifest.Object)) map[string]map[string]string {
		t.Helper()
		var defaults map[string]string
		if policy != "" {
			defaults = map[string]string{inventory.ReconcilePolicy: policy}
		}
		res := renderExamplesWith(t, Options{Platform: generators.Kubernetes, Defaults: defaults}, edit)
		digests := map[string]map[string]string{} // spec -> child -> digest
		for _, it := range res.Items {
			if it.Role != Child {
				continue
			}
			spec := res.Specs[it.Spec].Key.String()
			if digests[spec] == nil {
				digests[spec] = map[string]string{}
			}
			d, _ := it.Object.Annotation(inventory.SpecDigest)
			if it.lc.Reconcile != inventory.ReconcileOnObjectOrComponentChange {
				if d != "" {
					t.Errorf("%s, reconcile-policy %q, carries a spec digest", it.Key, it.lc.Reconcile)
				}
				continue // a hook, say: its own policy
			}
			digests[spec][it.Key.String()] = d
		}
		return digests
	}
	for spec, children := range render("", nil) {
		for child, d := range children {
			if d != "" {
				t.Errorf("no policy: %s of %s carries a spec digest", child, spec)
			}
		}
	}
	one := func(children map[string]string) string {
		d := ""
		for child, c := range children {
			if c == "" || d != "" && c != d {
				t.Errorf("%s: spec digest %q, want its spec's, one for all its children", child, c)
			}
			d = c
		}
		return d
	}
	before := render(inventory.ReconcileOnObjectOrComponentChange, nil)
	seen := map[string]string{}
	for spec, children := range before {
		d := one(children)
		if other, ok := seen[d]; ok {
			t.Errorf("%s and %s share the spec digest %s", spec, other, d)
		}
		seen[d] = spec
	}
	const edited = "Kaoto.designer.kaoto.io/demo/designer"
	after := render(inventory.ReconcileOnObjectOrComponentChange, func(objs []*manifest.Object) {
		for _, o := range objs {
			if o.Key().String() == edited {
				o.Map["spec"].(map[string]any)["image"] = "quay.io/kaotoio/kaoto-app:9.9.9"
			}
		}
	})
	if _, ok := before[edited]; !ok {
		t.Fatalf("no spec %s among %v", edited, before)
	}
	for spec, children := range after {
		if changed := one(children) != one(before[spec]); changed != (spec == edited) {
			t.Errorf("%s: spec digest changed %v after %s changed", spec, changed, edited)
		}
	}
}
