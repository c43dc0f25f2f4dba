package syncwaves

import (
	"context"
	"fmt"
	"strconv"
	gosync "sync"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/cache"
	"github.com/argoproj/gitops-engine/pkg/health"
	"github.com/argoproj/gitops-engine/pkg/sync"
	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/gitops-engine/pkg/utils/tracing"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

const (
	// syncNamespace is the Application's destination namespace. No
	// rendered Namespace may carry this name: gitops-engine creates such a
	// Namespace before the first wave, outside the waves.
	syncNamespace = "default"
	// fieldManager is the server-side apply field manager of Argo CD's
	// application controller (the rendered Applications ask for
	// ServerSideApply=true).
	fieldManager = "argocd-controller"
	// syncWaveDelay is the pause Argo CD's controller takes after applying
	// a wave that is not the last (delayBetweenSyncWaves in
	// controller/sync.go; ARGOCD_SYNC_WAVE_DELAY, default 2 s).
	syncWaveDelay = 2 * time.Second
	// clientSideApplyManager is Argo CD's default for the client-side
	// apply migration (common.DefaultClientSideApplyMigrationManager).
	clientSideApplyManager = "kubectl-client-side-apply"
)

// revision is a resourceVersion and when the test saw it.
type revision struct {
	rv uint64
	at time.Time
}

// observer is what the test sees of the targets through the cluster
// cache (Argo CD's view of the live state): when each was created, first
// Healthy by Argo CD's health checks (the Lua overrides included), and
// deleted, as resourceVersions of the watch events (etcd revisions grow
// with every write, so they order writes across objects), and each one's
// latest health.
type observer struct {
	overrides health.HealthOverride
	watched   map[kube.ResourceKey]bool

	mu      gosync.Mutex
	created map[kube.ResourceKey]revision
	healthy map[kube.ResourceKey]revision
	deleted map[kube.ResourceKey]revision
	health  map[kube.ResourceKey]health.HealthStatus
}

func (o *observer) onEvent(ev watch.EventType, un *unstructured.Unstructured) {
	k := kube.GetResourceKey(un)
	if !o.watched[k] {
		return
	}
	rv, err := strconv.ParseUint(un.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	r := revision{rv, time.Now()}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch ev {
	case watch.Added:
		if _, ok := o.created[k]; !ok {
			o.created[k] = r
		}
	case watch.Deleted:
		o.deleted[k] = r
		return
	}
	h, err := health.GetResourceHealth(un, o.overrides)
	if err != nil || h == nil {
		return
	}
	o.health[k] = *h
	if _, ok := o.healthy[k]; !ok && h.Status == health.HealthStatusHealthy && un.GetDeletionTimestamp() == nil {
		o.healthy[k] = r
	}
}

func (o *observer) get(m map[kube.ResourceKey]revision, k kube.ResourceKey) (revision, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := m[k]
	return r, ok
}

func (o *observer) healthOf(k kube.ResourceKey) (health.HealthStatus, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	h, ok := o.health[k]
	return h, ok
}

// hookCall is one call of the sync wave hook.
type hookCall struct {
	step  step
	final bool
}

// appController is Argo CD's application controller for one Application
// whose manifests are the targets: the cluster cache, the resource
// overrides it read from argocd-cm, and the sync loop of
// controller/sync.go.
type appController struct {
	cfg       *rest.Config
	cc        cache.ClusterCache
	overrides health.HealthOverride
	objs      []*unstructured.Unstructured
	managed   map[kube.ResourceKey]bool
	obs       *observer

	mu    gosync.Mutex
	calls []hookCall
}

// newAppController starts the cluster cache and the observer on it.
func newAppController(t *testing.T, cfg *rest.Config, overrides health.HealthOverride, targets []*target) *appController {
	t.Helper()
	a := &appController{cfg: cfg, overrides: overrides, managed: map[kube.ResourceKey]bool{}}
	for _, tg := range targets {
		a.objs = append(a.objs, tg.obj.DeepCopy())
		a.managed[tg.key] = true
	}
	a.obs = &observer{overrides: overrides, watched: a.managed,
		created: map[kube.ResourceKey]revision{}, healthy: map[kube.ResourceKey]revision{},
		deleted: map[kube.ResourceKey]revision{}, health: map[kube.ResourceKey]health.HealthStatus{}}
	a.cc = cache.NewClusterCache(cfg, cache.SetLogr(logr.Discard()))
	a.cc.OnEvent(a.obs.onEvent)
	if err := a.cc.EnsureSynced(); err != nil {
		t.Fatalf("cluster cache: %v", err)
	}
	t.Cleanup(func() { a.cc.Invalidate() })
	return a
}

// waveHook records each wave and then waits as Argo CD's controller does.
func (a *appController) waveHook(t *testing.T) common.SyncWaveHook {
	return func(p common.SyncPhase, wave int, final bool) error {
		a.mu.Lock()
		a.calls = append(a.calls, hookCall{step{p, wave}, final})
		a.mu.Unlock()
		t.Logf("wave hook: %s wave %d (final %v)", p, wave, final)
		if !final {
			time.Sleep(syncWaveDelay)
		}
		return nil
	}
}

func (a *appController) hookCalls() []hookCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]hookCall(nil), a.calls...)
}

