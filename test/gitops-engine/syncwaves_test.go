package syncwaves

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/health"
	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/go-logr/logr"
	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

const (
	// readyDelay is how long the fake kubelet takes to make a Deployment
	// available (and a Job complete, an Ingress load-balanced).
	readyDelay = 1500 * time.Millisecond
	// convergeTimeout bounds a sync and the wait for the specs' status
	// after it (generous: 2 busy cores, under -race elsewhere).
	convergeTimeout = 8 * time.Minute
	// deadlockHold is how long, and deadlockIterations in how many sync
	// iterations at least, the control must stay blocked by a spec once
	// the deadlock is in place.
	deadlockHold       = 20 * time.Second
	deadlockIterations = 20
)

func TestMain(m *testing.M) {
	// envtest logs through controller-runtime's logger; without one set it
	// prints a warning with a stack trace.
	logf.SetLogger(logr.Discard())
	// Argo CD's settings manager logs with logrus.
	log.SetLevel(log.WarnLevel)
	os.Exit(m.Run())
}

// run is one cluster in production order: the API server with
// wavesmith's CRDs, argocd-cm with wavesmith's health checks, and
// wavesmith-status and the fake controllers running before Argo CD's
// application controller syncs anything.
type run struct {
	cl      *cluster
	app     *appController
	targets []*target
	all     map[kube.ResourceKey]*target
}

func startRun(ctx context.Context, t *testing.T, targets []*target) *run {
	t.Helper()
	cl := startCluster(t)
	overrides := cl.installHealthChecks(ctx, t)
	createMissingNamespaces(ctx, t, cl.c, targets)
	cl.startStatus(t)
	cl.startControllers(t, readyDelay)
	return &run{cl: cl, app: newAppController(t, cl.cfg, overrides, targets), targets: targets, all: byKey(targets)}
}

// TestExamplesConverge syncs the bundled examples in production order:
// wavesmith-status runs from before the first sync and the sync judges
// Kaoto and Component by the Lua checks Argo CD reads from argocd-cm. The
// examples hold Kaotos, a chart Component with a CRD, a PreSync hook that
// Argo CD deletes once it succeeded and a PostSync hook, and a
// kustomization Component that depends on it. Every wave waits for the
// health of the one before (specs included), the PostSync hook runs after
// every spec is healthy, gitops-engine deletes the hook-succeeded hook,
// and every spec ends Healthy with Ready=True.
func TestExamplesConverge(t *testing.T) {
	t.Parallel()
	targets := classify(t, renderObjects(t, filepath.Join(repoRoot(t), "testdata", "examples")))
	checkSpecPlacement(t, targets)
	converge(t, targets, "Kaoto", "Component", "Deployment", "Job")
	if !hasStep(targets, common.SyncPhasePostSync) || !hasDeletedOnSuccess(targets) {
		t.Errorf("the examples hold no PostSync hook or no hook deleted on success: the test covers less than it says")
	}
}

// TestPurposeBuiltSyncWaves syncs objects in waves -1, 0, 1 and 2 with a
// Deployment in each of the waves 0, 1 and 2 and a Kaoto.
func TestPurposeBuiltSyncWaves(t *testing.T) {
	t.Parallel()
	targets := classify(t, renderObjects(t, filepath.Join("testdata", "waves")))
	checkSpecPlacement(t, targets)
	converge(t, targets, "Deployment", "Kaoto")
}

// TestHookSucceededComponentHealthy syncs a chart Component whose
// pre-install hook has the delete policy hook-succeeded (Argo CD:
// HookSucceeded): gitops-engine deletes the completed Job at the end of
// the operation, and the Component, which lists the Job in its
// inventory, is Healthy by the Lua check afterwards, with the Job named
// as absent.
func TestHookSucceededComponentHealthy(t *testing.T) {
	t.Parallel()
	targets := classify(t, renderObjects(t, filepath.Join("testdata", "hooks")))
	r := converge(t, targets, "Job")

	spec := kube.NewResourceKey("wavesmith.io", "Component", "operators", "widgets")
	hook := kube.NewResourceKey("batch", "Job", "operators", "widgets-migrate")
	s, ok := r.all[spec]
	if !ok || r.all[hook] == nil || !r.all[hook].deletedOnSuccess {
		t.Fatalf("the fixture must render %s and its hook %s with the delete policy HookSucceeded", spec, hook)
	}
	listed := false
	for _, c := range s.children {
		listed = listed || (c.key == hook && c.mayBeAbsent)
	}
	if !listed {
		t.Fatalf("%s does not list %s as a hook in its inventory", spec, hook)
	}
	deleted, ok := r.app.obs.get(r.app.obs.deleted, hook)
	if !ok {
		t.Fatalf("%s was not deleted", hook)
	}
	// The health converge checked comes from a status written after the
	// deletion: wavesmith-status names the Job as absent.
	want := health.HealthStatus{Status: health.HealthStatusHealthy,
		Message: fmt.Sprintf("all %d objects are ready; absent, as hooks or objects with a purge order may be: Job operators/widgets-migrate", len(s.children)-1)}
	got, err := health.GetResourceHealth(r.live(context.Background(), t, spec), r.app.overrides)
	if err != nil || got == nil {
		t.Fatalf("%s: health %v, %v", spec, got, err)
	}
	if *got != want {
		t.Errorf("%s after its hook was deleted (revision %d): health %+v, want %+v", spec, deleted.rv, *got, want)
	}
}

