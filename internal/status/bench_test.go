package status

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
)

// BenchmarkKaotoStatus1000 applies 1000 rendered Kaoto resources with their
// children on envtest, makes every Deployment available, and measures the
// time until all 1000 are Ready, the status writes, and the heap.
//
//	go test -run '^$' -bench KaotoStatus1000 -benchtime 1x ./internal/status/
//
// The controller runs with the shipped settings (NewManager's defaults).
func BenchmarkKaotoStatus1000(b *testing.B) { benchKaotoStatus(b, 1000) }

// BenchmarkKaotoStatus5000 is the same with 5000 Kaotos (about 10
// minutes on 2 busy cores).
func BenchmarkKaotoStatus5000(b *testing.B) { benchKaotoStatus(b, 5000) }

func benchKaotoStatus(b *testing.B, n int) {
	needEnvtest(b)
	ctx := context.Background()
	t := &testing.T{}
	for b.Loop() {
		ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
		var writes writeCounter
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		mgr, err := NewManager(countingConfig(adminConfig, &writes), Options{MetricsAddr: "0", ProbeAddr: "0", Namespaces: []string{ns}, skipNameValidation: true})
		if err != nil {
			b.Fatal(err)
		}
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mctx) }()

		// Apply specs and children with a few writers, as an applier would.
		var wg sync.WaitGroup
		work := make(chan int)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					kaoto, kids := renderKaoto(t, ns, fmt.Sprintf("k-%05d", i), map[string]any{"ingress": map[string]any{"host": fmt.Sprintf("k%d.example.com", i)}}, generators.Kubernetes)
					for _, o := range append([]*unstructured.Unstructured{kaoto}, kids...) {
						if err := k8s.Create(ctx, o); err != nil {
							b.Error(err)
						}
					}
				}
			}()
		}
		for i := 0; i < n; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		waitAll(b, ns, n, PhaseProgressing)

		// All children become ready now.
		work = make(chan int)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					makeAvailable(t, ns, fmt.Sprintf("k-%05d", i))
				}
			}()
		}
		before := writes.total.Load()
		start := time.Now()
		for i := 0; i < n; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		lastChild := time.Now()
		waitAll(b, ns, n, PhaseReady)
		elapsed := time.Since(start)
		afterLast := time.Since(lastChild)
		// The live heap after a collection: the test process holds the
		// controller and a cache-less client; heap-delta is what it grew
		// by since before the manager started.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(elapsed.Seconds(), "s-to-all-ready")
		b.ReportMetric(afterLast.Seconds(), "s-after-last-child")
		b.ReportMetric(float64(writes.total.Load()-before), "status-writes")
		b.ReportMetric(float64(writes.total.Load()), "status-writes-total")
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
		b.ReportMetric((float64(ms.HeapAlloc)-float64(base.HeapAlloc))/(1<<20), "heap-delta-MiB")
		// What the process took from the OS: an upper bound of its peak.
		b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MiB")
		cancel()
		<-done

		// A restart over unchanged specs: every one is reconciled, none
		// is written.
		var rc reconcileCounter
		var seen atomic.Int64
		var restartWrites writeCounter
		all := make(chan struct{})
		mgr, err = NewManager(countingConfig(adminConfig, &restartWrites), Options{MetricsAddr: "0", ProbeAddr: "0", Namespaces: []string{ns}, skipNameValidation: true,
			onReconcile: func(kind string, req ctrl.Request) {
				rc.hook(kind, req)
				if rc.of(kind, req.Namespace, req.Name) == 1 && seen.Add(1) == int64(n) {
					close(all)
				}
			}})
		if err != nil {
			b.Fatal(err)
		}
		restarted := time.Now()
		mctx, cancel = context.WithCancel(ctx)
		go func() { done <- mgr.Start(mctx) }()
		select {
		case <-all:
		case <-time.After(5 * time.Minute):
			b.Fatalf("after the restart, %d of %d reconciled", seen.Load(), n)
		}
		b.ReportMetric(time.Since(restarted).Seconds(), "s-restart-to-all-reconciled")
		b.ReportMetric(float64(restartWrites.total.Load()), "restart-status-writes")
		cancel()
		<-done

		// A burst: while the controller is down every Deployment loses its
		// pods; on its start all n statuses are due at once.
		work = make(chan int)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					makeUnavailable(t, ns, fmt.Sprintf("k-%05d", i))
				}
			}()
		}
		for i := 0; i < n; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		var burstWrites writeCounter
		mgr, err = NewManager(countingConfig(adminConfig, &burstWrites), Options{MetricsAddr: "0", ProbeAddr: "0", Namespaces: []string{ns}, skipNameValidation: true})
		if err != nil {
			b.Fatal(err)
		}
		restarted = time.Now()
		mctx, cancel = context.WithCancel(ctx)
		go func() { done <- mgr.Start(mctx) }()
		waitAll(b, ns, n, PhaseProgressing)
		b.ReportMetric(time.Since(restarted).Seconds(), "s-burst-restart-to-all-written")
		b.ReportMetric(float64(burstWrites.total.Load()), "burst-status-writes")
		if w := burstWrites.total.Load(); w > 0 {
			b.ReportMetric(float64(burstWrites.nanos.Load())/float64(w)/1e6, "burst-ms-per-write")
		}
		cancel()
		<-done
	}
	if t.Failed() {
		b.Fatal("a helper failed")
	}
}

func waitAll(b *testing.B, ns string, n int, phase string) {
	deadline := time.Now().Add(time.Duration(1+n/1000) * 5 * time.Minute)
	for {
		var list designerv1alpha1.KaotoList
		if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		count := 0
		for _, k := range list.Items {
			if k.Status.Phase == phase {
				count++
			}
		}
		if count == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d in phase %s", count, n, phase)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// makeUnavailable reports a Deployment's pods gone.
func makeUnavailable(t *testing.T, ns, name string) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"},
		},
	}
	if err := k8s.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}
