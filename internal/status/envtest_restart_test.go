package status

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wavesmith/wavesmith/generators"
)

// TestRestartWritesNothing: specs whose children did not change are
// reconciled after a hand-over (a standby that filled its cache while
// the leader ran takes over when the leader stops and gives up its
// Lease) and after a cold restart, and no status is written. A control:
// a child that changed while no controller ran is written on the next
// start. Times are logged, not asserted.
func TestRestartWritesNothing(t *testing.T) {
	needEnvtest(t)
	ctx := context.Background()
	ns := ownNamespace(t, "wavesmith-restart")
	const n = 20
	start := func(warm chan struct{}) *runningManager {
		o := Options{MetricsAddr: "0", ProbeAddr: "0", Namespaces: []string{ns}, LeaderElection: true, LeaderElectionNamespace: ns,
			// Generous for a busy machine: a leader that cannot renew in
			// time would stop, which is not what this test is about.
			LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second}
		if warm != nil {
			o.onWarm = func() { close(warm) }
		}
		return runManager(t, ctx, o)
	}
	stop := func(r *runningManager) { r.stop(t) }
	name := func(i int) string { return fmt.Sprintf("r-%02d", i) }
	reconciledAll := func(r *runningManager, what string) {
		t.Helper()
		since := time.Now()
		for i := range n {
			eventually(t, time.Minute, what+": "+name(i)+" reconciled", func() (bool, string) {
				c := r.reconciles.of("Kaoto", ns, name(i))
				return c > 0, fmt.Sprintf("%d reconciles", c)
			})
		}
		t.Logf("%s: every spec reconciled %v after the wait began", what, time.Since(since).Round(time.Millisecond))
	}

	for i := range n {
		kaoto, kids := renderKaoto(t, ns, name(i), map[string]any{}, generators.Kubernetes)
		create(t, kids...)
		create(t, kaoto)
		if err := patchDeploymentStatus(ctx, k8s, ns, name(i), true); err != nil {
			t.Fatal(err)
		}
	}
	a := start(nil)
	for i := range n {
		waitPhase(t, ns, name(i), PhaseReady, time.Minute)
	}
	waitCounted(t, "the first controller wrote no status: the counter counts nothing", func() bool { return a.writes.total.Load() > 0 })

	// A standby fills its cache while a leads; it reconciles nothing.
	warm := make(chan struct{})
	b := start(warm)
	select {
	case <-warm:
	case <-time.After(time.Minute):
		t.Fatal("the standby did not fill its cache within a minute")
	}
	for i := range n {
		if c := b.reconciles.of("Kaoto", ns, name(i)); c != 0 {
			t.Fatalf("the standby reconciled %s %d times before it led", name(i), c)
		}
	}
	stop(a)
	reconciledAll(b, "hand-over")
	if w := b.writes.total.Load(); w != 0 {
		t.Errorf("after the hand-over, %d status writes over unchanged specs; want 0", w)
	}

	// A cold restart.
	stop(b)
	c := start(nil)
	reconciledAll(c, "cold restart")
	if w := c.writes.total.Load(); w != 0 {
		t.Errorf("after a restart, %d status writes over unchanged specs; want 0", w)
	}

	// Control: a Deployment loses its pods while no controller runs; the
	// next one writes that Kaoto's status, and only it.
	stop(c)
	if err := patchDeploymentStatus(ctx, k8s, ns, name(0), false); err != nil {
		t.Fatal(err)
	}
	d := start(nil)
	defer stop(d)
	waitPhase(t, ns, name(0), PhaseProgressing, time.Minute)
	reconciledAll(d, "restart after a change")
	// A write the API server refused (409: the cache had not seen the
	// first write yet when a child event reconciled the spec again)
	// changed nothing.
	if w, own, refused := d.writes.snapshot(kaotoPath(ns, name(0))); w-refused != 1 || own-refused != 1 {
		t.Errorf("after a restart over one changed spec: %d status writes (%d refused), %d of it; want 1 accepted, of it", w, refused, own)
	}
}
