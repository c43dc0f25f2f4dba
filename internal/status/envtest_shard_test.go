package status

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// TestShards: two controllers shard the Components of one namespace as
// Flux shards its controllers: one selects sharding.wavesmith.io/key=one,
// the main instance the specs without the label; each holds its own
// Lease. Each writes only its own specs' status. The main instance stops:
// the shard's specs still follow their children, the main instance's are
// left untouched; it starts again and its specs recover. A restart over
// unchanged specs writes no status.
func TestShards(t *testing.T) {
	ctx := context.Background()
	ns := ownNamespace(t, "wavesmith-shards")
	start := func(selector string) *runningManager {
		return runManager(t, ctx, Options{MetricsAddr: "0", ProbeAddr: "0", Namespaces: []string{ns},
			WatchLabelSelector: selector, LeaderElection: true, LeaderElectionNamespace: ns,
			LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 500 * time.Millisecond})
	}
	stop := func(r *runningManager) { r.stop(t) }
	shard, main := []string{"s1", "s2"}, []string{"m1", "m2"}
	for _, name := range append(append([]string(nil), shard...), main...) {
		e := inventory.Entry{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}
		c := &v1alpha1.Component{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{inventory.Inventory: inventory.Format([]inventory.Entry{e})}},
			Spec:       v1alpha1.ComponentSpec{Source: v1alpha1.Source{Chart: &v1alpha1.PathSource{Path: "charts/shop"}}},
		}
		if name[0] == 's' {
			c.Labels = map[string]string{ShardKey: "one"}
		}
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) *v1alpha1.Component {
		c := &v1alpha1.Component{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	wait := func(state string, names ...string) {
		t.Helper()
		for _, name := range names {
			eventually(t, time.Minute, fmt.Sprintf("Component %s %s", name, state), func() (bool, string) {
				st := get(name).Status.State
				return st == state, st
			})
		}
	}
	path := func(name string) string {
		return "/apis/wavesmith.io/v1alpha1/namespaces/" + ns + "/components/" + name
	}
	writes := func(r *runningManager, names []string) (n int) {
		for _, name := range names {
			n += r.writes.of(path(name))
		}
		return n
	}

	one := start(ShardKey + "=one")
	mainInst := start("!" + ShardKey)
	wait(StatePending, shard...)
	wait(StatePending, main...)
	waitCounted(t, "each instance's writes counted", func() bool { return writes(one, shard) > 0 && writes(mainInst, main) > 0 })
	if got := [4]int{writes(one, shard), writes(one, main), writes(mainInst, main), writes(mainInst, shard)}; got[0] == 0 || got[1] != 0 || got[2] == 0 || got[3] != 0 {
		t.Errorf("status writes (shard one: own, others'; main: own, others') = %v; want each only its own", got)
	}
	for _, lease := range []string{"wavesmith-status-one.wavesmith.io", DefaultLeaderElectionID} {
		eventually(t, time.Minute, "Lease "+lease+" held", func() (bool, string) {
			l := &coordinationv1.Lease{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: lease}, l); err != nil {
				return false, err.Error()
			}
			return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", "no holder"
		})
	}

	// The main instance stops; every child appears.
	stop(mainInst)
	before := map[string]string{}
	for _, name := range main {
		before[name] = get(name).ResourceVersion
	}
	for _, name := range append(append([]string(nil), shard...), main...) {
		if err := k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	wait(StateReady, shard...)
	// The controller's cache drops managedFields; its status writes keep
	// the API server's: the creator's entry and its own.
	managers := map[string]bool{}
	for _, f := range get(shard[0]).ManagedFields {
		managers[string(f.Operation)+"/"+f.Subresource] = true
	}
	if !managers["Update/"] || !managers["Update/status"] {
		t.Errorf("managedFields after status writes: %v; want the create's and the status writes'", managers)
	}
	for _, name := range main {
		if c := get(name); c.ResourceVersion != before[name] || c.Status.State != StatePending {
			t.Errorf("%s, of the stopped main instance, changed: resourceVersion %s -> %s, state %s", name, before[name], c.ResourceVersion, c.Status.State)
		}
	}
	if n := writes(one, main); n != 0 {
		t.Errorf("shard one wrote the main instance's specs %d times", n)
	}

	// The main instance returns: its specs recover.
	mainInst = start("!" + ShardKey)
	defer stop(mainInst)
	wait(StateReady, main...)
	if n := writes(mainInst, shard); n != 0 {
		t.Errorf("the main instance wrote shard one's specs %d times", n)
	}

	// Shard one restarts over specs that did not change: it reconciles
	// each and writes none (a status is written only when it changed).
	stop(one)
	one = start(ShardKey + "=one")
	defer stop(one)
	for _, name := range shard {
		eventually(t, time.Minute, "shard one reconciles "+name+" after its restart", func() (bool, string) {
			n := one.reconciles.of(v1alpha1.ComponentKind, ns, name)
			return n > 0, fmt.Sprintf("%d reconciles", n)
		})
	}
	if n := writes(one, shard); n != 0 {
		t.Errorf("shard one rewrote unchanged statuses %d times after its restart", n)
	}
}

// TestLeaseName: each shard has its own Lease; the main instance and an
// unsharded controller share the default one.
func TestLeaseName(t *testing.T) {
	cases := map[string]string{
		"":                                   DefaultLeaderElectionID,
		"!sharding.wavesmith.io/key":         DefaultLeaderElectionID,
		"sharding.wavesmith.io/key=one":      "wavesmith-status-one.wavesmith.io",
		"sharding.wavesmith.io/key==one":     "wavesmith-status-one.wavesmith.io",
		"sharding.wavesmith.io/key in (one)": "wavesmith-status-one.wavesmith.io",
		"sharding.wavesmith.io/key=One_1":    "wavesmith-status-846443c03d55.wavesmith.io",
		"team=a":                             "wavesmith-status-289b4946fe8b.wavesmith.io",
	}
	for sel, want := range cases {
		s, err := labels.Parse(sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := LeaseName(s); got != want {
			t.Errorf("LeaseName(%q) = %q, want %q", sel, got, want)
		}
	}
}

// TestBadWatchLabelSelector: a selector that does not parse is refused,
// naming it, before anything starts.
func TestBadWatchLabelSelector(t *testing.T) {
	_, err := NewManager(adminConfig, Options{MetricsAddr: "0", ProbeAddr: "0", WatchLabelSelector: "a b c", skipNameValidation: true})
	if err == nil || !strings.Contains(err.Error(), `"a b c"`) {
		t.Errorf("NewManager: %v; want an error naming the selector", err)
	}
}
