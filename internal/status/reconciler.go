package status

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// spec is what both reconcilers need of a Kaoto or Component.
type spec interface {
	// object is the API object to read and write.
	object() client.Object
	// computeStatus sets the status from the observed children and
	// reports whether it changed.
	computeStatus(children []observed, invErr error, now metav1.Time) bool
}

type kaoto struct{ designerv1alpha1.Kaoto }

func (k *kaoto) object() client.Object { return &k.Kaoto }

func (k *kaoto) computeStatus(children []observed, invErr error, now metav1.Time) bool {
	st := kaotoStatus(&k.Kaoto, children, invErr, now)
	if equality.Semantic.DeepEqual(st, k.Status) {
		return false
	}
	k.Status = st
	return true
}

type component struct{ v1alpha1.Component }

func (c *component) object() client.Object { return &c.Component }

func (c *component) computeStatus(children []observed, invErr error, now metav1.Time) bool {
	st := componentStatus(&c.Component, children, invErr, now)
	if equality.Semantic.DeepEqual(st, c.Status) {
		return false
	}
	c.Status = st
	return true
}

// reconciler projects the health of a spec's children onto its status.
type reconciler struct {
	client   client.Client
	children *children
	kind     string
	newSpec  func() spec
	// now is the clock; tests replace it.
	now     func() time.Time
	workers int
	// reconciled, when set, is called at the end of every Reconcile
	// (tests count reconciles with it).
	reconciled func(kind string, req ctrl.Request)
}

// Reconcile reads the spec and its children and writes the status when it
// changed. A spec that is gone is forgotten.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.reconciled != nil {
		defer r.reconciled(r.kind, req)
	}
	o := owner{kind: r.kind, key: req.NamespacedName}
	requeue := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := r.newSpec()
		obj := s.object()
		if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
			if apierrors.IsNotFound(err) {
				r.children.forget(o)
				return nil
			}
			return err
		}
		entries, invErr := inventory.Parse(obj.GetAnnotations()[inventory.Inventory])
		r.children.track(o, entries)
		observed, err := r.children.read(ctx, entries)
		if err != nil {
			return err
		}
		for _, ob := range observed {
			// A kind the API server does not serve yet (a CRD applied in a
			// later wave) is watched once it exists; look again meanwhile.
			if ob.Health == NotFound && ob.Object == nil && !r.children.isWatched(ob.Entry) {
				requeue = true
			}
		}
		if !s.computeStatus(observed, invErr, metav1.NewTime(r.now().Truncate(time.Second))) {
			return nil
		}
		log.FromContext(ctx).V(1).Info("writing status", "kind", r.kind, "name", req.NamespacedName)
		return r.client.Status().Update(ctx, obj)
	})
	if requeue {
		return ctrl.Result{RequeueAfter: 10 * time.Second}, err
	}
	return ctrl.Result{}, err
}

// setup builds the controller of one spec kind and registers it for child
// events.
func (r *reconciler) setup(mgr ctrl.Manager, obj client.Object) error {
	c, err := builder.ControllerManagedBy(mgr).
		Named(r.kind).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.workers}).
		For(obj, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Build(r)
	if err != nil {
		return err
	}
	r.children.register(r.kind, c)
	return nil
}
