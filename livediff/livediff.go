package livediff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/tree"
)

// FieldManager is the server-side apply field manager of the dry runs. A
// cluster whose objects were applied with another manager (Argo CD's
// argocd-controller, Flux's kustomize-controller) still gets a true answer
// for every field the render sets; a field the render no longer sets stays
// owned by that other manager and is not shown as removed.
const FieldManager = "wavesmith-diff"

// Object is one rendered object: its identity and its encoded YAML.
type Object struct {
	Key  manifest.Key
	YAML []byte
}

// Options tune a comparison.
type Options struct {
	// Namespace is used for namespaced objects that have none (the
	// kubeconfig context's namespace, as kubectl would); "default" if empty.
	Namespace string
	// Workers is how many objects are compared at once (default 8).
	Workers int
}

// Action is what applying would do to an object.
type Action string

// Actions.
const (
	Create Action = "new"
	Update Action = "changed"
	// Prune: the live spec's inventory lists the object, the render no
	// longer has it, and it exists: a pruning applier deletes it.
	Prune Action = "pruned"
)

// Change is an object applying would create or change.
type Change struct {
	Key    manifest.Key
	Action Action
	// Unchecked says why the API server could not dry-run the object
	// (what it needs is created by the same render); empty when it did.
	Unchecked string
	// Diff is the unified diff from the live object to the object after
	// applying, headed by the object's Kind/namespace/name.
	Diff string
}

// Diff compares objs, in their order, with the cluster cfg reaches. It
// returns the objects that applying would create or change, in input order,
// and, as manifest.Errors in input order, what could not be compared.
func Diff(ctx context.Context, cfg *rest.Config, objs []Object, opts Options) ([]Change, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	if _, err := dc.ServerVersion(); err != nil {
		return nil, fmt.Errorf("reaching the cluster at %s: %w", cfg.Host, err)
	}
	d := &differ{
		dyn:        dyn,
		mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		namespace:  opts.Namespace,
		namespaces: map[string]bool{},
		kinds:      map[schema.GroupKind]bool{},
		listed:     map[string]listedEntry{},
	}
	if d.namespace == "" {
		d.namespace = metav1.NamespaceDefault
	}
	us := make([]*unstructured.Unstructured, len(objs))
	var errs manifest.Errors
	for i, o := range objs {
		u := &unstructured.Unstructured{}
		j, err := yaml.YAMLToJSON(o.YAML)
		if err == nil {
			err = u.UnmarshalJSON(j) // integers stay int64
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: decoding the rendered object: %w", o.Key, err))
			continue
		}
		us[i] = u
		d.creates(u)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	changes := make([]*Change, len(objs))
	failed := make([]error, len(objs))
	workers := opts.Workers
	if workers <= 0 {
		workers = 8
	}
	workers = min(workers, len(objs), 4*runtime.GOMAXPROCS(0))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				changes[i], failed[i] = d.one(ctx, objs[i].Key, us[i])
			}
		}()
	}
	for i := range objs {
		next <- i
	}
	close(next)
	wg.Wait()
	var out []Change
	for i := range objs {
		if failed[i] != nil {
			errs = append(errs, failed[i])
		}
		if changes[i] != nil {
			out = append(out, *changes[i])
		}
	}
	pruned, perrs := d.prunes(ctx, us)
	out = append(out, pruned...)
	errs = append(errs, perrs...)
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}

type differ struct {
	mu sync.Mutex
	// listed are the children the live specs' inventories list, with the
	// spec that lists each, in the order found.
	listed    map[string]listedEntry
	dyn       dynamic.Interface
	mapper    meta.RESTMapper
	namespace string
	// namespaces and kinds the render itself creates.
	namespaces map[string]bool
	kinds      map[schema.GroupKind]bool
}

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// creates records the Namespace or the kind u creates.
func (d *differ) creates(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	switch gvk.GroupKind() {
	case schema.GroupKind{Kind: "Namespace"}:
		d.namespaces[u.GetName()] = true
	case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		d.kinds[schema.GroupKind{Group: group, Kind: kind}] = true
	}
}

// one compares one object; nil when applying would change nothing.
func (d *differ) one(ctx context.Context, key manifest.Key, u *unstructured.Unstructured) (*Change, error) {
	gvk := u.GroupVersionKind()
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		if d.kinds[gvk.GroupKind()] {
			return created(key, u, "its CustomResourceDefinition is created by this render")
		}
		return nil, fmt.Errorf("%s: the cluster has no kind %s in %s: install its CustomResourceDefinition first", key, gvk.Kind, gvk.GroupVersion())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: finding the resource of kind %s in %s: %w", key, gvk.Kind, gvk.GroupVersion(), err)
	}
	var ri dynamic.ResourceInterface = d.dyn.Resource(m.Resource)
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	ns := u.GetNamespace()
	if namespaced {
		if ns == "" {
			ns = d.namespace
			u.SetNamespace(ns)
		}
		ri = d.dyn.Resource(m.Resource).Namespace(ns)
	} else if ns != "" {
		u.SetNamespace("")
	}
	name := u.GetName()
	live, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		live = nil
	} else if err != nil {
		return nil, fmt.Errorf("%s: reading the live object: %w", key, err)
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	force := true
	merged, err := ri.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{
		DryRun: []string{metav1.DryRunAll}, FieldManager: FieldManager, Force: &force,
	})
	if err != nil {
		if live == nil && namespaced && apierrors.IsNotFound(err) {
			_, nerr := d.dyn.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(nerr) && d.namespaces[ns]:
				return created(key, u, "its Namespace is created by this render")
			case apierrors.IsNotFound(nerr):
				return nil, fmt.Errorf("%s: namespace %q does not exist and the render does not create it", key, ns)
			}
		}
		return nil, fmt.Errorf("%s: dry-run apply: %w", key, err)
	}
	var before map[string]any
	if live != nil {
		before = live.Object
		d.recordInventory(key, live)
	}
	action := Update
	if live == nil {
		action = Create
	}
	return change(key, action, "", before, merged.Object)
}

