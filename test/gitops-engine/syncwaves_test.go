package syncwaves

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/cache"
	"github.com/argoproj/gitops-engine/pkg/sync"
	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/gitops-engine/pkg/utils/tracing"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Annotations the test reads from wavesmith's output.
const (
	syncWave         = "argocd.argoproj.io/sync-wave"
	hookAnnotation   = "argocd.argoproj.io/hook"
	hookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	helmHook         = "helm.sh/hook"
)

const (
	// syncNamespace is the Application's destination namespace. No
	// rendered Namespace may carry this name: gitops-engine creates such a
	// Namespace before the first wave, outside the waves.
	syncNamespace = "default"
	// readyDelay is how long the fake kubelet takes to make a Deployment
	// available (and a Job complete, an Ingress load-balanced).
	readyDelay = 1500 * time.Millisecond
	// syncTimeout bounds the whole sync.
	syncTimeout = 3 * time.Minute
	// fieldManager is the server-side apply field manager of Argo CD's
	// application controller (wavesmith's objects ask for
	// ServerSideApply=true).
	fieldManager = "argocd-controller"
)

func TestMain(m *testing.M) {
	logf.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// TestExamplesSyncWaves syncs the bundled examples: a chart's CRD and
// PreSync hook in wave -106, Namespaces in -1, most objects in 0, the
// Component that depends on another and a pinned Kaoto in 1, a PostSync
// hook in 101.
func TestExamplesSyncWaves(t *testing.T) {
	runSync(t, filepath.Join(repoRoot(t), "testdata", "examples"))
}

// TestPurposeBuiltSyncWaves syncs objects in waves -1, 0, 1 and 2 with a
// Deployment in each of the waves 0, 1 and 2.
func TestPurposeBuiltSyncWaves(t *testing.T) {
	runSync(t, filepath.Join("testdata", "waves"))
}

// phaseOrder is gitops-engine's phase order.
var phaseOrder = map[common.SyncPhase]int{common.SyncPhasePreSync: 0, common.SyncPhaseSync: 1, common.SyncPhasePostSync: 2}

// step is one (phase, wave) of a sync.
type step struct {
	Phase common.SyncPhase
	Wave  int
}

func (s step) before(o step) bool {
	if s.Phase != o.Phase {
		return phaseOrder[s.Phase] < phaseOrder[o.Phase]
	}
	return s.Wave < o.Wave
}

func (s step) String() string { return fmt.Sprintf("%s/%d", s.Phase, s.Wave) }

// target is one rendered object and where wavesmith put it.
type target struct {
	obj   *unstructured.Unstructured
	key   kube.ResourceKey
	steps []step
	// deletedOnSuccess: a hook that Argo CD deletes once it succeeded.
	deletedOnSuccess bool
}

func runSync(t *testing.T, dir string) {
	objs := renderObjects(t, dir)
	targets := classify(t, objs)
	bubbleDependencies(t, targets)
	want := expectedSteps(targets)
	t.Logf("%d rendered objects; steps the annotations say: %v", len(targets), want)

	cfg := startEnvtest(t)
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	createMissingNamespaces(ctx, t, c, targets)

	// The cluster cache is Argo CD's view of the live state; its watch
	// events also tell when each object was created (the resourceVersion
	// of its ADDED event: etcd revisions grow with every write, so they
	// order writes across objects).
	created := newEventLog()
	cc := cache.NewClusterCache(cfg, cache.SetLogr(logr.Discard()))
	cc.OnEvent(func(ev watch.EventType, un *unstructured.Unstructured) {
		if ev == watch.Added {
			created.record(kube.GetResourceKey(un), un.GetResourceVersion())
		}
	})
	if err := cc.EnsureSynced(); err != nil {
		t.Fatalf("cluster cache: %v", err)
	}
	defer cc.Invalidate()

	kubelet := &fakeKubelet{c: c, delay: readyDelay, ready: newEventLog()}
	kubeletDone := make(chan error, 1)
	kubeletCtx, stopKubelet := context.WithCancel(ctx)
	go func() { kubeletDone <- kubelet.run(kubeletCtx) }()

	hookCalls, phase, message, results := syncLoop(ctx, t, cfg, cc, targets)
	stopKubelet()
	if err := <-kubeletDone; err != nil {
		t.Errorf("fake kubelet: %v", err)
	}

	// The operation succeeded.
	if phase != common.OperationSucceeded {
		for _, r := range results {
			t.Logf("  %s %s/%s/%s: %s %s %s", r.SyncPhase, r.ResourceKey.Kind, r.ResourceKey.Namespace, r.ResourceKey.Name, r.Status, r.HookPhase, r.Message)
		}
		t.Fatalf("sync operation %s: %s", phase, message)
	}
	t.Logf("sync %s: %s", phase, message)
	for _, r := range results {
		switch {
		case r.HookType != "" && r.HookPhase != common.OperationSucceeded:
			t.Errorf("%s hook %s %s/%s: %s: %s", r.HookType, r.ResourceKey.Kind, r.ResourceKey.Namespace, r.ResourceKey.Name, r.HookPhase, r.Message)
		case r.HookType == "" && r.Status != common.ResultCodeSynced:
			t.Errorf("%s %s/%s: result %s: %s", r.ResourceKey.Kind, r.ResourceKey.Namespace, r.ResourceKey.Name, r.Status, r.Message)
		}
	}

	// The wave hook saw exactly the steps of the annotations, in order.
	var got []step
	for _, h := range hookCalls {
		got = append(got, h.step)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the wave hook saw %v, the annotations say %v", got, want)
	}
	for i, h := range hookCalls {
		if h.final != (i == len(hookCalls)-1) {
			t.Errorf("wave hook call %d (%s): final=%v", i, h.step, h.final)
		}
	}

	// Objects of a later step were created only after the Deployments,
	// Jobs and Ingresses of earlier steps were ready. The watch events of
	// the last step may still be on their way.
	for _, tg := range targets {
		if !created.waitFor(ctx, tg.key) {
			t.Errorf("%s: no creation event", tg.key)
		}
	}
	checkOrder(t, targets, created, kubelet)

	// Every rendered object exists afterwards, except the hooks Argo CD
	// deletes once they succeeded (those must have been created).
	for _, tg := range targets {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(tg.obj.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKey{Namespace: tg.obj.GetNamespace(), Name: tg.obj.GetName()}, live)
		switch {
		case tg.deletedOnSuccess:
			if _, ok := created.get(tg.key); !ok {
				t.Errorf("hook %s was never created", tg.key)
			}
			if err == nil && live.GetDeletionTimestamp() == nil {
				t.Errorf("hook %s with delete policy HookSucceeded still exists", tg.key)
			}
		case err != nil:
			t.Errorf("%s after the sync: %v", tg.key, err)
		}
	}
}

// hookCall is one call of the sync wave hook.
type hookCall struct {
	step  step
	final bool
	at    time.Time
}

// syncLoop is Argo CD's controller loop (controller/sync.go): a new sync
// context on every iteration, built from the fresh live state and the
// previous operation state. One sync context for the whole operation
// (engine.Sync) never refreshes the live objects, so a wave of new
// objects would never turn healthy.
func syncLoop(ctx context.Context, t *testing.T, cfg *rest.Config, cc cache.ClusterCache, targets []*target) ([]hookCall, common.OperationPhase, string, []common.ResourceSyncResult) {
	t.Helper()
	var objs []*unstructured.Unstructured
	managed := map[kube.ResourceKey]bool{}
	for _, tg := range targets {
		objs = append(objs, tg.obj.DeepCopy())
		managed[tg.key] = true
	}
	isManaged := func(r *cache.Resource) bool { return managed[r.ResourceKey()] }
	kubectl := &kube.KubectlCmd{Log: logr.Discard(), Tracer: tracing.NopTracer{}}

	var (
		mu    gosync.Mutex
		calls []hookCall
	)
	waveHook := func(p common.SyncPhase, wave int, final bool) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, hookCall{step{p, wave}, final, time.Now()})
		t.Logf("wave hook: %s wave %d (final %v)", p, wave, final)
		return nil
	}

	var (
		phase   common.OperationPhase
		message string
		results []common.ResourceSyncResult
	)
	started := metav1.Now()
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			t.Fatalf("sync not done after %s (iteration %d): %s %s", syncTimeout, i, phase, message)
		}
		live, err := cc.GetManagedLiveObjs(objs, isManaged)
		if err != nil {
			t.Fatalf("live objects: %v", err)
		}
		rec := sync.Reconcile(objs, live, syncNamespace, cc)
		sc, cleanup, err := sync.NewSyncContext("rev-1", rec, cfg, cfg, kubectl, syncNamespace, cc.GetOpenAPISchema(),
			sync.WithInitialState(phase, message, results, started),
			sync.WithPrune(true),
			sync.WithServerSideApplyManager(fieldManager),
			sync.WithLogr(logr.Discard()),
			sync.WithSyncWaveHook(waveHook))
		if err != nil {
			t.Fatalf("sync context: %v", err)
		}
		sc.Sync()
		phase, message, results = sc.GetState()
		cleanup()
		if phase.Completed() {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	return calls, phase, message, results
}

