package status

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
)

// TestChildWatchControl is the control of TestKaotoLifecycle's "no status
// write across 10 reconciles": with child watches broken, a touched child
// reaches no spec. The old check (count writes after the touches) passes
// all the same; touchReconciles, which waits for each reconcile, fails.
func TestChildWatchControl(t *testing.T) {
	needEnvtest(t)
	ns := ownNamespace(t, "watch-control")
	var writes writeCounter
	var rc reconcileCounter
	startManager(t, countingConfig(adminConfig, &writes), Options{Namespaces: []string{ns}, onReconcile: rc.hook, noChildWatches: true})
	kaoto, kids := renderKaoto(t, ns, "designer", map[string]any{}, generators.Kubernetes)
	create(t, kids...)
	makeAvailable(t, ns, "designer")
	create(t, kaoto)
	waitPhase(t, ns, "designer", PhaseReady, time.Minute)

	n, err := touchReconciles(t, &rc, &writes, ns, "designer", 10, 5*time.Second)
	if n != 0 {
		t.Errorf("%d status writes: the old check would fail too", n)
	}
	if err == nil {
		t.Fatal("with child watches broken, touchReconciles saw a reconcile per touch: it proves nothing")
	}
	t.Logf("as expected: %v (and %d status writes: the old check passed)", err, n)
}

// setRouteStatus writes status.ingress of a Route, as a router does.
func setRouteStatus(t *testing.T, ns, name string, ingress ...any) {
	t.Helper()
	r := &unstructured.Unstructured{}
	r.SetAPIVersion("route.openshift.io/v1")
	r.SetKind("Route")
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, r); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(r.Object, ingress, "status", "ingress"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Status().Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

func admission(host, status, reason, message string) map[string]any {
	c := map[string]any{"type": "Admitted", "status": status, "lastTransitionTime": "2026-01-01T00:00:00Z"}
	if reason != "" {
		c["reason"], c["message"] = reason, message
	}
	return map[string]any{"host": host, "routerName": "default", "wildcardPolicy": "None", "conditions": []any{c}}
}

// TestKaotoRouteRejected: a router that rejects the Route's host
// (Admitted=False) leaves the Kaoto in Error, Stalled (kstatus: Failed),
// with no endpoint of the rejected host; admitted later, it is Ready.
func TestKaotoRouteRejected(t *testing.T) {
	needEnvtest(t)
	shared(t)
	ns := namespace(t)
	kaoto, kids := renderKaoto(t, ns, "taken", map[string]any{"ingress": map[string]any{"host": "kaoto.example.com"}}, generators.OpenShift)
	create(t, kaoto)
	create(t, kids...)
	makeAvailable(t, ns, "taken")
	k := waitPhase(t, ns, "taken", PhaseProgressing, time.Minute)
	if c := cond(k, ConditionIngress); c.Reason != "Progressing" || !strings.Contains(c.Message, "not admitted by a router yet") {
		t.Errorf("a Route no router answered: Ingress condition %+v", c)
	}

	setRouteStatus(t, ns, "taken", admission("kaoto.example.com", "False", "HostAlreadyClaimed", "route other already exposes kaoto.example.com and is older"))
	k = waitPhase(t, ns, "taken", PhaseError, time.Minute)
	if got := kstatusOf(t, k); got != "Failed" {
		t.Errorf("kstatus of a Kaoto whose Route was rejected: %s, want Failed (conditions %s)", got, conditionSummary(k.Status.Conditions))
	}
	if c := cond(k, ConditionStalled); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "HostAlreadyClaimed") {
		t.Errorf("Stalled: %+v", c)
	}
	if strings.Contains(k.Status.Endpoint, "kaoto.example.com") {
		t.Errorf("endpoint %q: the rejected host", k.Status.Endpoint)
	}

	setRouteStatus(t, ns, "taken", admission("kaoto.example.com", "True", "", ""))
	k = waitPhase(t, ns, "taken", PhaseReady, time.Minute)
	if k.Status.Endpoint != "https://kaoto.example.com/" {
		t.Errorf("admitted: endpoint %q", k.Status.Endpoint)
	}
	if got := kstatusOf(t, k); got != "Current" {
		t.Errorf("admitted: kstatus %s (conditions %s)", got, conditionSummary(k.Status.Conditions))
	}
}