// created is the change of an object the server could not dry-run: the
// rendered object, new.
func created(key manifest.Key, u *unstructured.Unstructured, why string) (*Change, error) {
	return change(key, Create, why, nil, u.Object)
}

// change diffs before (nil for a new object) with after, both cleaned and
// masked; nil when they are equal.
func change(key manifest.Key, action Action, unchecked string, before, after map[string]any) (*Change, error) {
	after = Clean(after)
	var a string
	if before != nil {
		before = Clean(before)
		MaskSecret(before, after)
		b, err := yaml.Marshal(before)
		if err != nil {
			return nil, fmt.Errorf("%s: encoding the live object: %w", key, err)
		}
		a = string(b)
	} else {
		MaskSecret(nil, after)
	}
	b, err := yaml.Marshal(after)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the applied object: %w", key, err)
	}
	from, to := key.String()+" (live)", key.String()+" (after apply)"
	if before == nil {
		from, to = "/dev/null", key.String()+" (new)"
		if unchecked != "" {
			to = key.String() + " (new; not checked by the API server: " + unchecked + ")"
		}
	}
	diff := tree.UnifiedDiff(from, to, a, string(b))
	if diff == "" {
		return nil, nil
	}
	return &Change{Key: key, Action: action, Unchecked: unchecked, Diff: diff}, nil
}

// lastApplied is kubectl's client-side apply record: a copy of the object
// (Secret values included) that is noise in a diff.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Clean returns a copy of obj without what the server maintains and a
// reader does not need: managedFields, resourceVersion, generation, uid,
// creationTimestamp, status and kubectl's last-applied annotation.
func Clean(obj map[string]any) map[string]any {
	obj = deepCopy(obj)
	delete(obj, "status")
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		return obj
	}
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"} {
		delete(md, f)
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		delete(ann, lastApplied)
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	return obj
}

func deepCopy(obj map[string]any) map[string]any {
	return manifest.DeepCopyValue(obj).(map[string]any)
}

// Sensitive values shown in place of Secret data.
const (
	Sensitive        = "(sensitive)"
	SensitiveChanged = "(sensitive, changed)"
)

// MaskSecret replaces, in place, the values of a core Secret's data and
// stringData: with Sensitive, or on after with SensitiveChanged where the
// value differs from before's (before may be nil: a new Secret). Other
// objects are left alone.
func MaskSecret(before, after map[string]any) {
	if !isSecret(after) || before != nil && !isSecret(before) {
		return
	}
	for _, field := range []string{"data", "stringData"} {
		a, _ := after[field].(map[string]any)
		var b map[string]any
		if before != nil {
			b, _ = before[field].(map[string]any)
		}
		for k, v := range a {
			if old, ok := b[k]; ok && !equalValue(old, v) {
				a[k] = SensitiveChanged
			} else {
				a[k] = Sensitive
			}
		}
		for k := range b {
			b[k] = Sensitive
		}
	}
}

func isSecret(obj map[string]any) bool {
	return obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
}

func equalValue(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return errors.Join(err1, err2) == nil && string(ja) == string(jb)
}

type listedEntry struct {
	entry inventory.Entry
	spec  manifest.Key
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
			d.listed[id] = listedEntry{entry: e, spec: spec}
		}
	}
}

// prunes returns, sorted by identity, the objects a live spec's inventory
// lists that the render no longer has and that exist in the cluster.
func (d *differ) prunes(ctx context.Context, rendered []*unstructured.Unstructured) ([]Change, []error) {
	has := map[string]bool{}
	for _, u := range rendered {
		gvk := u.GroupVersionKind()
		has[identity(gvk.Group, gvk.Kind, u.GetNamespace(), u.GetName())] = true
	}
	var ids []string
	for id := range d.listed {
		if !has[id] {
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
			errs = append(errs, fmt.Errorf("%s (listed by %s): finding its resource: %w", key, l.spec, err))
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
			errs = append(errs, fmt.Errorf("%s (listed by %s): reading the live object: %w", key, l.spec, err))
			continue
		}
		before := Clean(live.Object)
		MaskSecret(before, deepCopy(before))
		b, err := yaml.Marshal(before)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: encoding the live object: %w", key, err))
			continue
		}
		diff := tree.UnifiedDiff(key.String()+" (live; listed by "+l.spec.String()+", no longer rendered)", "/dev/null", string(b), "")
		out = append(out, Change{Key: key, Action: Prune, Diff: diff})
	}
	return out, errs
}
