package livediff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
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
	"github.com/wavesmith/wavesmith/gitops/argocd"
	"github.com/wavesmith/wavesmith/gitops/flux"
	"github.com/wavesmith/wavesmith/internal/textdiff"
	"github.com/wavesmith/wavesmith/manifest"
)

// FieldManager is the default server-side apply field manager of the dry
// runs. It owns nothing in a cluster, so a field the render stopped setting
// is never shown as removed: give the applier's manager (Options.FieldManager)
// for that.
const FieldManager = "wavesmith-diff"

// The field managers of the GitOps engines wavesmith renders for, as they
// apply server-side.
const (
	// FluxFieldManager is Flux's kustomize-controller (its controller name,
	// the field manager of its server-side applies).
	FluxFieldManager = "kustomize-controller"
	// ArgoCDFieldManager is Argo CD's application controller when it syncs
	// with ServerSideApply=true (Argo CD's ArgoCDSSAManager).
	ArgoCDFieldManager = "argocd-controller"
)

// Defaults of Options.
const (
	DefaultQPS     = 500
	DefaultWorkers = 32
)

// Errors the comparison wraps, for errors.Is.
var (
	// ErrCluster: the cluster could not be reached, or refused the
	// credentials.
	ErrCluster = errors.New("the cluster could not be used")
	// ErrNoKind: the cluster has no such kind and the render does not
	// define it.
	ErrNoKind = errors.New("unknown kind")
	// ErrVersionNotServed: the kind exists, but not in the object's
	// version.
	ErrVersionNotServed = errors.New("version not served")
	// ErrNoNamespace: the object's namespace does not exist and the
	// render does not create it.
	ErrNoNamespace = errors.New("namespace does not exist")
	// ErrImmutable: applying in place would fail on an immutable field
	// and nothing says the applier may delete and re-create the object.
	ErrImmutable = errors.New("immutable field changed")
)

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
	// FieldManager of the dry runs (default FieldManager). The applier's
	// manager shows the fields the render stopped setting as removed.
	FieldManager string
	// SkipHooks leaves hooks out (objects marked wavesmith.io/hook or
	// argocd.argoproj.io/hook), as Argo CD does: it runs them on sync and
	// may delete them after, so they are not state to compare.
	SkipHooks bool
	// SpecKinds are the kinds of the specs wavesmith renders. The live
	// specs of these kinds that carry an inventory, in the namespaces the
	// render covers, and that the render no longer has, are shown as
	// pruned with their children.
	SpecKinds []schema.GroupKind
	// Workers is how many objects are compared at once (default
	// DefaultWorkers).
	Workers int
	// QPS and Burst limit the requests to the API server (default
	// DefaultQPS, and twice the QPS). A negative QPS disables the limit.
	QPS   float32
	Burst int
	// Progress, if set, is called after each object with how many are done.
	Progress func(done, total int)
}

// Action is what applying would do to an object.
type Action string

// Actions.
const (
	Create Action = "new"
	Update Action = "changed"
	// Replace: the API server refuses to update the object in place (an
	// immutable field changed); the applier deletes and re-creates it.
	Replace Action = "replaced"
	// Prune: the object is no longer rendered and a pruning applier
	// deletes it: a live spec's inventory lists it, or it is a live spec
	// the render no longer has.
	Prune Action = "pruned"
	// Keep: no longer rendered, but marked never to be pruned: it stays,
	// unmanaged. Not a change to the cluster.
	Keep Action = "kept"
)

// Change is an object applying would create, change, replace or prune, or
// one that is no longer rendered and kept.
type Change struct {
	Key    manifest.Key
	Action Action
	// Unchecked says why the API server could not dry-run the object
	// (what it needs is created by the same render, or it must be
	// replaced); empty when it did.
	Unchecked string
	// Diff is the unified diff from the live object to the object after
	// applying, headed by the object's Kind/namespace/name. Empty for Keep.
	Diff string
	// Reason says, for Keep, which annotation keeps the object, and for
	// Prune, which live spec lists it.
	Reason string
}

