package status

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// lastApplied is the annotation kubectl apply (client-side) keeps: a copy
// of the whole object, never read here.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// templated are the workload kinds whose health kstatus computes without
// their pod template (spec.replicas, spec.updateStrategy, spec.completions
// and status): the cache drops spec.template, the bulk of their body.
var templated = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "batch", Kind: "Job"}:        true,
}

// metadataOnly are the child kinds whose health is read from their
// metadata alone (they have no status: kstatus reads them Current unless
// being deleted): they are watched and cached as metadata, their bodies
// (a ConfigMap's data, a Role's rules) never held.
var metadataOnly = map[schema.GroupKind]bool{
	{Group: "", Kind: "ConfigMap"}:                                   true,
	{Group: "", Kind: "ServiceAccount"}:                              true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
}

// trimForStatus is the cache's transform: it keeps of every object only
// what status needs. managedFields and the last-applied annotation go
// (about half the heap of a cache of rendered objects), and so does the
// pod template of a workload (see templated). Of a child (cached
// unstructured, typed or as metadata; anything but a Kaoto or Component)
// the labels go too, and every annotation but wavesmith.io/status-hint:
// rendered children carry a dozen that status never reads. Status writes
// are not affected: the API server keeps an object's managedFields when an
// update carries none, and a status update changes only the status.
func trimForStatus(obj any) (any, error) {
	switch o := obj.(type) {
	case *designerv1alpha1.Kaoto, *v1alpha1.Component:
		// A spec keeps its labels and annotations.
	case metav1.Object:
		trimChildMeta(o)
	}
	// The typed workloads' templates (typedChild); the API's older
	// versions of these kinds are not served any more.
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.StatefulSet:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.DaemonSet:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *appsv1.ReplicaSet:
		o.Spec.Template = corev1.PodTemplateSpec{}
	case *batchv1.Job:
		o.Spec.Template = corev1.PodTemplateSpec{}
	}
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
		if a := o.GetAnnotations(); a != nil {
			if _, ok := a[lastApplied]; ok {
				// An Unstructured returns a copy of its annotations.
				delete(a, lastApplied)
				o.SetAnnotations(a)
			}
		}
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && templated[u.GroupVersionKind().GroupKind()] {
		unstructured.RemoveNestedField(u.Object, "spec", "template")
	}
	return obj, nil
}

// trimChildMeta drops a child's labels and every annotation but its
// status hint.
func trimChildMeta(o metav1.Object) {
	if len(o.GetLabels()) > 0 {
		o.SetLabels(nil)
	}
	a := o.GetAnnotations()
	if len(a) == 0 {
		return
	}
	if hint, ok := a[inventory.StatusHint]; ok {
		o.SetAnnotations(map[string]string{inventory.StatusHint: hint})
	} else {
		o.SetAnnotations(nil)
	}
}
