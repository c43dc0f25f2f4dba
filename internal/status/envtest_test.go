package status

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// The envtest tests run against a real kube-apiserver and etcd, built
// into bin/ by the Makefile; they skip under -short or without the
// binaries, unless make test requires them (testtool.MainSkip).
var (
	envtestSkip string // why the envtest tests skip ("" when they run)
	testEnv     *envtest.Environment
	adminConfig *rest.Config
	k8s         client.Client
	statusWrite writeCounter     // status writes of the shared manager
	reconciles  reconcileCounter // reconciles of the shared manager
)

func TestMain(m *testing.M) {
	flag.Parse()
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.Level(zapLevel()))))
	assets, missing := testtool.EnvtestAssetsMain(filepath.Join("..", "..", "bin"))
	skip, err := testtool.MainSkip(missing)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	if skip != "" {
		// The unit tests run; the envtest ones skip (needEnvtest).
		envtestSkip = skip
		os.Exit(m.Run())
	}
	testEnv = &envtest.Environment{
		BinaryAssetsDirectory:   assets,
		CRDDirectoryPaths:       []string{filepath.Join("..", "..", "kustomize", "crd", "bases"), filepath.Join("testdata", "crds")},
		ErrorIfCRDPathMissing:   true,
		ControlPlaneStopTimeout: time.Minute,
	}
	// Room for the 1000 Services of the benchmark (the default is a /24).
	testEnv.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.0.0.0/16")
	cfg, err := testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting envtest: %v\n", err)
		os.Exit(1)
	}
	adminConfig = cfg
	k8s, err = client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, ns := range sharedNamespaces {
		if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stopShared()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

// needEnvtest skips a test that needs the control plane TestMain did not
// start.
func needEnvtest(t testing.TB) {
	t.Helper()
	if envtestSkip != "" {
		t.Skip(envtestSkip)
	}
}

func zapLevel() int8 {
	if os.Getenv("WAVESMITH_TEST_VERBOSE") != "" {
		return -1
	}
	return 2 // errors only
}

// writeCounter counts status writes (PUT or PATCH on .../status), in all
// and by object (the request path without /status).
//
// A write is counted once its answer is in (a write in flight is not
// counted yet), total, conflicts and byObject together under mu, so that
// counts (snapshot) never show a write without its answer.
type writeCounter struct {
	total     atomic.Int64
	conflicts atomic.Int64 // of total, refused for a stale resourceVersion (409)
	nanos     atomic.Int64 // time spent in status writes, in all
	mu        sync.Mutex
	byObject  map[string]int
}

func (w *writeCounter) add(path string, conflict bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total.Add(1)
	if conflict {
		w.conflicts.Add(1)
	}
	if w.byObject == nil {
		w.byObject = map[string]int{}
	}
	w.byObject[strings.TrimSuffix(path, "/status")]++
}

// snapshot returns, at one moment, the writes, those of the object at
// path, and the writes refused (409).
func (w *writeCounter) snapshot(path string) (total, own, refused int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total.Load(), int64(w.byObject[path]), w.conflicts.Load()
}

// of returns the status writes of one object, by its API path.
func (w *writeCounter) of(path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byObject[path]
}

// waitCounted waits up to 10 s for counted to hold, and fails with what
// otherwise. A write is counted once its answer is back, and the server
// shows what it wrote before that answer reaches the writer: a test that
// saw a status can be ahead of the counter (CI saw 0 writes right after
// the phase it waited for).
func waitCounted(t *testing.T, what string, counted func() bool) {
	t.Helper()
	eventually(t, 10*time.Second, what, func() (bool, string) { return counted(), "no write counted" })
}

func kaotoPath(ns, name string) string {
	return "/apis/designer.kaoto.io/v1alpha1/namespaces/" + ns + "/kaotoes/" + name
}

// countingConfig counts the status writes made through cfg.
func countingConfig(cfg *rest.Config, counter *writeCounter) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if (r.Method == http.MethodPut || r.Method == http.MethodPatch) && strings.HasSuffix(r.URL.Path, "/status") {
				start := time.Now()
				resp, err := rt.RoundTrip(r)
				counter.nanos.Add(int64(time.Since(start)))
				counter.add(r.URL.Path, err == nil && resp.StatusCode == http.StatusConflict)
				return resp, err
			}
			return rt.RoundTrip(r)
		})
	}
	return c
}

// reconcileCounter counts finished reconciles by kind/namespace/name.
type reconcileCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *reconcileCounter) hook(kind string, req ctrl.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[kind+"/"+req.String()]++
}