// Result is what a comparison found.
type Result struct {
	// Changes in the render's order, then the pruned and kept objects
	// sorted by identity.
	Changes []Change
	// Hooks are the rendered hooks left out (Options.SkipHooks).
	Hooks []manifest.Key
}

// Diff compares objs, in their order, with the cluster cfg reaches. It
// returns what applying would change and, as manifest.Errors in input
// order, what could not be compared; a cluster that cannot be reached or
// refuses the credentials is one error wrapping ErrCluster.
func Diff(ctx context.Context, cfg *rest.Config, objs []Object, opts Options) (*Result, error) {
	cfg = rest.CopyConfig(cfg)
	switch {
	case opts.QPS < 0:
		cfg.QPS, cfg.Burst = -1, 0
	case opts.QPS > 0:
		cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	default:
		cfg.QPS, cfg.Burst = DefaultQPS, opts.Burst
	}
	if cfg.Burst <= 0 && cfg.QPS > 0 {
		cfg.Burst = int(2 * cfg.QPS)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, mark(ErrCluster, fmt.Errorf("connecting to the cluster: %w", err))
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, mark(ErrCluster, fmt.Errorf("connecting to the cluster: %w", err))
	}
	if _, err := dc.ServerVersion(); err != nil {
		return nil, clusterError(cfg.Host, err)
	}
	d := &differ{
		dyn:        dyn,
		mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		namespace:  opts.Namespace,
		manager:    opts.FieldManager,
		namespaces: map[string]bool{},
		kinds:      map[schema.GroupKind][]string{},
		listed:     map[string]listedEntry{},
		nsState:    map[string]*nsCheck{},
	}
	if d.namespace == "" {
		d.namespace = metav1.NamespaceDefault
	}
	if d.manager == "" {
		d.manager = FieldManager
	}
	res := &Result{}
	us := make([]*unstructured.Unstructured, len(objs))
	var errs manifest.Errors
	var todo []int
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
		if opts.SkipHooks && isHook(u.GetAnnotations()) {
			res.Hooks = append(res.Hooks, o.Key)
			continue
		}
		todo = append(todo, i)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	d.planLists(us, todo)
	changes := make([]*Change, len(objs))
	failed := make([]error, len(objs))
	workers := opts.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	workers = max(1, min(workers, len(todo)))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var done atomic.Int64
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					continue
				}
				changes[i], failed[i] = d.one(ctx, objs[i].Key, us[i])
				if errors.Is(failed[i], ErrCluster) {
					cancel(failed[i]) // every other request would fail the same way
				}
				if opts.Progress != nil {
					opts.Progress(int(done.Add(1)), len(todo))
				}
			}
		}()
	}
	for _, i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrCluster) {
		return nil, cause
	}
	for i := range objs {
		if failed[i] != nil {
			errs = append(errs, failed[i])
		}
		if changes[i] != nil {
			res.Changes = append(res.Changes, *changes[i])
		}
	}
	if err := d.removedSpecs(ctx, us, opts.SpecKinds); err != nil {
		errs = append(errs, err)
	}
	pruned, perrs := d.prunes(ctx, us, opts.SkipHooks)
	res.Changes = append(res.Changes, pruned...)
	errs = append(errs, perrs...)
	if len(errs) > 0 {
		return res, errs
	}
	return res, nil
}

// marked is an error that errors.Is matches with a sentinel its message
// does not repeat.
type marked struct {
	error
	sentinel error
}

func (m marked) Unwrap() error        { return m.error }
func (m marked) Is(target error) bool { return target == m.sentinel }
func mark(sentinel, err error) error  { return marked{err, sentinel} }

// clusterError explains a failure to use the cluster at host.
func clusterError(host string, err error) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return mark(ErrCluster, fmt.Errorf("the cluster at %s refused the credentials (401 Unauthorized): %w", host, err))
	case apierrors.IsForbidden(err):
		return mark(ErrCluster, fmt.Errorf("the cluster at %s refused access (403 Forbidden): %w", host, err))
	}
	return mark(ErrCluster, fmt.Errorf("reaching the cluster at %s: %w", host, err))
}