// TestKaotoRouteRegexPath: spec.ingress.path with the nginx regex, which
// the Kaoto operator (and wavesmith, rendering as it does) copies into
// the Route, where it is matched literally. The operator reported
// https://k4-demo.apps.cluster.example/bar(/|$)(.*)/; the status must
// not report a URL of that Route, and must say why.
func TestKaotoRouteRegexPath(t *testing.T) {
	needEnvtest(t)
	shared(t)
	ns := namespace(t)
	kaoto, kids := renderKaoto(t, ns, "k4", map[string]any{"ingress": map[string]any{"path": "/bar(/|$)(.*)"}}, generators.OpenShift)
	route := byKind(kids, "Route")
	if route == nil {
		t.Fatal("the OpenShift render has no Route")
	}
	if p, _, _ := unstructured.NestedString(route.Object, "spec", "path"); p != "/bar(/|$)(.*)" {
		t.Fatalf("the render's Route path is %q: this test needs the operator's verbatim copy", p)
	}
	create(t, kaoto)
	create(t, kids...)
	makeAvailable(t, ns, "k4")
	setRouteStatus(t, ns, "k4", admission("k4-"+ns+".apps.cluster.example", "True", "", ""))
	k := waitPhase(t, ns, "k4", PhaseError, time.Minute)
	if strings.Contains(k.Status.Endpoint, "apps.cluster.example") {
		t.Errorf("endpoint %q: a URL the Route does not serve", k.Status.Endpoint)
	}
	if want := "http://k4." + ns + ".svc.cluster.local:8080/"; k.Status.Endpoint != want {
		t.Errorf("endpoint %q, want the Service's %q", k.Status.Endpoint, want)
	}
	if c := cond(k, ConditionIngress); c.Reason != ReasonPathNotServed || !strings.Contains(c.Message, "matches literally") {
		t.Errorf("Ingress condition %+v", c)
	}
	if got := kstatusOf(t, k); got != "Failed" {
		t.Errorf("kstatus %s, want Failed (conditions %s)", got, conditionSummary(k.Status.Conditions))
	}
}

