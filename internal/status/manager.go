package status

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// Options configure the controller manager.
type Options struct {
	// Namespaces to watch; all when empty.
	Namespaces []string
	// WatchLabelSelector, when set, is a label selector: the controller
	// sees and writes only the Kaoto and Component resources it selects
	// (a shard, e.g. "sharding.wavesmith.io/key=shard1"; the main instance
	// "!sharding.wavesmith.io/key"). Children are read whatever their
	// labels.
	WatchLabelSelector string
	// MetricsAddr and ProbeAddr are bind addresses ("0" disables).
	MetricsAddr, ProbeAddr string
	// LeaderElection makes one replica of several do the work (a Lease
	// named LeaderElectionID in LeaderElectionNamespace; when empty,
	// LeaseName(WatchLabelSelector), so that each shard has its own).
	LeaderElection          bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election
	// (zero: DefaultLeaseDuration, DefaultRenewDeadline, DefaultRetryPeriod).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Workers is the number of specs of each kind reconciled at once
	// (zero: DefaultWorkers). QPS and Burst limit the controller's API requests
	// (zero: DefaultQPS and DefaultBurst).
	Workers int
	QPS     float32
	Burst   int

	// several managers in one process (tests) need unique-name checks off.
	skipNameValidation bool
	// onReconcile, when set, is called after every reconcile (tests).
	onReconcile func(kind string, req ctrl.Request)
	// noChildWatches starts no watch on child kinds (a test's control:
	// child changes then reach no spec).
	noChildWatches bool
	// onWarm, when set, is called once the cache holds the specs and
	// every child kind they list (tests).
	onWarm func()
}

// DefaultQPS and DefaultBurst limit the controller's API requests when
// Options leave them zero. Nearly all of them are status writes, one per
// spec and change (reads come from the cache): a burst of 1000 lets 1000
// specs whose children became ready at once be written without waiting,
// and 500 per second sustains a larger fleet, what Flux advises for its
// controllers at scale; the API server's priority and fairness queues
// them behind the cluster's own controllers. See docs/status-controller.md.
const (
	DefaultQPS   = 500
	DefaultBurst = 1000
	// DefaultWorkers is the number of specs of each kind reconciled at
	// once: a reconcile mostly waits for its status write, so 500 writes
	// per second at 20 ms each need 10 at a time.
	DefaultWorkers = 16
)

// Leader election timings when Options leave them zero: controller-runtime's
// lease and renew deadline (a crashed leader is replaced after at most 15 s
// without a renewal; a busy API server has 10 s to answer a renewal), and a
// retry period of 1 s instead of 2 s: a standby replica looks at the Lease
// every 1 to 2.2 s (client-go adds up to 120% jitter), so that it takes over
// from a leader that gave the Lease up on its way out within that, and the
// leader renews it once a second (one small write).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = time.Second
)

// DefaultLeaderElectionID names the Lease of the unsharded controller and
// of the main instance.
const DefaultLeaderElectionID = "wavesmith-status.wavesmith.io"

// ShardKey is the label that assigns a Kaoto or Component to a shard, as
// sharding.fluxcd.io/key does for Flux's controllers.
const ShardKey = "sharding.wavesmith.io/key"

// LeaseName names the Lease of the replicas that watch the specs sel
// selects: DefaultLeaderElectionID without a selector or for the main
// instance (!sharding.wavesmith.io/key), so that sharding an installed
// controller keeps its Lease; wavesmith-status-<shard>.wavesmith.io for
// sharding.wavesmith.io/key=<shard>; else wavesmith-status-<hash of the
// selector>.wavesmith.io.
func LeaseName(sel labels.Selector) string {
	if sel == nil || sel.Empty() {
		return DefaultLeaderElectionID
	}
	if reqs, _ := sel.Requirements(); len(reqs) == 1 && reqs[0].Key() == ShardKey {
		r := reqs[0]
		switch op := r.Operator(); {
		case op == selection.DoesNotExist:
			return DefaultLeaderElectionID
		case (op == selection.Equals || op == selection.DoubleEquals || op == selection.In) && r.Values().Len() == 1:
			if v := r.Values().List()[0]; len(validation.IsDNS1123Label(v)) == 0 && len(v) <= 40 {
				return "wavesmith-status-" + v + ".wavesmith.io"
			}
		}
	}
	sum := sha256.Sum256([]byte(sel.String()))
	return fmt.Sprintf("wavesmith-status-%x.wavesmith.io", sum[:6])
}

