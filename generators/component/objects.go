package component

import (
	"fmt"
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/kindscope"
	"github.com/wavesmith/wavesmith/manifest"
)

// SetNamespaces gives namespaced objects without a namespace the placement
// namespace. The scope of a kind comes from the Component's spec.scopes,
// then the CRDs among objs, then table (nil: the built-in kinds). An
// object of a kind none of them knows is placed in the namespace, as
// kubectl assumes, with a warning saying how to declare its scope.
func SetNamespaces(spec *manifest.Object, c *v1alpha1.Component, objs []*manifest.Object, namespace string, table *kindscope.Table) []manifest.Warning {
	t := table.Clone()
	t.LearnCRDs(objs)
	for _, s := range c.Spec.Scopes {
		t.Set(kindscope.GroupKind{Group: s.Group, Kind: s.Kind}, s.Scope == v1alpha1.ScopeNamespaced)
	}
	var warns []manifest.Warning
	unknown := map[kindscope.GroupKind]bool{}
	for _, o := range objs {
		if o.Namespace() != "" {
			continue
		}
		namespaced, known := t.Namespaced(o.Group(), o.Kind())
		if !known {
			gk := kindscope.GroupKind{Group: o.Group(), Kind: o.Kind()}
			if !unknown[gk] {
				unknown[gk] = true
				warns = append(warns, spec.Warn("spec.scopes", fmt.Sprintf(
					"the scope of %s (%s) is unknown: not a built-in kind, no CRD in the render, not declared; its objects are placed in namespace %q, as kubectl assumes. If it is cluster-scoped, say so in spec.scopes ({group: %s, kind: %s, scope: Cluster}) or with --api-resources FILE (kubectl api-resources output)",
					gk, o.Key(), namespace, o.Group(), o.Kind())))
			}
			namespaced = true
		}
		if namespaced {
			o.SetNamespace(namespace)
		}
	}
	return warns
}

// Defaults returns the lifecycle defaults a Component sets for its
// objects: spec.policies. Its status hints are applied by StatusHints;
// its spec.wave reaches the engine's wave plan through Generator.Wave
// (generators.Waver), never as a string.
func Defaults(c *v1alpha1.Component) map[string]string {
	d := map[string]string{}
	if p := c.Spec.Policies; p != nil {
		for k, v := range map[string]string{inventory.AdoptionPolicy: p.Adoption, inventory.UpdatePolicy: p.Update, inventory.DeletePolicy: p.Delete, inventory.ReconcilePolicy: p.Reconcile} {
			if v != "" {
				d[k] = v
			}
		}
	}
	return d
}

// StatusHints writes spec.statusHints on the objects of the matching kind
// that do not carry a hint of their own.
func StatusHints(c *v1alpha1.Component, objs []*manifest.Object) {
	for _, h := range c.Spec.StatusHints {
		for _, o := range objs {
			if o.Kind() == h.Kind && (h.Group == "" || h.Group == o.Group()) {
				if _, ok := o.Annotation(inventory.StatusHint); !ok {
					o.SetAnnotation(inventory.StatusHint, h.Hint)
				}
			}
		}
	}
}

// CheckNoNativeAnnotations refuses objects from a chart or kustomization
// that set wavesmith.io/* annotations themselves, as component-operator-
// runtime refuses its own prefix in Helm charts. allowed names exceptions.
func CheckNoNativeAnnotations(o *manifest.Object, allowed ...string) error {
	for k := range o.Annotations() {
		if !strings.HasPrefix(k, inventory.Prefix) {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return o.FieldError(manifest.KeyPath("metadata.annotations", k), errNative)
		}
	}
	return nil
}