func (c *reconcileCounter) of(kind, ns, name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[kind+"/"+ns+"/"+name]
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// startManager runs a manager until the test ends.
func startManager(t *testing.T, cfg *rest.Config, o Options) {
	t.Helper()
	if o.MetricsAddr == "" {
		o.MetricsAddr = "0"
	}
	if o.ProbeAddr == "" {
		o.ProbeAddr = "0"
	}
	o.skipNameValidation = true
	mgr, err := NewManager(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// sharedNamespaces are the namespaces the shared manager watches; tests
// that run their own manager use other namespaces, so that only their
// manager can have written what they check.
var (
	sharedNamespaces = []string{"shared-0", "shared-1", "shared-2", "shared-3", "shared-4", "shared-5", "shared-6", "shared-7", "shared-8", "shared-9"}
	nextShared       atomic.Int64
)

// namespace returns a fresh namespace watched by the shared manager.
func namespace(t *testing.T) string {
	t.Helper()
	i := int(nextShared.Add(1)) - 1
	if i >= len(sharedNamespaces) {
		t.Fatal("add a name to sharedNamespaces")
	}
	return sharedNamespaces[i]
}

// ownNamespace creates a namespace the shared manager does not watch.
func ownNamespace(t *testing.T, name string) string {
	t.Helper()
	needEnvtest(t)
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// renderKaoto renders a Kaoto with the real engine and returns the spec
// (with its inventory) and its children, as Flux or Argo CD would apply them.
func renderKaoto(t *testing.T, ns, name string, spec map[string]any, p generators.Platform) (*unstructured.Unstructured, []*unstructured.Unstructured) {
	t.Helper()
	kaoto, kids, err := renderKaotoObjects(ns, name, spec, p)
	if err != nil {
		t.Fatal(err)
	}
	return kaoto, kids
}

// renderKaotoObjects is renderKaoto returning its error (for goroutines).
func renderKaotoObjects(ns, name string, spec map[string]any, p generators.Platform) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	obj := manifest.New(map[string]any{"apiVersion": designerv1alpha1.APIVersion, "kind": designerv1alpha1.Kind,
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec})
	res, err := render.Render(context.Background(), []*manifest.Object{obj}, render.Options{Engines: engines.Dialects(), Root: filepath.Join("..", ".."), Generators: builtin.Registry(), Platform: p})
	if err != nil {
		return nil, nil, err
	}
	var kaoto *unstructured.Unstructured
	var kids []*unstructured.Unstructured
	for _, it := range res.Items {
		u := &unstructured.Unstructured{Object: normalize(it.Object.Map).(map[string]any)}
		if it.Role == render.Spec {
			kaoto = u
		} else {
			kids = append(kids, u)
		}
	}
	return kaoto, kids, nil
}

// normalize turns int64 values into the int64 unstructured expects (it
// already is) and leaves the rest; unstructured wants map[string]any.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalize(e)
		}
	case []any:
		for i, e := range t {
			t[i] = normalize(e)
		}
	}
	return v
}

func create(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if err := k8s.Create(context.Background(), o.DeepCopy()); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

func byKind(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	return nil
}

// eventually polls cond every 50 ms until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last state: %s", what, timeout, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getKaoto(t *testing.T, ns, name string) *designerv1alpha1.Kaoto {
	t.Helper()
	k := &designerv1alpha1.Kaoto{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, k); err != nil {
		t.Fatal(err)
	}
	return k
}

func waitPhase(t *testing.T, ns, name, phase string, timeout time.Duration) *designerv1alpha1.Kaoto {
	t.Helper()
	var k *designerv1alpha1.Kaoto
	eventually(t, timeout, fmt.Sprintf("Kaoto %s/%s phase %s", ns, name, phase), func() (bool, string) {
		k = getKaoto(t, ns, name)
		return k.Status.Phase == phase, fmt.Sprintf("phase %q conditions %v", k.Status.Phase, conditionSummary(k.Status.Conditions))
	})
	return k
}

func conditionSummary(cs []metav1.Condition) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return strings.Join(s, ",")
}

func cond(k *designerv1alpha1.Kaoto, typ string) metav1.Condition {
	for _, c := range k.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// makeAvailable does what a kubelet and the deployment controller would:
// it reports the Deployment as rolled out and available.
func makeAvailable(t *testing.T, ns, name string) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		},
	}
	if err := k8s.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

var (
	sharedManager atomic.Bool
	stopShared    = func() {} // set by shared; TestMain calls it before stopping envtest
)

