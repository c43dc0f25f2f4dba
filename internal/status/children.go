package status

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/wavesmith/wavesmith/api/inventory"
)

// observed is one inventory entry and what the controller saw of it.
type observed struct {
	Entry   inventory.Entry
	Object  *unstructured.Unstructured // nil when not found or not read
	Health  string
	Message string
}

// owner names a spec: its kind and namespaced name.
type owner struct {
	kind string
	key  types.NamespacedName
}

type childKey struct {
	gk              schema.GroupKind
	namespace, name string
}

// children reads the children of specs from the manager's cache, starts a
// watch on each child kind the first time one is needed, and maps child
// events back to the specs whose inventories list them.
type children struct {
	cache  cache.Cache
	reader client.Reader

	mu          sync.Mutex
	owners      map[childKey]map[owner]struct{}
	byOwner     map[owner][]childKey
	watched     map[schema.GroupVersionKind]bool
	controllers map[string]controller.Controller // by owner kind
	// noWatches leaves child kinds unwatched (a test's control).
	noWatches bool
}

func newChildren(c cache.Cache, reader client.Reader) *children {
	return &children{
		cache: c, reader: reader,
		owners:      map[childKey]map[owner]struct{}{},
		byOwner:     map[owner][]childKey{},
		watched:     map[schema.GroupVersionKind]bool{},
		controllers: map[string]controller.Controller{},
	}
}

// register adds the controller of an owner kind; child events of watched
// kinds are sent to it.
func (c *children) register(kind string, ctrl controller.Controller) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.controllers[kind] = ctrl
}

// track records that o lists entries, replacing what it listed before.
func (c *children) track(o owner, entries []inventory.Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(o)
	keys := make([]childKey, 0, len(entries))
	for _, e := range entries {
		k := childKey{gk: schema.GroupKind{Group: e.Group, Kind: e.Kind}, namespace: e.Namespace, name: e.Name}
		if c.owners[k] == nil {
			c.owners[k] = map[owner]struct{}{}
		}
		c.owners[k][o] = struct{}{}
		keys = append(keys, k)
	}
	c.byOwner[o] = keys
}

// forget drops a spec that no longer exists.
func (c *children) forget(o owner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(o)
}

func (c *children) forgetLocked(o owner) {
	for _, k := range c.byOwner[o] {
		delete(c.owners[k], o)
		if len(c.owners[k]) == 0 {
			delete(c.owners, k)
		}
	}
	delete(c.byOwner, o)
}

// ownersOf returns the specs of one kind that list a child.
func (c *children) ownersOf(kind string, k childKey) []reconcile.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	var reqs []reconcile.Request
	for o := range c.owners[k] {
		if o.kind == kind {
			reqs = append(reqs, reconcile.Request{NamespacedName: o.key})
		}
	}
	return reqs
}

// ensureWatch starts watching a child kind for every registered
// controller, once.
func (c *children) ensureWatch(gvk schema.GroupVersionKind) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watched[gvk] || c.noWatches {
		return nil
	}
	gk := gvk.GroupKind()
	for kind, ctrl := range c.controllers {
		obj := cacheObject(gvk)
		// The kind is the watch's: a typed or metadata object from the
		// cache carries none, and is not to be written to.
		h := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			return c.ownersOf(kind, childKey{gk: gk, namespace: obj.GetNamespace(), name: obj.GetName()})
		})
		if err := ctrl.Watch(source.Kind[client.Object](c.cache, obj, h)); err != nil {
			return fmt.Errorf("watching %s: %w", gvk, err)
		}
	}
	c.watched[gvk] = true
	return nil
}

// read observes every entry. Secrets are never read: they are reported as
// Unknown. A kind the API server does not know counts as not found.
func (c *children) read(ctx context.Context, entries []inventory.Entry) ([]observed, error) {
	// Every kind's watch first: the informers of a spec's kinds then list
	// at once (a read waits for its kind's list), not one after the other.
	for _, e := range entries {
		if isSecret(e) {
			continue
		}
		if err := c.ensureWatch(entryGVK(e)); err != nil && !meta.IsNoMatchError(err) {
			return nil, err
		}
	}
	out := make([]observed, 0, len(entries))
	for _, e := range entries {
		ob := observed{Entry: e}
		if isSecret(e) {
			ob.Health, ob.Message = Unknown, "Secrets are not read"
			out = append(out, ob)
			continue
		}
		gvk := entryGVK(e)
		u, err := c.get(ctx, gvk, types.NamespacedName{Namespace: e.Namespace, Name: e.Name})
		switch {
		case err == nil:
			ob.Object = u
			ob.Health, ob.Message = childHealth(e, u)
		case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
			ob.Health, ob.Message = NotFound, "not found"
		default:
			return nil, fmt.Errorf("reading %s: %w", e, err)
		}
		out = append(out, ob)
	}
	return out, nil
}