// checkOrder compares, for every pair of an object o and a gated object g
// (Deployment, Job, Ingress) of an earlier step, o's creation with g's
// readiness: resourceVersions (etcd revisions) give the order, times are
// logged.
func checkOrder(t *testing.T, targets []*target, created *eventLog, kubelet *fakeKubelet) {
	t.Helper()
	pairs, deploymentPairs, gatingDeployments := 0, 0, 0
	for _, g := range targets {
		if !gated(g.key.Kind) {
			continue
		}
		var later []*target
		for _, o := range targets {
			if g.steps[0].before(o.steps[0]) {
				later = append(later, o)
			}
		}
		if len(later) == 0 {
			continue // the last step is not waited for
		}
		if g.key.Kind == "Deployment" {
			gatingDeployments++
		}
		readyRV, ok := kubelet.ready.get(g.key)
		if !ok {
			t.Errorf("%s was never made ready, but %d objects of later steps were synced", g.key, len(later))
			continue
		}
		for _, o := range later {
			rv, ok := created.get(o.key)
			if !ok {
				t.Errorf("%s: no creation event", o.key)
				continue
			}
			pairs++
			if g.key.Kind == "Deployment" {
				deploymentPairs++
			}
			if rv.rv <= readyRV.rv {
				t.Errorf("%s (%s) was created at revision %d (%s), before %s (%s) was ready at revision %d (%s)",
					o.key, o.steps[0], rv.rv, rv.at.Format(time.StampMilli), g.key, g.steps[0], readyRV.rv, readyRV.at.Format(time.StampMilli))
			}
		}
	}
	if gatingDeployments == 0 {
		t.Errorf("no object follows a Deployment of an earlier wave: the fixture tests no gating")
	}
	t.Logf("checked %d (later object, earlier gated object) pairs, %d with a Deployment", pairs, deploymentPairs)
}