// converge syncs targets in a cluster in production order and checks the
// operation, the order of the waves, the hooks and, at the end, every
// spec Healthy with Ready=True. gating names kinds of which at least one
// object must hold back a later wave until it is healthy.
func converge(t *testing.T, targets []*target, gating ...string) *run {
	t.Helper()
	bubbleDependencies(t, targets)
	want := expectedSteps(targets)
	t.Logf("%d rendered objects; steps the annotations say: %v", len(targets), want)

	ctx, cancel := context.WithTimeout(context.Background(), convergeTimeout)
	defer cancel()
	r := startRun(ctx, t, targets)
	start := time.Now()
	st, err := r.app.sync(ctx, t, nil)
	if err != nil {
		logResults(t, st)
		t.Fatalf("sync not done after %s (%d iterations): %s: %s", convergeTimeout, st.iterations, st.phase, st.message)
	}
	synced := time.Since(start)
	if st.phase != common.OperationSucceeded {
		logResults(t, st)
		t.Fatalf("sync operation %s: %s", st.phase, st.message)
	}
	t.Logf("sync %s in %s (%d iterations): %s", st.phase, synced.Round(time.Millisecond), st.iterations, st.message)
	for _, res := range st.results {
		switch {
		case res.HookType != "" && res.HookPhase != common.OperationSucceeded:
			t.Errorf("%s hook %s: %s: %s", res.HookType, keyString(res.ResourceKey), res.HookPhase, res.Message)
		case res.HookType == "" && res.Status != common.ResultCodeSynced:
			t.Errorf("%s: result %s: %s", keyString(res.ResourceKey), res.Status, res.Message)
		}
	}

	// The wave hook saw exactly the steps of the annotations, in order.
	calls := r.app.hookCalls()
	var got []step
	for _, h := range calls {
		got = append(got, h.step)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the wave hook saw %v, the annotations say %v", got, want)
	}
	for i, h := range calls {
		if h.final != (i == len(calls)-1) {
			t.Errorf("wave hook call %d (%s): final=%v", i, h.step, h.final)
		}
	}
	for _, tg := range targets {
		if !r.waitCreated(ctx, tg.key) {
			t.Errorf("%s: no creation event", tg.key)
		}
	}
	r.checkOrder(t, gating)
	r.checkHooks(ctx, t, st)

	// Every spec ends Healthy with Ready=True for its generation, after
	// the hook-succeeded hooks are gone.
	waitFor(ctx, t, "every spec Healthy with Ready=True", func() string { return r.specProblems(ctx, t) })
	t.Logf("converged in %s: sync %s, specs Healthy %s later", time.Since(start).Round(time.Millisecond),
		synced.Round(time.Millisecond), (time.Since(start) - synced).Round(time.Millisecond))
	return r
}

// checkOrder compares, for every pair of an object o and an object g with
// a health of an earlier step, o's creation with the first time Argo CD's
// health check (Lua included) called g Healthy: resourceVersions (etcd
// revisions) give the order.
func (r *run) checkOrder(t *testing.T, gating []string) {
	t.Helper()
	obs := r.app.obs
	pairs := map[string]int{}
	for _, g := range r.targets {
		if _, ok := obs.healthOf(g.key); !ok {
			continue // no health: nothing waits for it
		}
		var later []*target
		for _, o := range r.targets {
			if g.steps[0].before(o.steps[0]) {
				later = append(later, o)
			}
		}
		if len(later) == 0 {
			continue
		}
		healthy, ok := obs.get(obs.healthy, g.key)
		if !ok {
			t.Errorf("%s (%s) was never Healthy, but %d objects of later steps were synced", g.key, g.steps[0], len(later))
			continue
		}
		for _, o := range later {
			created, ok := obs.get(obs.created, o.key)
			if !ok {
				continue // reported by the caller
			}
			pairs[g.key.Kind]++
			if created.rv <= healthy.rv {
				t.Errorf("%s (%s) was created at revision %d (%s), before %s (%s) was Healthy at revision %d (%s)",
					o.key, o.steps[0], created.rv, created.at.Format(time.StampMilli), g.key, g.steps[0], healthy.rv, healthy.at.Format(time.StampMilli))
			}
		}
	}
	for _, k := range gating {
		if pairs[k] == 0 {
			t.Errorf("no %s holds back a later step: the fixture tests less than it says", k)
		}
	}
	t.Logf("checked (later object, earlier object with a health) pairs by the earlier one's kind: %v", pairs)
}