// isHook reports whether annotations mark a hook.
func isHook(ann map[string]string) bool {
	_, w := ann[inventory.Hook]
	_, a := ann[argocd.Hook]
	return w || a
}

type differ struct {
	mu sync.Mutex
	// listed are the objects no longer rendered candidates for pruning:
	// the children the live specs' inventories list, and the live specs
	// the render no longer has.
	listed  map[string]listedEntry
	dyn     dynamic.Interface
	mapper  meta.RESTMapper
	manager string
	// namespace for namespaced objects without one.
	namespace string
	// namespaces the render itself creates, and the versions each kind
	// whose CRD the render itself creates serves.
	namespaces map[string]bool
	kinds      map[schema.GroupKind][]string
	// nsState caches whether a namespace exists.
	nsState map[string]*nsCheck
	// lists are the live objects of the resources and namespaces the
	// render has many objects in, read with one paginated LIST each
	// instead of a GET per object.
	lists map[listKey]*liveList
}

type listKey struct {
	resource  schema.GroupVersionResource
	namespace string
}

type liveList struct {
	once  sync.Once
	items map[string]*unstructured.Unstructured
	err   error
}

// listThreshold is how many rendered objects of one resource in one
// namespace make one LIST cheaper than a GET each.
const listThreshold = 50

// planLists finds the resources and namespaces with at least listThreshold
// rendered objects.
func (d *differ) planLists(us []*unstructured.Unstructured, todo []int) {
	count := map[listKey]int{}
	for _, i := range todo {
		gvk := us[i].GroupVersionKind()
		m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue
		}
		k := listKey{resource: m.Resource}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			k.namespace = us[i].GetNamespace()
			if k.namespace == "" {
				k.namespace = d.namespace
			}
		}
		count[k]++
	}
	d.lists = map[listKey]*liveList{}
	for k, n := range count {
		if n >= listThreshold {
			d.lists[k] = &liveList{}
		}
	}
}

// get reads a live object: from its resource's LIST when planned (a failed
// LIST falls back to a GET), else with a GET. Absent is nil, nil.
func (d *differ) get(ctx context.Context, ri dynamic.ResourceInterface, k listKey, name string) (*unstructured.Unstructured, error) {
	if l := d.lists[k]; l != nil {
		l.once.Do(func() {
			items := map[string]*unstructured.Unstructured{}
			opts := metav1.ListOptions{Limit: 500}
			for {
				list, err := ri.List(ctx, opts)
				if err != nil {
					l.err = err
					return
				}
				for i := range list.Items {
					items[list.Items[i].GetName()] = &list.Items[i]
				}
				if opts.Continue = list.GetContinue(); opts.Continue == "" {
					break
				}
			}
			l.items = items
		})
		if l.err == nil {
			if live := l.items[name]; live != nil {
				return live.DeepCopy(), nil
			}
			return nil, nil
		}
	}
	live, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

type nsCheck struct {
	once   sync.Once
	exists bool
	err    error
}

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// namespaceExists asks the API server once per namespace.
func (d *differ) namespaceExists(ctx context.Context, ns string) (bool, error) {
	d.mu.Lock()
	c := d.nsState[ns]
	if c == nil {
		c = &nsCheck{}
		d.nsState[ns] = c
	}
	d.mu.Unlock()
	c.once.Do(func() {
		_, err := d.dyn.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{})
		switch {
		case err == nil:
			c.exists = true
		case apierrors.IsNotFound(err):
		default:
			c.err = err
		}
	})
	return c.exists, c.err
}

// creates records the Namespace or the kind u creates.
func (d *differ) creates(u *unstructured.Unstructured) {
	gvk := u.GroupVersionKind()
	switch gvk.GroupKind() {
	case schema.GroupKind{Kind: "Namespace"}:
		d.namespaces[u.GetName()] = true
	case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		var served []string
		for _, v := range versions {
			m, _ := v.(map[string]any)
			if name, _ := m["name"].(string); name != "" && m["served"] == true {
				served = append(served, name)
			}
		}
		d.kinds[schema.GroupKind{Group: group, Kind: kind}] = served
	}
}

