package status

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
)

// BenchmarkKaotoStatus1000 applies 1000 rendered Kaoto resources with their
// children on envtest, makes every Deployment available, and measures the
// time until all 1000 are Ready, the status writes, and the heap.
//
//	go test -run '^$' -bench KaotoStatus1000 -benchtime 1x ./internal/status/
func BenchmarkKaotoStatus1000(b *testing.B) {
	const n = 1000
	ctx := context.Background()
	t := &testing.T{}
	for b.Loop() {
		ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
		var writes writeCounter
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
					kaoto, kids := renderKaoto(t, ns, fmt.Sprintf("k-%04d", i), map[string]any{"ingress": map[string]any{"host": fmt.Sprintf("k%d.example.com", i)}}, generators.Kubernetes)
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
					makeAvailable(t, ns, fmt.Sprintf("k-%04d", i))
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
		waitAll(b, ns, n, PhaseReady)
		elapsed := time.Since(start)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(elapsed.Seconds(), "s-to-all-ready")
		b.ReportMetric(float64(writes.total.Load()-before), "status-writes")
		b.ReportMetric(float64(writes.total.Load()), "status-writes-total")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		cancel()
		<-done
	}
	if t.Failed() {
		b.Fatal("a helper failed")
	}
}

func waitAll(b *testing.B, ns string, n int, phase string) {
	deadline := time.Now().Add(5 * time.Minute)
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
