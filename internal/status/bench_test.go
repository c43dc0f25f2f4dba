package status

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
)

// BenchmarkKaotoStatus1000 applies 1000 rendered Kaoto resources with their
// children on envtest, makes every Deployment available, and measures how
// long after its Deployment each Kaoto is Ready, the status writes, the
// memory, and a restart over the unchanged specs.
//
//	go test -run '^$' -bench 'KaotoStatus1000$' -benchtime 1x ./internal/status/
//
// The controller runs in this process with the shipped settings
// (NewManager's defaults, leader election, the Go memory limit the
// shipped Deployment sets); the objects are written by a setup client of
// their own, without a rate limit and with many writers at once. With
// WAVESMITH_RESTART_CPUPROFILE=file it writes a CPU profile of the cold
// restart to file.
func BenchmarkKaotoStatus1000(b *testing.B) { benchKaotoStatus(b, 1000) }

// BenchmarkKaotoStatus5000 is the same with 5000 Kaotos.
func BenchmarkKaotoStatus5000(b *testing.B) { benchKaotoStatus(b, 5000) }

// BenchmarkKaotoStatus10000 is the same with 10,000 Kaotos (40,000
// objects; about 20 minutes on 2 busy cores).
func BenchmarkKaotoStatus10000(b *testing.B) { benchKaotoStatus(b, 10000) }

// benchLimit is the shipped memory limit (kustomize/status-controller;
// TestBenchUsesInstalledLimit keeps them equal, TestInstallManifestsAgree
// the chart's).
const benchLimit = 768 << 20

// setupWriters is how many writers the setup client runs while the
// controller has nothing to do (creating the objects, which the
// controller only reads, and taking pods away while it is down): the API
// server, not the client, is then what limits the setup.
const setupWriters = 64

// childWriters is how many writers make the Deployments available while
// the controller works: as many as its workers. A cluster's own
// deployment controller runs 5 (kube-controller-manager's
// --concurrent-deployment-syncs) at 50 requests per second; 64 writers
// would crowd the controller's writes out of this small API server and
// measure that instead (every Kaoto Ready only once their flood ends).
const childWriters = DefaultWorkers