// syncState is an operation's state after a sync iteration.
type syncState struct {
	phase      common.OperationPhase
	message    string
	results    []common.ResourceSyncResult
	iterations int
}

// sync runs one sync operation the way Argo CD's controller does
// (controller/sync.go): a new sync context on every iteration, built from
// the fresh live state and the previous operation state, with the options
// the controller sets for an automated, pruning, server-side-applying
// Application (the Lua health checks from argocd-cm, foreground pruning,
// the delay between waves). One sync context for the whole operation
// (engine.Sync) never refreshes the live objects, so a wave of new
// objects would never turn healthy. It returns when the operation
// completed, when stop says so after an iteration, or when ctx ends
// (with ctx's error).
func (a *appController) sync(ctx context.Context, t *testing.T, stop func(syncState) bool) (syncState, error) {
	t.Helper()
	isManaged := func(r *cache.Resource) bool { return a.managed[r.ResourceKey()] }
	kubectl := &kube.KubectlCmd{Log: logr.Discard(), Tracer: tracing.NopTracer{}}
	foreground := metav1.DeletePropagationForeground
	var st syncState
	started := metav1.Now()
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		live, err := a.cc.GetManagedLiveObjs(a.objs, isManaged)
		if err != nil {
			t.Fatalf("live objects: %v", err)
		}
		rec := sync.Reconcile(a.objs, live, syncNamespace, a.cc)
		sc, cleanup, err := sync.NewSyncContext("rev-1", rec, a.cfg, a.cfg, kubectl, syncNamespace, a.cc.GetOpenAPISchema(),
			sync.WithLogr(logr.Discard()),
			sync.WithHealthOverride(a.overrides),
			sync.WithOperationSettings(false, true, false, false),
			sync.WithInitialState(st.phase, st.message, st.results, started),
			sync.WithManifestValidation(true),
			sync.WithSyncWaveHook(a.waveHook(t)),
			sync.WithPrunePropagationPolicy(&foreground),
			sync.WithServerSideApply(true),
			sync.WithServerSideApplyManager(fieldManager),
			sync.WithClientSideApplyMigration(true, clientSideApplyManager))
		if err != nil {
			t.Fatalf("sync context: %v", err)
		}
		sc.Sync()
		st.phase, st.message, st.results = sc.GetState()
		st.iterations++
		cleanup()
		if st.phase.Completed() || (stop != nil && stop(st)) {
			return st, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// logResults logs every resource result of an operation.
func logResults(t *testing.T, st syncState) {
	t.Helper()
	for _, r := range st.results {
		t.Logf("  %s %s: %s %s %s", r.SyncPhase, keyString(r.ResourceKey), r.Status, r.HookPhase, r.Message)
	}
}

func keyString(k kube.ResourceKey) string {
	return fmt.Sprintf("%s/%s/%s", k.Kind, k.Namespace, k.Name)
}