func isSecret(e inventory.Entry) bool { return e.Group == "" && e.Kind == "Secret" }

func entryGVK(e inventory.Entry) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: e.Group, Version: e.Version, Kind: e.Kind}
}

// typedChild reports whether a child kind is watched as its Go type: a
// built-in kind (client-go's scheme has its type) whose body status reads.
// The API server then sends it as protobuf, not JSON: a cold start lists
// such children in about a third of the CPU time (docs/status-controller.md,
// "Restarts"). Other kinds (CRDs) are watched unstructured, as JSON.
func typedChild(gvk schema.GroupVersionKind) bool {
	return !metadataOnly[gvk.GroupKind()] && clientgoscheme.Scheme.Recognizes(gvk)
}

// cacheObject is the object the cache keys a child kind's informer by:
// metadata only for a kind in metadataOnly, the Go type for a typedChild,
// else unstructured.
func cacheObject(gvk schema.GroupVersionKind) client.Object {
	if metadataOnly[gvk.GroupKind()] {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		return m
	}
	if typedChild(gvk) {
		if o, err := clientgoscheme.Scheme.New(gvk); err == nil {
			if co, ok := o.(client.Object); ok {
				return co
			}
		}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// warm starts, without waiting for them, the informers of every child
// kind the specs name (a replica does it before it leads, so that a new
// leader finds its cache filled), then waits until they have listed.
// First the kinds of one spec of each kind, read from the API server with
// probe (one item): they list while the specs do, rather than after.
// Kinds the API server does not serve are skipped.
func (c *children) warm(ctx context.Context, probe client.Reader, probeOpts []client.ListOption, lists ...func() client.ObjectList) error {
	seen := map[schema.GroupVersionKind]bool{}
	var started []cache.Informer
	start := func(list client.ObjectList) error {
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, it := range items {
			o, ok := it.(metav1.Object)
			if !ok {
				continue
			}
			entries, err := inventory.Parse(o.GetAnnotations()[inventory.Inventory])
			if err != nil {
				continue // the spec's status says so; its reconcile reads it again
			}
			for _, e := range entries {
				gvk := entryGVK(e)
				if isSecret(e) || seen[gvk] {
					continue
				}
				seen[gvk] = true
				inf, err := c.cache.GetInformer(ctx, cacheObject(gvk), cache.BlockUntilSynced(false))
				if err != nil {
					if meta.IsNoMatchError(err) {
						continue
					}
					return fmt.Errorf("watching %s: %w", gvk, err)
				}
				started = append(started, inf)
			}
		}
		return nil
	}
	if probe != nil {
		for _, newList := range lists {
			list := newList()
			// A hint only: a probe that fails leaves the kinds to the full list.
			if err := probe.List(ctx, list, append([]client.ListOption{client.Limit(1)}, probeOpts...)...); err == nil {
				if err := start(list); err != nil {
					return err
				}
			}
		}
	}
	for _, newList := range lists {
		list := newList()
		// Waits for the specs' own informer (the controllers share it).
		if err := c.cache.List(ctx, list); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return err
		}
		if err := start(list); err != nil {
			return err
		}
	}
	for _, inf := range started {
		if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return ctx.Err()
		}
	}
	return nil
}

// get reads a child from the cache, as an Unstructured the caller must
// not change (it may share the cache's maps): its metadata only for a kind
// in metadataOnly (apiVersion, kind and metadata), else the whole object
// (a typedChild converted, without a workload's pod template, as the
// cache holds an unstructured one).
func (c *children) get(ctx context.Context, gvk schema.GroupVersionKind, key types.NamespacedName) (*unstructured.Unstructured, error) {
	obj := cacheObject(gvk)
	// Nothing here writes to the object read: the cache's copy is read as
	// it is (a typed or metadata one is converted into new maps below).
	if err := c.reader.Get(ctx, key, obj, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var m map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o, nil
	case *metav1.PartialObjectMetadata:
		meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&o.ObjectMeta)
		if err != nil {
			return nil, err
		}
		m = map[string]any{"metadata": meta}
	default:
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
		if templated[gvk.GroupKind()] {
			unstructured.RemoveNestedField(m, "spec", "template")
		}
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// isWatched reports whether the kind of an entry is watched.
func (c *children) isWatched(e inventory.Entry) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watched[schema.GroupVersionKind{Group: e.Group, Version: e.Version, Kind: e.Kind}]
}