func benchKaotoStatus(b *testing.B, n int) {
	needEnvtest(b)
	ctx := context.Background()
	setup := setupClient(b)
	// The shipped Deployment sets the Go memory limit to 90% of its own.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(benchLimit / 10 * 9))
	name := func(i int) string { return fmt.Sprintf("k-%05d", i) }
	for b.Loop() {
		debug.SetMemoryLimit(benchLimit / 10 * 9)
		ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
		if err := setup.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
		w := watchKaotos(b, ns)
		opts := func() Options {
			return Options{MetricsAddr: "0", ProbeAddr: "0", Namespaces: []string{ns}, skipNameValidation: true,
				LeaderElection: true, LeaderElectionNamespace: ns}
		}

		var writes writeCounter
		runtime.GC()
		debug.FreeOSMemory()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		resetPeakRSS()
		mgr, err := NewManager(countingConfig(adminConfig, &writes), opts())
		if err != nil {
			b.Fatal(err)
		}
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mctx) }()

		// Children first, then the spec, as the render's order applies
		// them: the first status of each Kaoto is Progressing.
		start := time.Now()
		err = parallel(n, setupWriters, func(i int) error {
			kaoto, kids, err := renderKaotoObjects(ns, name(i), map[string]any{"ingress": map[string]any{"host": fmt.Sprintf("k%d.example.com", i)}}, generators.Kubernetes)
			if err != nil {
				return err
			}
			for _, o := range append(kids, kaoto) {
				if err := setup.Create(ctx, o); err != nil {
					return fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err)
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s-setup-create")
		w.wait(b, PhaseProgressing, n, time.Duration(1+n/1000)*5*time.Minute)
		b.ReportMetric(time.Since(start).Seconds(), "s-setup-all-progressing")

		// All Deployments become available, from childWriters writers
		// as fast as the API server takes them; each Kaoto's latency is from its Deployment's update to
		// the watch event of its Ready status.
		available := make([]time.Time, n)
		before := writes.total.Load()
		w.armReady()
		start = time.Now()
		err = parallel(n, childWriters, func(i int) error {
			err := patchDeploymentStatus(ctx, setup, ns, name(i), true)
			available[i] = time.Now()
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		lastChild := time.Now()
		w.wait(b, PhaseReady, n, time.Duration(1+n/1000)*5*time.Minute)
		b.ReportMetric(lastChild.Sub(start).Seconds(), "s-making-available")
		b.ReportMetric(time.Since(start).Seconds(), "s-to-all-ready")
		b.ReportMetric(w.lastReady().Sub(lastChild).Seconds(), "s-last-ready-after-last-child")
		lat := w.latencies(available, name)
		b.ReportMetric(lat[len(lat)/2].Seconds(), "s-ready-after-child-p50")
		b.ReportMetric(lat[len(lat)*99/100].Seconds(), "s-ready-after-child-p99")
		b.ReportMetric(lat[len(lat)-1].Seconds(), "s-ready-after-child-max")
		b.ReportMetric(float64(writes.total.Load()-before), "status-writes")
		b.ReportMetric(float64(writes.total.Load()), "status-writes-total")
		b.ReportMetric(float64(writes.conflicts.Load()), "status-writes-refused-409")
		// The live heap after a collection: the test process holds the
		// controller, a cache-less setup client and a watch keeping one
		// phase per Kaoto; heap-delta is what it grew by since before the
		// manager started.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
		b.ReportMetric((float64(ms.HeapAlloc)-float64(base.HeapAlloc))/(1<<20), "heap-delta-MiB")
		// What the process took from the OS: an upper bound of its peak.
		b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
		// The process's resident set now and at its peak since the
		// manager started (the setup's writers included).
		rss, peak := readRSS()
		b.ReportMetric(rss, "rss-MiB")
		b.ReportMetric(peak, "peak-rss-MiB")
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}

		// The restarts below run two controllers in this process at
		// times (a leader and its standby); the limit is each one's.
		debug.SetMemoryLimit(math.MaxInt64)

		// A restart over unchanged specs: the Lease given up by the
		// stopped manager is taken at once; every spec is reconciled,
		// none is written.
		stopProfile := profileRestart(b)
		restarted, cpu, cpCPU := time.Now(), cpuTime(), controlPlaneCPU()
		c := startCounted(b, opts(), n, restarted)
		var elected time.Duration
		select {
		case <-c.mgr.Elected():
			elected = time.Since(restarted)
		case <-time.After(5 * time.Minute):
			b.Fatal("after the restart, no Lease within 5 minutes")
		}
		c.waitAll(b)
		b.ReportMetric(elected.Seconds(), "s-restart-to-lease")
		b.ReportMetric(c.first().Seconds(), "s-restart-to-first-reconciled")
		b.ReportMetric(c.last().Seconds(), "s-restart-to-all-reconciled")
		// The CPU time this process used meanwhile: the controller's, and
		// the test's watch (the API server's is not counted).
		b.ReportMetric((cpuTime() - cpu).Seconds(), "cpu-s-restart")
		// The API server's and etcd's meanwhile (their listing and
		// encoding, which share the machine's cores with the controller).
		b.ReportMetric((controlPlaneCPU() - cpCPU).Seconds(), "cpu-s-restart-control-plane")
		stopProfile()
		b.ReportMetric(float64(c.writes.total.Load()), "restart-status-writes")

		// A hand-over, as between the shipped two replicas: a standby
		// fills its cache while the leader runs; the leader stops; the
		// standby takes the Lease and reconciles every spec.
		warm := make(chan struct{})
		so := opts()
		so.onWarm = func() { close(warm) }
		var handedOver time.Time
		standby := startCounted(b, so, n, time.Time{})
		select {
		case <-warm:
		case <-time.After(5 * time.Minute):
			b.Fatal("the standby did not fill its cache within 5 minutes")
		}
		handedOver = time.Now()
		standby.since.Store(&handedOver)
		c.stop(b)
		standby.waitAll(b)
		b.ReportMetric(standby.last().Seconds(), "s-handover-to-all-reconciled")
		b.ReportMetric(float64(standby.writes.total.Load()), "handover-status-writes")
		standby.stop(b)
		if n > 1000 {
			w.stop()
			continue
		}

		// A burst: while the controller is down every Deployment loses its
		// pods; on its start all n statuses are due at once.
		if err := parallel(n, setupWriters, func(i int) error { return patchDeploymentStatus(ctx, setup, ns, name(i), false) }); err != nil {
			b.Fatal(err)
		}
		var burstWrites writeCounter
		mgr, err = NewManager(countingConfig(adminConfig, &burstWrites), opts())
		if err != nil {
			b.Fatal(err)
		}
		restarted = time.Now()
		mctx, cancel = context.WithCancel(ctx)
		go func() { done <- mgr.Start(mctx) }()
		w.wait(b, PhaseProgressing, n, time.Duration(1+n/1000)*5*time.Minute)
		b.ReportMetric(time.Since(restarted).Seconds(), "s-burst-restart-to-all-written")
		b.ReportMetric(float64(burstWrites.total.Load()), "burst-status-writes")
		if w := burstWrites.total.Load(); w > 0 {
			b.ReportMetric(float64(burstWrites.nanos.Load())/float64(w)/1e6, "burst-ms-per-write")
		}
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		w.stop()
	}
}

// profileRestart writes a CPU profile of the cold restart alone to the
// file WAVESMITH_RESTART_CPUPROFILE names, when set; it returns what stops
// it.
func profileRestart(b *testing.B) func() {
	path := os.Getenv("WAVESMITH_RESTART_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// counted is a manager started for a restart: it counts its status writes
// and its reconciles, and when it first reconciled a spec and when all n,
// from since.
type counted struct {
	mgr     ctrl.Manager
	cancel  context.CancelFunc
	done    chan error
	writes  writeCounter
	rc      reconcileCounter
	n       int64
	since   atomic.Pointer[time.Time]
	seen    atomic.Int64
	firstAt atomic.Int64
	lastAt  atomic.Int64
	all     chan struct{}
}

func startCounted(b *testing.B, o Options, n int, since time.Time) *counted {
	c := &counted{done: make(chan error, 1), all: make(chan struct{}), n: int64(n)}
	c.since.Store(&since)
	o.onReconcile = func(kind string, req ctrl.Request) {
		c.rc.hook(kind, req)
		at := int64(time.Since(*c.since.Load()))
		c.firstAt.CompareAndSwap(0, at)
		if c.rc.of(kind, req.Namespace, req.Name) == 1 && c.seen.Add(1) == c.n {
			c.lastAt.Store(at)
			close(c.all)
		}
	}
	mgr, err := NewManager(countingConfig(adminConfig, &c.writes), o)
	if err != nil {
		b.Fatal(err)
	}
	c.mgr = mgr
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() { c.done <- mgr.Start(ctx) }()
	return c
}

func (c *counted) waitAll(b *testing.B) {
	select {
	case <-c.all:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d reconciled after 5 minutes", c.seen.Load(), c.n)
	}
}

func (c *counted) first() time.Duration { return time.Duration(c.firstAt.Load()) }
func (c *counted) last() time.Duration  { return time.Duration(c.lastAt.Load()) }

func (c *counted) stop(b *testing.B) {
	c.cancel()
	if err := <-c.done; err != nil {
		b.Fatal(err)
	}
}

// setupClient writes the benchmark's objects: the controller is what is
// measured, not how fast a test applies 40,000 objects, so its client has
// no rate limit.
func setupClient(b *testing.B) client.WithWatch {
	cfg := rest.CopyConfig(adminConfig)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// parallel calls f(0) to f(n-1) on workers goroutines and returns the
// first error (the others stop taking work then).
func parallel(n, workers int, f func(i int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					next.Store(int64(n))
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// patchDeploymentStatus does what the kubelet and the deployment
// controller would, in one request: it reports the Deployment rolled out
// and available, or its pods gone.
func patchDeploymentStatus(ctx context.Context, c client.Client, ns, name string, available bool) error {
	patch := `{"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"unavailableReplicas":null,` +
		`"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"},{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable"}]}}`
	if !available {
		patch = `{"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":null,"availableReplicas":null,"unavailableReplicas":1,` +
			`"conditions":[{"type":"Available","status":"False","reason":"MinimumReplicasUnavailable"},{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated"}]}}`
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Status().Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("Deployment %s/%s status: %w", ns, name, err)
	}
	return nil
}

// kaotoWatch follows the Kaotos of a namespace through one watch (no
// cache, no polling of lists): the phase of each and when each was first
// seen Ready since armReady.
type kaotoWatch struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	phase   map[string]string
	count   map[string]int
	readyAt map[string]time.Time // nil until armReady
	err     error
}

func watchKaotos(b *testing.B, ns string) *kaotoWatch {
	c := setupClient(b)
	ctx, cancel := context.WithCancel(context.Background())
	w := &kaotoWatch{cancel: cancel, done: make(chan struct{}), phase: map[string]string{}, count: map[string]int{}}
	opened := make(chan error, 1)
	go func() {
		defer close(w.done)
		rv := ""
		for ctx.Err() == nil {
			wi, err := c.Watch(ctx, &designerv1alpha1.KaotoList{}, &client.ListOptions{Namespace: ns, Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
			if opened != nil {
				opened <- err
				opened = nil
			}
			if err != nil {
				w.fail(err)
				return
			}
			for ev := range wi.ResultChan() {
				if ev.Type == watch.Error {
					// Too old a resourceVersion: start over from now.
					rv = ""
					break
				}
				k, ok := ev.Object.(*designerv1alpha1.Kaoto)
				if !ok {
					continue
				}
				rv = k.ResourceVersion
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					w.seen(k.Name, k.Status.Phase)
				}
			}
			wi.Stop()
		}
	}()
	if err := <-opened; err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *kaotoWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}

func (w *kaotoWatch) seen(name, phase string) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.phase[name]; ok {
		w.count[old]--
	}
	w.phase[name] = phase
	w.count[phase]++
	if phase == PhaseReady && w.readyAt != nil {
		if _, ok := w.readyAt[name]; !ok {
			w.readyAt[name] = now
		}
	}
}

// armReady starts recording when each Kaoto turns Ready.
func (w *kaotoWatch) armReady() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readyAt = map[string]time.Time{}
}

// wait returns once n Kaotos are in phase, as the watch saw them.
func (w *kaotoWatch) wait(b *testing.B, phase string, n int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		w.mu.Lock()
		count, err := w.count[phase], w.err
		w.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		if count == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d in phase %s after %v", count, n, phase, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lastReady is when the last Kaoto turned Ready.
func (w *kaotoWatch) lastReady() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, t := range w.readyAt {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// latencies returns, sorted, how long after its Deployment became
// available each Kaoto was seen Ready (zero when the watch was faster than
// the response to the update).
func (w *kaotoWatch) latencies(available []time.Time, name func(int) string) []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]time.Duration, len(available))
	for i, at := range available {
		out[i] = max(0, w.readyAt[name(i)].Sub(at))
	}
	slices.Sort(out)
	return out
}

func (w *kaotoWatch) stop() {
	w.cancel()
	<-w.done
}

// controlPlaneCPU is the CPU time (user and system) this process's child
// processes have used: envtest's kube-apiserver and etcd (Linux; elsewhere
// zero). /proc's figures are in clock ticks, 100 a second.
func controlPlaneCPU() time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	var ticks int64
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// After the command's closing parenthesis: state, ppid, ... with
		// utime and stime the 12th and 13th fields.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err != nil || ppid != self {
			continue
		}
		for _, v := range f[11:13] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * (time.Second / 100)
}

// resetPeakRSS starts the process's peak resident set (VmHWM) over from
// now (Linux; elsewhere nothing).
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// readRSS returns the process's resident set and its peak, in MiB (zero
// where /proc/self/status is not there).
func readRSS() (rss, peak float64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak
}