// noMatch explains why the kind of u at its version cannot be mapped: the
// CRD of the same render creates it (a new object, not checked), or an
// error naming the versions served.
func (d *differ) noMatch(key manifest.Key, u *unstructured.Unstructured) (*Change, error) {
	gvk := u.GroupVersionKind()
	gk := gvk.GroupKind()
	if served, ok := d.kinds[gk]; ok {
		if slices.Contains(served, gvk.Version) {
			return created(key, u, "its CustomResourceDefinition is created by this render")
		}
		return nil, mark(ErrVersionNotServed, fmt.Errorf("%s: apiVersion %s is not served: the CustomResourceDefinition of this render serves %s in %s", key, gvk.GroupVersion(), gk, versionList(served)))
	}
	if ms, err := d.mapper.RESTMappings(gk); err == nil && len(ms) > 0 {
		var served []string
		for _, m := range ms {
			served = append(served, m.GroupVersionKind.Version)
		}
		return nil, mark(ErrVersionNotServed, fmt.Errorf("%s: apiVersion %s is not served: the cluster serves %s in %s", key, gvk.GroupVersion(), gk, versionList(served)))
	}
	return nil, mark(ErrNoKind, fmt.Errorf("%s: the cluster has no kind %s in %s: install its CustomResourceDefinition first", key, gvk.Kind, gvk.GroupVersion()))
}

func versionList(vs []string) string {
	if len(vs) == 0 {
		return "no version"
	}
	vs = slices.Clone(vs)
	sort.Strings(vs)
	vs = slices.Compact(vs)
	return strings.Join(vs, ", ") + " only"
}

