package status

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// TestComponentHookJob: a Component's post-install hook Job, with the
// status fields the job controller writes (envtest runs no job
// controller; the test writes them through the status subresource). A
// started or running hook keeps the Component Processing (kstatus alone
// reads a started Job as Current); a complete one is Current and the
// Component Ready; a failed one fails it. The control lists the running
// Job without hook=: kstatus's reading stands and the Component is Ready.
func TestComponentHookJob(t *testing.T) {
	shared(t)
	ns := namespace(t)
	ctx := context.Background()
	started := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	finished := metav1.NewTime(started.Add(time.Minute))
	zero, one := int32(0), int32(1)
	type want struct{ State, Job, Kstatus string }
	cases := map[string]struct {
		hook   string
		status batchv1.JobStatus
		want   want
	}{
		"started": {inventory.HookPostInstall,
			batchv1.JobStatus{StartTime: &started, Active: 1, Ready: &zero},
			want{StateProcessing, InProgress, "InProgress"}},
		"running": {inventory.HookPostInstall,
			batchv1.JobStatus{StartTime: &started, Active: 1, Ready: &one},
			want{StateProcessing, InProgress, "InProgress"}},
		"complete": {inventory.HookPostInstall,
			batchv1.JobStatus{StartTime: &started, CompletionTime: &finished, Succeeded: 1, Ready: &zero, Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: finished},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: finished}}},
			want{StateReady, Current, "Current"}},
		"failed": {inventory.HookPostInstall,
			batchv1.JobStatus{StartTime: &started, Failed: 1, Ready: &zero, Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: finished},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: finished}}},
			want{StateError, Failed, "Failed"}},
		"control-running-plain": {"",
			batchv1.JobStatus{StartTime: &started, Active: 1, Ready: &one},
			want{StateReady, Current, "Current"}},
	}
	if err := k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		cm := inventory.Entry{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings"}
		job := inventory.Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: ns, Name: name, Hook: tc.hook}
		c := &v1alpha1.Component{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{inventory.Inventory: inventory.Format([]inventory.Entry{cm, job})}},
			Spec:       v1alpha1.ComponentSpec{Source: v1alpha1.Source{Chart: &v1alpha1.PathSource{Path: "charts/shop"}}},
		}
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "smoke", Image: "busybox"}}}}}}
		if err := k8s.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		j.Status = tc.status
		if err := k8s.Status().Update(ctx, j); err != nil {
			t.Fatalf("%s: writing the Job status: %v", name, err)
		}
	}
	for name, tc := range cases {
		var got want
		eventually(t, time.Minute, fmt.Sprintf("Component %s: %+v", name, tc.want), func() (bool, string) {
			c := &v1alpha1.Component{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
				t.Fatal(err)
			}
			got = want{State: c.Status.State}
			for _, it := range c.Status.Inventory {
				if it.Kind == "Job" {
					got.Job = it.Status
				}
			}
			if got.State != "" {
				got.Kstatus = kstatusOf(t, c)
			}
			return cmp.Diff(tc.want, got) == "", fmt.Sprintf("%+v", got)
		})
	}
}
