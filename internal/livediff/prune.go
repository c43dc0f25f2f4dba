package livediff

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/gitops/argocd"
	"github.com/wavesmith/wavesmith/gitops/flux"
	"github.com/wavesmith/wavesmith/internal/textdiff"
	"github.com/wavesmith/wavesmith/manifest"
)

type listedEntry struct {
	entry inventory.Entry
	// by is what makes it a candidate: "listed by <spec>", or "a spec"
	// (itself no longer rendered).
	by string
}

// identity names an object whatever its version: group/Kind/namespace/name.
func identity(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}

// recordInventory keeps the children the live spec's inventory lists (a
// spec wavesmith rendered carries wavesmith.io/inventory). An inventory
// that does not parse is ignored: it was not written by wavesmith.
func (d *differ) recordInventory(spec manifest.Key, live *unstructured.Unstructured) {
	v, ok := live.GetAnnotations()[inventory.Inventory]
	if !ok {
		return
	}
	entries, err := inventory.Parse(v)
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range entries {
		id := identity(e.Group, e.Kind, e.Namespace, e.Name)
		if _, seen := d.listed[id]; !seen {
			d.listed[id] = listedEntry{entry: e, by: "listed by " + spec.String()}
		}
	}
}

// keptBy returns the annotation that keeps an object a pruning applier
// would otherwise delete, as "name: value"; empty if none does.
func keptBy(ann map[string]string) string {
	switch p := ann[inventory.DeletePolicy]; p {
	case inventory.DeleteOrphan, inventory.DeleteOrphanOnApply:
		return inventory.DeletePolicy + ": " + p
	}
	if hasSyncOption(ann, "Prune=false") {
		return argocd.SyncOptions + ": " + ann[argocd.SyncOptions]
	}
	if v := ann[flux.PruneAnnotation]; strings.EqualFold(v, "disabled") {
		return flux.PruneAnnotation + ": " + v
	}
	if v := ann["helm.sh/resource-policy"]; v == "keep" {
		return "helm.sh/resource-policy: keep"
	}
	return ""
}

// removedSpecs records, as candidates for pruning, the live specs of
// kinds (those carrying an inventory, written by a render) in the
// namespaces the rendered objects occupy that the render no longer has,
// with the children their inventories list. When the live specs the
// render still has were applied by a GitOps engine that labels what it
// applies (Flux's Kustomization name, Argo CD's tracking id), only specs
// the same owner applied are candidates, and then in every namespace:
// a spec removed with the last object of its namespace is found too.
func (d *differ) removedSpecs(ctx context.Context, rendered []*unstructured.Unstructured, kinds []schema.GroupKind) error {
	if len(kinds) == 0 {
		return nil
	}
	has := map[string]bool{}
	covered := map[string]bool{}
	for _, u := range rendered {
		gvk := u.GroupVersionKind()
		has[identity(gvk.Group, gvk.Kind, u.GetNamespace(), u.GetName())] = true
		if ns := u.GetNamespace(); ns != "" {
			covered[ns] = true
		}
	}
	namespaces := make([]string, 0, len(covered))
	for ns := range covered {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	var candidates, kept []unstructured.Unstructured
	for _, gk := range kinds {
		m, err := d.mapper.RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue // not installed: no live spec of this kind
		}
		if err != nil {
			return fmt.Errorf("listing the live %s specs: %w", gk, err)
		}
		scopes := namespaces
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			scopes = []string{""}
		}
		for _, ns := range scopes {
			var ri dynamic.ResourceInterface = d.dyn.Resource(m.Resource)
			if ns != "" {
				ri = d.dyn.Resource(m.Resource).Namespace(ns)
			}
			list, err := ri.List(ctx, metav1.ListOptions{})
			if apierrors.IsNotFound(err) {
				continue // the namespace does not exist yet
			}
			if err != nil {
				return d.requestError(manifest.Key{Group: gk.Group, Kind: gk.Kind, Namespace: ns}, "listing the live specs", err)
			}
			for _, item := range list.Items {
				if _, ok := item.GetAnnotations()[inventory.Inventory]; !ok {
					continue
				}
				gvk := item.GroupVersionKind()
				if has[identity(gvk.Group, gvk.Kind, item.GetNamespace(), item.GetName())] {
					kept = append(kept, item)
				} else {
					candidates = append(candidates, item)
				}
			}
		}
	}
	owners := map[string]bool{}
	for _, k := range kept {
		owners[owner(&k)] = true
	}
	if len(owners) == 1 {
		for only := range owners {
			if only == "" {
				break
			}
			// One GitOps application applied every live spec the render
			// still has: its specs in namespaces the render no longer
			// touches at all are no longer rendered either.
			more, err := d.ownedElsewhere(ctx, kinds, covered, has, only)
			if err != nil {
				return err
			}
			candidates = append(candidates, more...)
		}
	}
	for _, c := range candidates {
		if len(owners) == 1 && !owners[owner(&c)] {
			continue // applied by another Kustomization or Application
		}
		gvk := c.GroupVersionKind()
		key := manifest.Key{Group: gvk.Group, Kind: gvk.Kind, Namespace: c.GetNamespace(), Name: c.GetName()}
		d.mu.Lock()
		d.listed[identity(gvk.Group, gvk.Kind, c.GetNamespace(), c.GetName())] = listedEntry{
			entry: inventory.Entry{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: c.GetNamespace(), Name: c.GetName()},
			by:    "a spec",
		}
		d.mu.Unlock()
		d.recordInventory(key, &c)
	}
	return nil
}

