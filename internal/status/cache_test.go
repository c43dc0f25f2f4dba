package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
)

// TestTrimForStatus: the cache's transform drops managedFields, the
// last-applied annotation and a workload's pod template, and keeps what
// status reads (a Service's spec, a Deployment's replicas and status, a
// child's status hint), and of a child (unstructured, typed or metadata)
// also its labels and other annotations; a typed spec keeps those.
func TestTrimForStatus(t *testing.T) {
	managed := []any{map[string]any{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}
	meta := func() map[string]any {
		return map[string]any{"name": "a", "namespace": "n", "managedFields": managed, "labels": map[string]any{"app.kubernetes.io/name": "kaoto"},
			"annotations": map[string]any{lastApplied: `{"big":"copy"}`, "wavesmith.io/status-hint": "has-ready-condition", "argocd.argoproj.io/sync-wave": "0"}}
	}
	trimmedMeta := map[string]any{"name": "a", "namespace": "n", "annotations": map[string]any{"wavesmith.io/status-hint": "has-ready-condition"}}
	cases := map[string]struct {
		in, want map[string]any
	}{
		"Deployment": {
			map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(),
				"spec":   map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{"containers": []any{}}}},
				"status": map[string]any{"readyReplicas": int64(2)}},
			map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": trimmedMeta,
				"spec": map[string]any{"replicas": int64(2)}, "status": map[string]any{"readyReplicas": int64(2)}}},
		"Service keeps its spec": {
			map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta(), "spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}},
			map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": trimmedMeta, "spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}},
		"control: a custom kind's template stays": {
			map[string]any{"apiVersion": "example.com/v1", "kind": "Deployment", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"template": "kept"}},
			map[string]any{"apiVersion": "example.com/v1", "kind": "Deployment", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"template": "kept"}}},
		"a child without a status hint keeps no annotation": {
			map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}, "annotations": map[string]any{"argocd.argoproj.io/sync-wave": "0"}}},
			map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "a"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := trimForStatus(&unstructured.Unstructured{Object: tc.in})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.(*unstructured.Unstructured).Object); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
	t.Run("typed Kaoto keeps its labels and annotations", func(t *testing.T) {
		k := &designerv1alpha1.Kaoto{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations:   map[string]string{lastApplied: "{}", "wavesmith.io/inventory": "v1/Service/n/a", "argocd.argoproj.io/sync-wave": "0"}}}
		if _, err := trimForStatus(k); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"}, Annotations: map[string]string{"wavesmith.io/inventory": "v1/Service/n/a", "argocd.argoproj.io/sync-wave": "0"}}, k.ObjectMeta); diff != "" {
			t.Errorf("-want +got:\n%s", diff)
		}
	})
	t.Run("a typed child", func(t *testing.T) {
		om := func() metav1.ObjectMeta {
			return metav1.ObjectMeta{Name: "a", Namespace: "n", Labels: map[string]string{"x": "y"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
				Annotations:   map[string]string{lastApplied: "{}", "wavesmith.io/status-hint": "has-ready-condition", "argocd.argoproj.io/sync-wave": "0"}}
		}
		trimmed := metav1.ObjectMeta{Name: "a", Namespace: "n", Annotations: map[string]string{"wavesmith.io/status-hint": "has-ready-condition"}}
		replicas := int32(2)
		template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		cases := map[string]struct{ in, want client.Object }{
			"Deployment": {
				&appsv1.Deployment{ObjectMeta: om(), Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: template}, Status: appsv1.DeploymentStatus{ReadyReplicas: 2}},
				&appsv1.Deployment{ObjectMeta: trimmed, Spec: appsv1.DeploymentSpec{Replicas: &replicas}, Status: appsv1.DeploymentStatus{ReadyReplicas: 2}}},
			"Job": {
				&batchv1.Job{ObjectMeta: om(), Spec: batchv1.JobSpec{Template: template}, Status: batchv1.JobStatus{Active: 1}},
				&batchv1.Job{ObjectMeta: trimmed, Status: batchv1.JobStatus{Active: 1}}},
			"Service keeps its spec": {
				&corev1.Service{ObjectMeta: om(), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
				&corev1.Service{ObjectMeta: trimmed, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				got, err := trimForStatus(tc.in)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("-want +got:\n%s", diff)
				}
			})
		}
	})
	t.Run("a child as metadata", func(t *testing.T) {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations:   map[string]string{lastApplied: "{}", "wavesmith.io/status-hint": "has-ready-condition", "argocd.argoproj.io/sync-wave": "0"}}}
		if _, err := trimForStatus(m); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(metav1.ObjectMeta{Name: "a", Annotations: map[string]string{"wavesmith.io/status-hint": "has-ready-condition"}}, m.ObjectMeta); diff != "" {
			t.Errorf("-want +got:\n%s", diff)
		}
	})
}
