package status

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// TestTypedChildKinds: built-in kinds whose body status reads are cached
// typed (hence sent as protobuf); metadata-only kinds stay metadata, and
// kinds client-go has no type for (a Route, a custom Deployment) stay
// unstructured.
func TestTypedChildKinds(t *testing.T) {
	cases := map[schema.GroupVersionKind]string{
		{Group: "apps", Version: "v1", Kind: "Deployment"}:                     "*v1.Deployment",
		{Group: "", Version: "v1", Kind: "Service"}:                            "*v1.Service",
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:           "*v1.Ingress",
		{Group: "batch", Version: "v1", Kind: "Job"}:                           "*v1.Job",
		{Group: "", Version: "v1", Kind: "ConfigMap"}:                          "*v1.PartialObjectMetadata",
		{Group: "route.openshift.io", Version: "v1", Kind: "Route"}:            "*unstructured.Unstructured",
		{Group: "example.com", Version: "v1", Kind: "Deployment"}:              "*unstructured.Unstructured",
		{Group: "apps", Version: "v1", Kind: "NoSuchKind"}:                     "*unstructured.Unstructured",
		{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}:          "*v1.PodDisruptionBudget",
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}: "*v2.HorizontalPodAutoscaler",
	}
	for gvk, want := range cases {
		if got := fmt.Sprintf("%T", cacheObject(gvk)); got != want {
			t.Errorf("cacheObject(%s) is a %s, want %s", gvk, got, want)
		}
	}
}

// TestTypedChildRead: a built-in child read through its Go type (as the
// cache holds it, decoded from protobuf) is the Unstructured that reading
// it as JSON gives, less a workload's pod template (which the cache drops
// either way), and so has the same health and endpoint.
func TestTypedChildRead(t *testing.T) {
	ctx := context.Background()
	ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	om := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "n", Generation: 2, CreationTimestamp: ts,
			Annotations: map[string]string{inventory.StatusHint: "has-observed-generation"}}
	}
	replicas, completions := int32(2), int32(1)
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}}
	prefix := networkingv1.PathTypePrefix
	objs := []client.Object{
		&appsv1.Deployment{ObjectMeta: om("d"),
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, Template: template},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
				Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: ts, LastTransitionTime: ts, Reason: "MinimumReplicasAvailable"}}}},
		&appsv1.Deployment{ObjectMeta: om("progressing"),
			Spec:   appsv1.DeploymentSpec{Replicas: &replicas, Template: template},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1}},
		&corev1.Service{ObjectMeta: om("s"),
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.1",
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}, {Port: 443, TargetPort: intstr.FromInt32(8443)}}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}}}},
		&networkingv1.Ingress{ObjectMeta: om("i"),
			Spec: networkingv1.IngressSpec{TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
				Rules: []networkingv1.IngressRule{{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/api", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb.example.com"}}}}},
		&batchv1.Job{ObjectMeta: om("j"), Spec: batchv1.JobSpec{Completions: &completions, Template: template},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: &ts, CompletionTime: &ts,
				Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastProbeTime: ts, LastTransitionTime: ts}}}},
	}
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(objs...).Build()
	kids := newChildren(nil, c)
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, Scheme())
		if err != nil {
			t.Fatal(err)
		}
		key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
		t.Run(gvk.Kind+"/"+key.Name, func(t *testing.T) {
			got, err := kids.get(ctx, gvk, key)
			if err != nil {
				t.Fatal(err)
			}
			want := &unstructured.Unstructured{}
			want.SetGroupVersionKind(gvk)
			if err := c.Get(ctx, key, want); err != nil {
				t.Fatal(err)
			}
			if templated[gvk.GroupKind()] {
				unstructured.RemoveNestedField(want.Object, "spec", "template")
			}
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("typed read differs from the JSON one, -json +typed:\n%s", diff)
			}
			e := inventory.Entry{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: key.Namespace, Name: key.Name}
			wh, wm := childHealth(e, want)
			gh, gm := childHealth(e, got)
			if wh != gh || wm != gm {
				t.Errorf("health %s (%s) from the typed read, %s (%s) from the JSON one", gh, gm, wh, wm)
			}
		})
	}
}

// TestListNotStream: the informers of kinds sent as JSON (the specs,
// unstructured children) list rather than stream; typed and metadata ones
// keep client-go's watch-list stream.
func TestListNotStream(t *testing.T) {
	cases := map[string]struct {
		obj  runtime.Object
		json bool
	}{
		"Kaoto":          {&designerv1alpha1.Kaoto{}, true},
		"Component":      {&v1alpha1.Component{}, true},
		"unstructured":   {&unstructured.Unstructured{}, true},
		"typed child":    {&appsv1.Deployment{}, false},
		"metadata child": {&metav1.PartialObjectMetadata{}, false},
	}
	for name, tc := range cases {
		if got := sentAsJSON(tc.obj); got != tc.json {
			t.Errorf("%s: sentAsJSON %v, want %v", name, got, tc.json)
		}
	}
	if !watchlist.DoesClientNotSupportWatchListSemantics(listNotStream{&toolscache.ListWatch{}}) {
		t.Error("listNotStream does not turn the watch-list off")
	}
	if watchlist.DoesClientNotSupportWatchListSemantics(&toolscache.ListWatch{}) {
		t.Error("control: a plain ListWatch turns the watch-list off")
	}
}