func gated(kind string) bool {
	return kind == "Deployment" || kind == "Job" || kind == "Ingress"
}

// bubbleDependencies moves each Namespace to the step of the first object
// in it, and each CustomResourceDefinition to the step of the first object
// of its kind, when those come earlier: gitops-engine does the same
// (syncTasks.Sort, adjustDeps), so that a PreSync hook finds its
// namespace. Such a Namespace or CRD is applied in that step, not its own.
func bubbleDependencies(t *testing.T, targets []*target) {
	t.Helper()
	first := func(ref func(*target) bool) (step, bool) {
		var best step
		found := false
		for _, o := range targets {
			if ref(o) && (!found || o.steps[0].before(best)) {
				best, found = o.steps[0], true
			}
		}
		return best, found
	}
	move := func(dep *target, s step) {
		t.Logf("%s (%s) is applied in %s, with the first object that needs it", dep.key, dep.steps[0], s)
		dep.steps = []step{s}
	}
	for _, d := range targets {
		if d.key.Kind == "Namespace" && d.key.Group == "" {
			if s, ok := first(func(o *target) bool { return o.key.Namespace == d.key.Name }); ok && s.before(d.steps[0]) {
				move(d, s)
			}
		}
	}
	for _, d := range targets {
		if d.key.Kind == "CustomResourceDefinition" && d.key.Group == "apiextensions.k8s.io" {
			group, _, _ := unstructured.NestedString(d.obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(d.obj.Object, "spec", "names", "kind")
			if s, ok := first(func(o *target) bool { return o.key.Group == group && o.key.Kind == kind }); ok && s.before(d.steps[0]) {
				move(d, s)
			}
		}
	}
}

// expectedSteps returns the (phase, wave) steps of the annotations,
// sorted: PreSync, Sync, PostSync, each by wave.
func expectedSteps(targets []*target) []step {
	seen := map[step]bool{}
	var out []step
	for _, tg := range targets {
		for _, s := range tg.steps {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].before(out[j]) })
	return out
}