// Scheme returns a scheme with the built-in types, Kaoto and Component.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, designerv1alpha1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// NewManager returns a manager running the Kaoto and Component status
// reconcilers, with health and readiness probes.
func NewManager(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	var specs labels.Selector
	if o.WatchLabelSelector != "" {
		sel, err := labels.Parse(o.WatchLabelSelector)
		if err != nil {
			return nil, fmt.Errorf("watch label selector %q: %w", o.WatchLabelSelector, err)
		}
		specs = sel
	}
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = LeaseName(specs)
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	// The controller's own rate limits, whatever the configuration it was
	// given carries (envtest's, for one, allows 1000 requests per second).
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	if o.QPS > 0 {
		cfg.QPS = o.QPS
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	mo := ctrl.Options{
		Scheme:                  Scheme(),
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        o.LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// A stopping leader gives the Lease up, so that the next one takes
		// over at once instead of after LeaseDuration; main exits as soon
		// as the manager stops, which this requires.
		LeaderElectionReleaseOnCancel: true,
		// Children are read as unstructured objects from the cache: an
		// informer starts for a kind on its first read.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		// The cache holds only what status needs (see trimForStatus).
		Cache: cache.Options{DefaultTransform: trimForStatus, NewInformer: newInformer},
	}
	// A replica that does not lead yet fills its cache already (the
	// specs, and their children's kinds through warmer), so that it
	// takes over with every status computable at once.
	warmup := true
	mo.Controller.EnableWarmup = &warmup
	if o.skipNameValidation {
		skip := true
		mo.Controller.SkipNameValidation = &skip
	}
	for _, d := range []struct {
		set *time.Duration
		def time.Duration
	}{{&o.LeaseDuration, DefaultLeaseDuration}, {&o.RenewDeadline, DefaultRenewDeadline}, {&o.RetryPeriod, DefaultRetryPeriod}} {
		if *d.set <= 0 {
			*d.set = d.def
		}
	}
	mo.LeaseDuration, mo.RenewDeadline, mo.RetryPeriod = &o.LeaseDuration, &o.RenewDeadline, &o.RetryPeriod
	if len(o.Namespaces) > 0 {
		mo.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.Namespaces {
			mo.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if specs != nil {
		// Only the specs of this shard are cached, hence reconciled.
		mo.Cache.ByObject = map[client.Object]cache.ByObject{
			&designerv1alpha1.Kaoto{}: {Label: specs},
			&v1alpha1.Component{}:     {Label: specs},
		}
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	kids := newChildren(mgr.GetCache(), mgr.GetClient())
	kids.noWatches = o.noChildWatches
	for _, r := range []struct {
		rec *reconciler
		obj client.Object
	}{
		{&reconciler{client: mgr.GetClient(), children: kids, kind: designerv1alpha1.Kind, newSpec: func() spec { return &kaoto{} }, now: time.Now, workers: o.Workers, reconciled: o.onReconcile}, &designerv1alpha1.Kaoto{}},
		{&reconciler{client: mgr.GetClient(), children: kids, kind: v1alpha1.ComponentKind, newSpec: func() spec { return &component{} }, now: time.Now, workers: o.Workers, reconciled: o.onReconcile}, &v1alpha1.Component{}},
	} {
		if err := r.rec.setup(mgr, r.obj); err != nil {
			return nil, fmt.Errorf("setting up the %s controller: %w", r.rec.kind, err)
		}
	}
	w := &warmer{children: kids, probe: mgr.GetAPIReader(), done: o.onWarm}
	if len(o.Namespaces) > 0 {
		w.probeOpts = append(w.probeOpts, client.InNamespace(o.Namespaces[0]))
	}
	if specs != nil {
		w.probeOpts = append(w.probeOpts, client.MatchingLabelsSelector{Selector: specs})
	}
	if err := mgr.Add(w); err != nil {
		return nil, err
	}
	if o.ProbeAddr != "" && o.ProbeAddr != "0" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// warmer runs on every replica, leader or not: it starts the informers of
// the child kinds the specs list as soon as the specs are listed, all at
// once, instead of one kind after the other on the first reconciles.
type warmer struct {
	children *children
	// probe reads one spec of each kind from the API server (probeOpts:
	// the first namespace watched, the shard's selector): the kinds it
	// lists start listing while the specs do.
	probe     client.Reader
	probeOpts []client.ListOption
	done      func()
}

// NeedLeaderElection: a standby replica warms its cache too.
func (w *warmer) NeedLeaderElection() bool { return false }

func (w *warmer) Start(ctx context.Context) error {
	if err := w.children.warm(ctx, w.probe, w.probeOpts,
		func() client.ObjectList { return &designerv1alpha1.KaotoList{} },
		func() client.ObjectList { return &v1alpha1.ComponentList{} }); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		// Not fatal: the reconciles start what is missing.
		log.FromContext(ctx).Error(err, "warming the cache")
		return nil
	}
	if w.done != nil {
		w.done()
	}
	return nil
}

// newInformer is the cache's informer constructor: an informer of a kind
// the API server sends as JSON (the specs, unstructured children) fills
// itself with a list, not a watch-list stream (client-go's default since
// 1.35). A stream sends every object as an event of its own, which the
// client frames, sniffs and decodes apart: about 3 passes over each
// object's JSON where a list takes 2 (docs/status-controller.md,
// "Restarts"). Protobuf kinds keep the stream, which costs them nothing
// more.
func newInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
	if l, ok := lw.(*toolscache.ListWatch); ok && sentAsJSON(obj) {
		lw = listNotStream{l}
	}
	return toolscache.NewSharedIndexInformer(lw, obj, resync, idx)
}

// sentAsJSON reports whether the API server sends obj's kind as JSON: a
// spec (a custom resource) or an unstructured object.
func sentAsJSON(obj runtime.Object) bool {
	switch obj.(type) {
	case *designerv1alpha1.Kaoto, *v1alpha1.Component, *unstructured.Unstructured:
		return true
	}
	return false
}

// listNotStream is a ListWatch that tells the reflector to list (client-go
// asks ListerWatchers this, see watchlist.DoesClientNotSupportWatchListSemantics).
type listNotStream struct{ *toolscache.ListWatch }

func (listNotStream) IsWatchListSemanticsUnSupported() bool { return true }