// shared starts, once, the manager most tests use, counting its status writes.
func shared(t *testing.T) {
	t.Helper()
	needEnvtest(t)
	if sharedManager.Swap(true) {
		return
	}
	mgr, err := NewManager(countingConfig(adminConfig, &statusWrite), Options{MetricsAddr: "0", ProbeAddr: "0", Namespaces: sharedNamespaces, skipNameValidation: true, onReconcile: reconciles.hook})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "shared manager:", err)
		}
	}()
	stopShared = func() { cancel(); <-done }
}

func TestKaotoLifecycle(t *testing.T) {
	needEnvtest(t)
	shared(t)
	ns := namespace(t)
	kaoto, kids := renderKaoto(t, ns, "designer", map[string]any{"ingress": map[string]any{"host": "kaoto.example.com", "path": "/designer"}}, generators.Kubernetes)
	create(t, kaoto)

	k := waitPhase(t, ns, "designer", PhasePending, time.Minute)
	if c := cond(k, ConditionService); c.Status != metav1.ConditionFalse || c.Reason != "NotFound" || !strings.Contains(c.Message, "Service "+ns+"/designer") {
		t.Errorf("children missing: Service condition %+v", c)
	}

	create(t, kids...)
	k = waitPhase(t, ns, "designer", PhaseProgressing, time.Minute)
	if c := cond(k, ConditionService); c.Status != metav1.ConditionTrue {
		t.Errorf("Service present: condition %+v", c)
	}
	if c := cond(k, ConditionDeployment); c.Status != metav1.ConditionFalse || c.Reason != "Progressing" {
		t.Errorf("Deployment not available: condition %+v", c)
	}
	if c := cond(k, ConditionReady); c.Status != metav1.ConditionFalse {
		t.Errorf("Ready must be False while progressing: %+v", c)
	}

	makeAvailable(t, ns, "designer")
	k = waitPhase(t, ns, "designer", PhaseReady, time.Minute)
	if want := "http://kaoto.example.com/designer/"; k.Status.Endpoint != want {
		t.Errorf("endpoint %q, want %q", k.Status.Endpoint, want)
	}
	if c := cond(k, ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready condition %+v", c)
	}
	if k.Status.ObservedGeneration != k.Generation {
		t.Errorf("observedGeneration %d, generation %d", k.Status.ObservedGeneration, k.Generation)
	}

	// Nothing changes: 10 reconciles, each caused by a touch of a child,
	// write no status.
	waitCounted(t, "the status-write counter saw no write of this Kaoto: it counts nothing", func() bool { return statusWrite.of(kaotoPath(ns, "designer")) > 0 })
	if n, err := touchReconciles(t, &reconciles, &statusWrite, ns, "designer", 10, time.Minute); err != nil {
		t.Fatal(err)
	} else if n != 0 {
		t.Errorf("%d status writes across 10 reconciles with nothing changed, want 0", n)
	}

	// A generation bump: observedGeneration follows.
	cur := getKaoto(t, ns, "designer")
	cur.Spec.Image = "quay.io/kaotoio/kaoto-app:2.5.0"
	if err := k8s.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "observedGeneration follows the generation", func() (bool, string) {
		k := getKaoto(t, ns, "designer")
		return k.Status.ObservedGeneration == k.Generation && k.Generation > 1, fmt.Sprintf("%d/%d", k.Status.ObservedGeneration, k.Generation)
	})

	// A child deleted: its condition drops and the phase leaves Ready (the
	// child watch brings the event; the latency is logged).
	if err := k8s.Delete(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "designer"}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eventually(t, time.Minute, "phase leaves Ready after the Deployment is deleted", func() (bool, string) {
		k := getKaoto(t, ns, "designer")
		return k.Status.Phase != PhaseReady && cond(k, ConditionDeployment).Status == metav1.ConditionFalse, k.Status.Phase
	})
	t.Logf("phase left Ready %v after the delete", time.Since(start).Round(time.Millisecond))
}

func TestKaotoLoadBalancerEndpoint(t *testing.T) {
	needEnvtest(t)
	shared(t)
	ns := namespace(t)
	kaoto, kids := renderKaoto(t, ns, "k2", map[string]any{"ingress": map[string]any{"path": "/k2"}}, generators.Kubernetes)
	create(t, kaoto)
	create(t, kids...)
	makeAvailable(t, ns, "k2")
	k := waitPhase(t, ns, "k2", PhaseReady, time.Minute)
	if want := "http://k2." + ns + ".svc.cluster.local:8080/"; k.Status.Endpoint != want {
		t.Errorf("before a load balancer: endpoint %q, want %q", k.Status.Endpoint, want)
	}
	ing := byKind(kids, "Ingress").DeepCopy()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(ing), ing); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(ing.Object, []any{map[string]any{"ip": "192.168.49.2"}}, "status", "loadBalancer", "ingress"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Status().Update(context.Background(), ing); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "endpoint follows the load-balancer address", func() (bool, string) {
		k := getKaoto(t, ns, "k2")
		return k.Status.Endpoint == "http://192.168.49.2/k2/", k.Status.Endpoint
	})
}