// classify reads the phase and wave wavesmith wrote on each object.
func classify(t *testing.T, objs []*unstructured.Unstructured) []*target {
	t.Helper()
	var out []*target
	for _, o := range objs {
		k := kube.GetResourceKey(o)
		a := o.GetAnnotations()
		w, ok := a[syncWave]
		if !ok {
			t.Fatalf("%s has no %s annotation", k, syncWave)
		}
		wave, err := strconv.Atoi(w)
		if err != nil {
			t.Fatalf("%s: %s %q: %v", k, syncWave, w, err)
		}
		if o.GetKind() == "Namespace" && o.GetName() == syncNamespace {
			t.Fatalf("the fixture has a Namespace named like the sync namespace %q: gitops-engine creates it outside the waves", syncNamespace)
		}
		tg := &target{obj: o, key: k}
		hooks, isHook := a[hookAnnotation]
		if !isHook {
			if _, helm := a[helmHook]; helm {
				t.Fatalf("%s has %s but no %s: wavesmith must translate Helm hooks", k, helmHook, hookAnnotation)
			}
			hooks = string(common.SyncPhaseSync)
		}
		for _, h := range strings.Split(hooks, ",") {
			switch p := common.SyncPhase(strings.TrimSpace(h)); p {
			case common.SyncPhasePreSync, common.SyncPhaseSync, common.SyncPhasePostSync:
				tg.steps = append(tg.steps, step{p, wave})
			default:
				t.Fatalf("%s: hook %q is not one this test syncs", k, h)
			}
		}
		sort.Slice(tg.steps, func(i, j int) bool { return tg.steps[i].before(tg.steps[j]) })
		if isHook {
			for _, p := range strings.Split(a[hookDeletePolicy], ",") {
				if strings.TrimSpace(p) == string(common.HookDeletePolicyHookSucceeded) {
					tg.deletedOnSuccess = true
				}
			}
		}
		out = append(out, tg)
	}
	return out
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

// renderObjects runs `wavesmith render` on dir.
func renderObjects(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	bin := os.Getenv("WAVESMITH_BIN")
	if bin == "" {
		t.Fatal("WAVESMITH_BIN is not set: run 'make test' in the repository root, or 'make build' there and set WAVESMITH_BIN=<repo>/bin/wavesmith")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("WAVESMITH_BIN=%s: %v: run 'make build' in the repository root", bin, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "render", "--root", repoRoot(t), dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("wavesmith render warnings:\n%s", stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decoding the render: %v", err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	if len(objs) == 0 {
		t.Fatalf("%s rendered no objects", dir)
	}
	return objs
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.Contains(b, []byte("module github.com/wavesmith/wavesmith\n")) {
		t.Fatalf("%s is not the wavesmith repository (%v)", root, err)
	}
	return root
}

// startEnvtest starts kube-apiserver and etcd from KUBEBUILDER_ASSETS with
// wavesmith's CRDs (Kaoto, Component) installed.
func startEnvtest(t *testing.T) *rest.Config {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run 'make test' in the repository root, or 'make envtest' there and set KUBEBUILDER_ASSETS=<repo>/bin")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, b)); err != nil {
			t.Fatalf("envtest needs %s in KUBEBUILDER_ASSETS=%s (%v): run 'make envtest' in the repository root", b, assets, err)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:   assets,
		CRDDirectoryPaths:       []string{filepath.Join(repoRoot(t), "kustomize", "crd", "bases")},
		ErrorIfCRDPathMissing:   true,
		ControlPlaneStopTimeout: time.Minute,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	// The cluster cache watches every kind, deprecated ones too (v1
	// Endpoints): no warnings in the test log.
	cfg.WarningHandler = rest.NoWarnings{}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	return cfg
}

// revision is a resourceVersion and when the test saw it.
type revision struct {
	rv uint64
	at time.Time
}

// eventLog keeps the first revision seen per object.
type eventLog struct {
	mu gosync.Mutex
	m  map[kube.ResourceKey]revision
}

func newEventLog() *eventLog { return &eventLog{m: map[kube.ResourceKey]revision{}} }

func (l *eventLog) record(k kube.ResourceKey, rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.m[k]; !ok {
		l.m[k] = revision{n, time.Now()}
	}
}

// waitFor waits until k is recorded or ctx ends.
func (l *eventLog) waitFor(ctx context.Context, k kube.ResourceKey) bool {
	for {
		if _, ok := l.get(k); ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (l *eventLog) get(k kube.ResourceKey) (revision, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.m[k]
	return r, ok
}

// fakeKubelet plays the kubelet, the deployment and job controllers and
// an ingress controller: delay after it first sees a Deployment, Job or
// Ingress, it writes the status that makes Argo CD's health check say
// Healthy, through the status subresource.
type fakeKubelet struct {
	c     client.Client
	delay time.Duration
	ready *eventLog
}

func (k *fakeKubelet) run(ctx context.Context) error {
	firstSeen := map[kube.ResourceKey]time.Time{}
	done := map[kube.ResourceKey]bool{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var objs []client.Object
		var deps appsv1.DeploymentList
		var jobs batchv1.JobList
		var ings networkingv1.IngressList
		for _, l := range []client.ObjectList{&deps, &jobs, &ings} {
			if err := k.c.List(ctx, l); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		for i := range deps.Items {
			objs = append(objs, &deps.Items[i])
		}
		for i := range jobs.Items {
			objs = append(objs, &jobs.Items[i])
		}
		for i := range ings.Items {
			objs = append(objs, &ings.Items[i])
		}
		for _, o := range objs {
			key := kube.NewResourceKey(groupOf(o), kindOf(o), o.GetNamespace(), o.GetName())
			if done[key] || o.GetDeletionTimestamp() != nil {
				continue
			}
			seen, ok := firstSeen[key]
			if !ok {
				firstSeen[key] = time.Now()
				continue
			}
			if time.Since(seen) < k.delay {
				continue
			}
			rv, err := k.makeReady(ctx, o)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if apierrors.IsNotFound(err) {
					continue
				}
				return fmt.Errorf("%s: %w", key, err)
			}
			done[key] = true
			k.ready.record(key, rv)
		}
	}
}

func groupOf(o client.Object) string {
	switch o.(type) {
	case *appsv1.Deployment:
		return "apps"
	case *batchv1.Job:
		return "batch"
	default:
		return "networking.k8s.io"
	}
}

func kindOf(o client.Object) string {
	switch o.(type) {
	case *appsv1.Deployment:
		return "Deployment"
	case *batchv1.Job:
		return "Job"
	default:
		return "Ingress"
	}
}

// makeReady writes the ready status and returns the resourceVersion of
// the write.
func (k *fakeKubelet) makeReady(ctx context.Context, o client.Object) (string, error) {
	var rv string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := o.DeepCopyObject().(client.Object)
		if err := k.c.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			return err
		}
		now := metav1.Now()
		switch x := cur.(type) {
		case *appsv1.Deployment:
			r := int32(1)
			if x.Spec.Replicas != nil {
				r = *x.Spec.Replicas
			}
			x.Status = appsv1.DeploymentStatus{ObservedGeneration: x.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r,
				Conditions: []appsv1.DeploymentCondition{
					{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
					{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
				}}
		case *batchv1.Job:
			start := metav1.NewTime(cur.GetCreationTimestamp().Time)
			x.Status = batchv1.JobStatus{StartTime: &start, CompletionTime: &now, Succeeded: 1,
				Conditions: []batchv1.JobCondition{
					{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
					{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
				}}
		case *networkingv1.Ingress:
			x.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10"}}
		}
		if err := k.c.Status().Update(ctx, cur); err != nil {
			return err
		}
		rv = cur.GetResourceVersion()
		return nil
	})
	return rv, err
}