// checkHooks checks that every hook ran and succeeded, and that the hooks
// with the delete policy HookSucceeded are gone afterwards (deleted by
// gitops-engine in the foreground, collected once the fake garbage
// collector drops the finalizer) while the others remain.
func (r *run) checkHooks(ctx context.Context, t *testing.T, st syncState) {
	t.Helper()
	results := map[kube.ResourceKey]common.ResourceSyncResult{}
	for _, res := range st.results {
		results[res.ResourceKey] = res
	}
	for _, tg := range r.targets {
		if !tg.hook {
			continue
		}
		res, ok := results[tg.key]
		if !ok || res.HookPhase != common.OperationSucceeded || string(res.HookType) != string(tg.steps[0].Phase) {
			t.Errorf("%s hook %s: result %+v", tg.steps[0].Phase, tg.key, res)
		}
		if !tg.deletedOnSuccess {
			if err := r.cl.c.Get(ctx, objectKey(tg.key), r.object(tg.key)); err != nil {
				t.Errorf("hook %s without HookSucceeded after the sync: %v", tg.key, err)
			}
			continue
		}
		waitFor(ctx, t, fmt.Sprintf("hook %s deleted", tg.key), func() string {
			if err := r.cl.c.Get(ctx, objectKey(tg.key), r.object(tg.key)); !apierrors.IsNotFound(err) {
				return fmt.Sprintf("%s (HookSucceeded) still there: %v", tg.key, err)
			}
			return ""
		})
		if _, ok := r.app.obs.get(r.app.obs.deleted, tg.key); !ok {
			t.Errorf("no deletion event for hook %s", tg.key)
		}
	}
}

// specProblems lists the specs that are not Healthy with Ready=True for
// their generation; "" when there are none.
func (r *run) specProblems(ctx context.Context, t *testing.T) string {
	var out []string
	for _, tg := range r.targets {
		if !tg.isSpec() {
			continue
		}
		live := r.live(ctx, t, tg.key)
		h, err := health.GetResourceHealth(live, r.app.overrides)
		if err != nil || h == nil {
			out = append(out, fmt.Sprintf("%s: health %v, %v", tg.key, h, err))
			continue
		}
		og, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
		if ready := condition(live, "Ready"); h.Status != health.HealthStatusHealthy || ready != "True" || og != live.GetGeneration() {
			out = append(out, fmt.Sprintf("%s: %s (%s), Ready %q, observedGeneration %d of %d", tg.key, h.Status, h.Message, ready, og, live.GetGeneration()))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func (r *run) object(k kube.ResourceKey) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.all[k].obj.GroupVersionKind())
	return u
}

func (r *run) live(ctx context.Context, t *testing.T, k kube.ResourceKey) *unstructured.Unstructured {
	t.Helper()
	u := r.object(k)
	if err := r.cl.c.Get(ctx, objectKey(k), u); err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return u
}

func (r *run) waitCreated(ctx context.Context, k kube.ResourceKey) bool {
	for {
		if _, ok := r.app.obs.get(r.app.obs.created, k); ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func objectKey(k kube.ResourceKey) client.ObjectKey {
	return client.ObjectKey{Namespace: k.Namespace, Name: k.Name}
}

// condition is the status of a condition of u ("" when absent).
func condition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// waitFor polls problems until it returns "" or ctx ends, then fails
// with the last problems.
func waitFor(ctx context.Context, t *testing.T, what string, problems func() string) {
	t.Helper()
	start := time.Now()
	last := ""
	for {
		if last = problems(); last == "" {
			t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; still:\n%s", what, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func hasStep(targets []*target, p common.SyncPhase) bool {
	for _, tg := range targets {
		if tg.steps[0].Phase == p {
			return true
		}
	}
	return false
}

func hasDeletedOnSuccess(targets []*target) bool {
	for _, tg := range targets {
		if tg.deletedOnSuccess {
			return true
		}
	}
	return false
}

// createMissingNamespaces creates the namespaces that rendered objects
// use but no rendered Namespace defines: the cluster's, not the sync's
// (Argo CD's CreateNamespace=true creates only the destination one).
func createMissingNamespaces(ctx context.Context, t *testing.T, c client.Client, targets []*target) {
	t.Helper()
	defined := map[string]bool{"default": true, "kube-system": true, "kube-public": true}
	for _, tg := range targets {
		if tg.key.Kind == "Namespace" && tg.key.Group == "" {
			defined[tg.key.Name] = true
		}
	}
	var made []string
	for _, tg := range targets {
		ns := tg.key.Namespace
		if ns == "" || defined[ns] {
			continue
		}
		defined[ns] = true
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatalf("namespace %s: %v", ns, err)
		}
		made = append(made, ns)
	}
	if len(made) > 0 {
		t.Logf("created namespaces the rendered objects use but do not define: %v", made)
	}
}