// TestKaotoProgressDeadline: a Deployment past its progress deadline puts
// the Kaoto in Error with Stalled=True, which kstatus reads as Failed (so
// Flux and Argo CD stop waiting); once the Deployment recovers, Stalled
// goes and kstatus reads Current.
func TestKaotoProgressDeadline(t *testing.T) {
	needEnvtest(t)
	shared(t)
	ns := namespace(t)
	kaoto, kids := renderKaoto(t, ns, "stuck", map[string]any{}, generators.Kubernetes)
	create(t, kaoto)
	create(t, kids...)
	k := waitPhase(t, ns, "stuck", PhaseProgressing, time.Minute)
	if got := kstatusOf(t, k); got != "InProgress" {
		t.Errorf("progressing: kstatus %s (conditions %s)", got, conditionSummary(k.Status.Conditions))
	}
	if c := cond(k, ConditionReconciling); c.Status != metav1.ConditionTrue {
		t.Errorf("progressing: Reconciling %+v", c)
	}

	d := &appsv1.Deployment{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "stuck"}, d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, UnavailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "stuck-6d4cf56db6" has timed out progressing.`},
		}}
	if err := k8s.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	k = waitPhase(t, ns, "stuck", PhaseError, time.Minute)
	if got := kstatusOf(t, k); got != "Failed" {
		t.Errorf("past the deadline: kstatus %s, want Failed (conditions %s)", got, conditionSummary(k.Status.Conditions))
	}
	if c := cond(k, ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != "Error" {
		t.Errorf("past the deadline: Ready %+v", c)
	}
	if c := cond(k, ConditionReconciling); c.Type != "" {
		t.Errorf("past the deadline: Reconciling still there: %+v", c)
	}

	makeAvailable(t, ns, "stuck")
	k = waitPhase(t, ns, "stuck", PhaseReady, time.Minute)
	if got := kstatusOf(t, k); got != "Current" {
		t.Errorf("recovered: kstatus %s (conditions %s)", got, conditionSummary(k.Status.Conditions))
	}
	for _, typ := range []string{ConditionStalled, ConditionReconciling} {
		if c := cond(k, typ); c.Type != "" {
			t.Errorf("recovered: %s still there: %+v", typ, c)
		}
	}
}

// TestComponentHookPurged: a chart's pre-install hook with hook-succeeded
// (purge-order) completes and is deleted, as Argo CD does; the
// post-install hook is never created (Argo CD's PostSync waits for the
// Component). The Component becomes and stays Ready. The control lists the
// same objects without the attributes: it stays Pending.
func TestComponentHookPurged(t *testing.T) {
	needEnvtest(t)
	shared(t)
	ns := namespace(t)
	ctx := context.Background()
	zero := 0
	cm := inventory.Entry{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings"}
	pre := inventory.Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: ns, Name: "migrate", Hook: inventory.HookPreInstall, PurgeOrder: &zero}
	post := inventory.Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: ns, Name: "smoke", Hook: inventory.HookPostInstall}
	plain := func(e inventory.Entry) inventory.Entry { e.Hook, e.PurgeOrder = "", nil; return e }
	newComponent := func(name string, entries ...inventory.Entry) {
		c := &v1alpha1.Component{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{inventory.Inventory: inventory.Format(entries)}},
			Spec:       v1alpha1.ComponentSpec{Source: v1alpha1.Source{Chart: &v1alpha1.PathSource{Path: "charts/shop"}}},
		}
		if err := k8s.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	newComponent("shop", cm, pre, post)
	newComponent("control", cm, plain(pre), plain(post))
	get := func(name string) *v1alpha1.Component {
		c := &v1alpha1.Component{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	wait := func(name, state string, items map[string]string) *v1alpha1.Component {
		t.Helper()
		var c *v1alpha1.Component
		eventually(t, time.Minute, fmt.Sprintf("Component %s %s %v", name, state, items), func() (bool, string) {
			c = get(name)
			got := map[string]string{}
			for _, it := range c.Status.Inventory {
				got[it.Name] = it.Status
			}
			ok := c.Status.State == state
			for k, v := range items {
				ok = ok && got[k] == v
			}
			return ok, fmt.Sprintf("%s %v", c.Status.State, got)
		})
		return c
	}

	if err := k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: ns}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "migrate", Image: "busybox"}}}}}}
	if err := k8s.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	wait("shop", StateProcessing, map[string]string{"migrate": InProgress})

	// The hook succeeds, as the job controller would report it.
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}}
	if err := k8s.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
	c := wait("shop", StateReady, map[string]string{"settings": Current, "migrate": Current, "smoke": Absent})
	if got := kstatusOf(t, c); got != "Current" {
		t.Errorf("kstatus %s", got)
	}
	wait("control", StatePending, map[string]string{"migrate": Current, "smoke": NotFound})

	// Argo CD deletes the hook once it succeeded (HookSucceeded).
	if err := k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the Job is gone", func() (bool, string) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	c = wait("shop", StateReady, map[string]string{"settings": Current, "migrate": Absent, "smoke": Absent})
	if r := c.Status.Conditions[0]; r.Type != ConditionReady || r.Status != metav1.ConditionTrue || !strings.Contains(r.Message, "Job "+ns+"/migrate, Job "+ns+"/smoke") {
		t.Errorf("Ready condition %+v", r)
	}
	wait("control", StatePending, map[string]string{"migrate": NotFound, "smoke": NotFound})
}