// ownedElsewhere lists, in every namespace, the live specs of kinds that
// the application only applied, outside the namespaces covered and not
// among the rendered (has). A cluster that does not let the user list
// them everywhere (403) leaves them out: the namespaces covered were
// searched already.
func (d *differ) ownedElsewhere(ctx context.Context, kinds []schema.GroupKind, covered, has map[string]bool, only string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, gk := range kinds {
		m, err := d.mapper.RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing the live %s specs: %w", gk, err)
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			continue // cluster-scoped kinds were listed whole already
		}
		list, err := d.dyn.Resource(m.Resource).List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) {
			continue
		}
		if err != nil {
			return nil, d.requestError(manifest.Key{Group: gk.Group, Kind: gk.Kind}, "listing the live specs", err)
		}
		for _, item := range list.Items {
			gvk := item.GroupVersionKind()
			if covered[item.GetNamespace()] || has[identity(gvk.Group, gvk.Kind, item.GetNamespace(), item.GetName())] || owner(&item) != only {
				continue
			}
			if _, ok := item.GetAnnotations()[inventory.Inventory]; ok {
				out = append(out, item)
			}
		}
	}
	return out, nil
}

// owner is what identifies the GitOps application that applied obj:
// Flux's Kustomization labels, else the application of Argo CD's tracking
// id; empty if none. (Not app.kubernetes.io/instance, which Argo CD's label
// tracking uses: wavesmith sets it on every object.)
func owner(obj *unstructured.Unstructured) string {
	l := obj.GetLabels()
	if n := l[flux.NameLabel]; n != "" {
		return "flux:" + l[flux.NamespaceLabel] + "/" + n
	}
	if t := obj.GetAnnotations()[argocd.TrackingID]; t != "" {
		app, _, _ := strings.Cut(t, ":")
		return "argocd:" + app
	}
	return ""
}

// prunes returns, sorted by identity, the candidates for pruning the
// render no longer has that exist in the cluster: as Prune, or as Keep
// when an annotation keeps them.
func (d *differ) prunes(ctx context.Context, rendered []*unstructured.Unstructured, skipHooks bool) ([]Change, []error) {
	has := map[string]bool{}
	for _, u := range rendered {
		gvk := u.GroupVersionKind()
		has[identity(gvk.Group, gvk.Kind, u.GetNamespace(), u.GetName())] = true
	}
	var ids []string
	for id, l := range d.listed {
		if !has[id] && !(skipHooks && l.entry.Hook != "") {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var out []Change
	var errs []error
	for _, id := range ids {
		l := d.listed[id]
		e := l.entry
		key := manifest.Key{Group: e.Group, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}
		m, err := d.mapper.RESTMapping(schema.GroupKind{Group: e.Group, Kind: e.Kind}, e.Version)
		if meta.IsNoMatchError(err) {
			continue // its kind is gone: so is the object
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): finding its resource: %w", key, l.by, err))
			continue
		}
		var ri dynamic.ResourceInterface = d.dyn.Resource(m.Resource)
		if e.Namespace != "" {
			ri = d.dyn.Resource(m.Resource).Namespace(e.Namespace)
		}
		live, err := ri.Get(ctx, e.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, d.requestError(key, "("+l.by+") reading the live object", err))
			continue
		}
		if why := keptBy(live.GetAnnotations()); why != "" {
			out = append(out, Change{Key: key, Action: Keep, Reason: why})
			continue
		}
		before := Clean(live.Object)
		MaskSecret(before, deepCopy(before))
		b, err := yaml.Marshal(before)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: encoding the live object: %w", key, err))
			continue
		}
		diff := textdiff.UnifiedDiff(key.String()+" (live; "+l.by+", no longer rendered)", "/dev/null", string(b), "")
		out = append(out, Change{Key: key, Action: Prune, Diff: diff, Reason: l.by})
	}
	return out, errs
}
