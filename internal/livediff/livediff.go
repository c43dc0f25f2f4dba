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
