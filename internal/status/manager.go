package status

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// Options configure the controller manager.
type Options struct {
	// Namespaces to watch; all when empty.
	Namespaces []string
	// MetricsAddr and ProbeAddr are bind addresses ("0" disables).
	MetricsAddr, ProbeAddr string
	// LeaderElection makes one replica of several do the work (a Lease
	// named LeaderElectionID in LeaderElectionNamespace).
	LeaderElection          bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election
	// (zero keeps controller-runtime's defaults).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Workers is the number of specs of each kind reconciled at once
	// (default 4). QPS and Burst limit the controller's API requests
	// (defaults 50 and 100).
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
}

// DefaultLeaderElectionID names the Lease.
const DefaultLeaderElectionID = "wavesmith-status.wavesmith.io"

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
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = DefaultLeaderElectionID
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 || o.QPS > 0 {
		cfg.QPS, cfg.Burst = 50, 100
		if o.QPS > 0 {
			cfg.QPS, cfg.Burst = o.QPS, o.Burst
		}
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
	}
	if o.skipNameValidation {
		skip := true
		mo.Controller.SkipNameValidation = &skip
	}
	if o.LeaseDuration > 0 {
		mo.LeaseDuration, mo.RenewDeadline, mo.RetryPeriod = &o.LeaseDuration, &o.RenewDeadline, &o.RetryPeriod
	}
	if len(o.Namespaces) > 0 {
		mo.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.Namespaces {
			mo.Cache.DefaultNamespaces[ns] = cache.Config{}
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