// one compares one object; nil when applying would change nothing.
func (d *differ) one(ctx context.Context, key manifest.Key, u *unstructured.Unstructured) (*Change, error) {
	gvk := u.GroupVersionKind()
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return d.noMatch(key, u)
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
		if d.namespaces[ns] {
			// The render creates it: when it does not exist yet, neither
			// does anything in it, and the server cannot dry-run.
			exists, err := d.namespaceExists(ctx, ns)
			if err != nil {
				return nil, d.requestError(key, "reading its namespace", err)
			}
			if !exists {
				return created(key, u, "its Namespace is created by this render")
			}
		}
	} else if ns != "" {
		u.SetNamespace("")
	}
	name := u.GetName()
	lk := listKey{resource: m.Resource}
	if namespaced {
		lk.namespace = ns
	}
	live, err := d.get(ctx, ri, lk, name)
	if err != nil {
		return nil, d.requestError(key, "reading the live object", err)
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	force := true
	merged, err := ri.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{
		DryRun: []string{metav1.DryRunAll}, FieldManager: d.manager, Force: &force,
	})
	if err != nil {
		if live == nil && namespaced && apierrors.IsNotFound(err) {
			exists, nerr := d.namespaceExists(ctx, ns)
			if nerr == nil && !exists {
				return nil, mark(ErrNoNamespace, fmt.Errorf("%s: namespace %q does not exist and the render does not create it", key, ns))
			}
		}
		if fields := immutableFields(err); live != nil && len(fields) > 0 {
			d.recordInventory(key, live)
			return d.replaced(key, u, live, fields)
		}
		return nil, d.requestError(key, "dry-run apply", err)
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

// requestError names the object and what failed; a refusal of the
// credentials or a lost connection wraps ErrCluster.
func (d *differ) requestError(key manifest.Key, what string, err error) error {
	if apierrors.IsUnauthorized(err) || isConnection(err) {
		return mark(ErrCluster, fmt.Errorf("%s: %s: %w", key, what, err))
	}
	return fmt.Errorf("%s: %s: %w", key, what, err)
}

// isConnection reports whether err is a failure to reach the server rather
// than an answer from it.
func isConnection(err error) bool {
	var status apierrors.APIStatus
	return !errors.As(err, &status) && !errors.Is(err, context.Canceled)
}

// immutableFields returns the fields an Invalid error says are immutable.
func immutableFields(err error) []string {
	if !apierrors.IsInvalid(err) {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		if strings.HasSuffix(c.Message, validation.FieldImmutableErrorMsg) {
			fields = append(fields, c.Field)
		}
	}
	return fields
}

// recreates reports whether the object's annotations let its applier
// delete and re-create it when an update in place is refused:
// wavesmith.io/update-policy recreate, Argo CD's Force=true sync option,
// Flux's force: enabled.
func recreates(ann map[string]string) bool {
	if ann[inventory.UpdatePolicy] == inventory.UpdateRecreate || strings.EqualFold(ann[flux.ForceAnnotation], "enabled") {
		return true
	}
	return hasSyncOption(ann, "Force=true")
}

func hasSyncOption(ann map[string]string, opt string) bool {
	for _, o := range strings.Split(ann[argocd.SyncOptions], ",") {
		if strings.TrimSpace(o) == opt {
			return true
		}
	}
	return false
}

// replaced is an object the server refused to update in place: its diff
// is the live object with the rendered fields laid over it (the server
// cannot dry-run a delete and create). Without a recreate policy it is
// also an error: the apply would fail.
func (d *differ) replaced(key manifest.Key, u, live *unstructured.Unstructured, fields []string) (*Change, error) {
	sort.Strings(fields)
	after := overlay(Clean(live.Object), u.Object)
	why := "immutable " + strings.Join(fields, ", ") + " changed"
	ch, err := change(key, Replace, why, live.Object, after)
	if err != nil || ch == nil {
		return ch, err
	}
	if !recreates(u.GetAnnotations()) {
		return ch, mark(ErrImmutable, fmt.Errorf("%s: %s: %s: applying in place would fail; %s: %s deletes and re-creates it", key, strings.Join(fields, ", "), validation.FieldImmutableErrorMsg, inventory.UpdatePolicy, inventory.UpdateRecreate))
	}
	return ch, nil
}

// overlay returns base with over laid on it: maps merge key by key, lists
// of named maps merge by name, lists of maps of the same length by index,
// anything else is over's.
func overlay(base, over map[string]any) map[string]any {
	out := deepCopy(base)
	for k, v := range over {
		out[k] = overlayValue(out[k], v)
	}
	return out
}

func overlayValue(base, over any) any {
	switch o := over.(type) {
	case map[string]any:
		if b, ok := base.(map[string]any); ok {
			return overlay(b, o)
		}
	case []any:
		b, ok := base.([]any)
		if !ok {
			break
		}
		if byName, ok := namedItems(b); ok {
			if _, ok := namedItems(o); ok {
				out := make([]any, len(o))
				for i, item := range o {
					m := item.(map[string]any)
					if prev, ok := byName[m["name"].(string)]; ok {
						out[i] = overlay(prev, m)
					} else {
						out[i] = manifest.DeepCopyValue(m)
					}
				}
				return out
			}
		}
		if len(b) == len(o) {
			out := make([]any, len(o))
			for i := range o {
				out[i] = overlayValue(b[i], o[i])
			}
			return out
		}
	}
	return manifest.DeepCopyValue(over)
}

// namedItems indexes a list whose items are all maps with a string name.
func namedItems(l []any) (map[string]map[string]any, bool) {
	out := map[string]map[string]any{}
	for _, item := range l {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		name, ok := m["name"].(string)
		if !ok {
			return nil, false
		}
		out[name] = m
	}
	return out, len(l) > 0
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
	switch {
	case action == Replace:
		to = key.String() + " (after replace; not checked by the API server: " + unchecked + ")"
	case before == nil:
		from, to = "/dev/null", key.String()+" (new)"
		if unchecked != "" {
			to = key.String() + " (new; not checked by the API server: " + unchecked + ")"
		}
	}
	diff := textdiff.UnifiedDiff(from, to, a, string(b))
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