func TestKaotoRoute(t *testing.T) {
	needEnvtest(t)
	shared(t)
	ns := namespace(t)
	kaoto, kids := renderKaoto(t, ns, "my-kaoto", map[string]any{"ingress": map[string]any{"host": "kaoto.example.com", "path": "/designer"}}, generators.OpenShift)
	if byKind(kids, "Route") == nil {
		t.Fatal("the OpenShift render has no Route")
	}
	create(t, kaoto)
	create(t, kids...)
	makeAvailable(t, ns, "my-kaoto")
	route := byKind(kids, "Route").DeepCopy()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(route), route); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(route.Object, []any{map[string]any{"host": "kaoto.example.com", "routerName": "default",
		"conditions": []any{map[string]any{"type": "Admitted", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}}, "status", "ingress"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Status().Update(context.Background(), route); err != nil {
		t.Fatal(err)
	}
	k := waitPhase(t, ns, "my-kaoto", PhaseReady, time.Minute)
	eventually(t, time.Minute, "Route endpoint", func() (bool, string) {
		k = getKaoto(t, ns, "my-kaoto")
		return k.Status.Endpoint == "https://kaoto.example.com/designer/", k.Status.Endpoint
	})
	if c := cond(k, ConditionIngress); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "Route") {
		t.Errorf("Ingress condition for a Route: %+v", c)
	}
}

// touchReconciles changes a label of the Service ns/name n times, each
// time waiting (up to limit) until the Kaoto ns/name has been reconciled
// once more, and returns the status writes of that Kaoto meanwhile. It
// fails when a touch brings no reconcile: then nothing was checked.
func touchReconciles(t *testing.T, rc *reconcileCounter, wc *writeCounter, ns, name string, n int, limit time.Duration) (int, error) {
	t.Helper()
	before := wc.of(kaotoPath(ns, name))
	start := time.Now()
	for i := 0; i < n; i++ {
		done := rc.of(designerv1alpha1.Kind, ns, name)
		svc := &corev1.Service{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
			t.Fatal(err)
		}
		if svc.Labels == nil {
			svc.Labels = map[string]string{}
		}
		svc.Labels["touch"] = fmt.Sprint(i)
		if err := k8s.Update(context.Background(), svc); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(limit)
		for rc.of(designerv1alpha1.Kind, ns, name) <= done {
			if time.Now().After(deadline) {
				return wc.of(kaotoPath(ns, name)) - before, fmt.Errorf("touch %d of Service %s/%s: no reconcile of the Kaoto within %v (%d reconciles before)", i+1, ns, name, limit, done)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("%d touches, each followed by a reconcile, in %v", n, time.Since(start).Round(time.Millisecond))
	return wc.of(kaotoPath(ns, name)) - before, nil
}

// TestEnvtestInputs declares to go test's result cache the inputs of the
// control plane TestMain starts (kube-apiserver, etcd, the CRDs under
// kustomize/crd/bases): what TestMain reads before m.Run is not recorded.
func TestEnvtestInputs(t *testing.T) {
	needEnvtest(t)
	testtool.Inputs(t)
	if testEnv == nil || adminConfig == nil {
		t.Fatal("envtest did not start")
	}
}

// runningManager is a status manager a test started, with the status
// writes and reconciles it made.
type runningManager struct {
	cancel     context.CancelFunc
	done       chan error
	writes     writeCounter
	reconciles reconcileCounter
}

// runManager starts a manager with o, counting its status writes and
// reconciles (it sets o.onReconcile and skips the controllers' name
// check, as every test starts several).
func runManager(t *testing.T, ctx context.Context, o Options) *runningManager {
	t.Helper()
	r := &runningManager{done: make(chan error, 1)}
	o.onReconcile, o.skipNameValidation = r.reconciles.hook, true
	mgr, err := NewManager(countingConfig(adminConfig, &r.writes), o)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	go func() { r.done <- mgr.Start(c) }()
	return r
}

// stop stops the manager and waits for it; its error fails t.
func (r *runningManager) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Errorf("manager: %v", err)
	}
}
