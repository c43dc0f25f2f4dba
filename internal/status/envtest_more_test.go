package status

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
)

func TestComponentStatusOnAPIServer(t *testing.T) {
	needEnvtest(t)
	shared(t)
	ns := namespace(t)
	entries := []inventory.Entry{
		{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: "web"},
		{Version: "v1", Kind: "Secret", Namespace: ns, Name: "creds"},
	}
	c := &v1alpha1.Component{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Annotations: map[string]string{inventory.Inventory: inventory.Format(entries)}},
		Spec:       v1alpha1.ComponentSpec{Source: v1alpha1.Source{Chart: &v1alpha1.PathSource{Path: "charts/web"}}},
	}
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	get := func() *v1alpha1.Component {
		got := &v1alpha1.Component{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	waitState := func(state string) *v1alpha1.Component {
		var got *v1alpha1.Component
		eventually(t, time.Minute, "Component state "+state, func() (bool, string) {
			got = get()
			return got.Status.State == state, fmt.Sprintf("%s %v", got.Status.State, got.Status.Inventory)
		})
		return got
	}
	waitState(StatePending)
	if err := k8s.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	replicas := int32(1)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	if err := k8s.Create(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	waitState(StateProcessing)
	makeAvailable(t, ns, "web")
	got := waitState(StateReady)
	statuses := map[string]string{}
	for _, it := range got.Status.Inventory {
		statuses[it.Kind] = it.Status
	}
	want := map[string]string{"ConfigMap": Current, "Deployment": Current, "Secret": Unknown}
	for k, v := range want {
		if statuses[k] != v {
			t.Errorf("inventory status of %s: %q, want %q (%v)", k, statuses[k], v, got.Status.Inventory)
		}
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != "Ready" || got.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("Ready condition: %+v", got.Status.Conditions)
	}
}

// TestShippedRBAC runs the controller as the service account of
// kustomize/status-controller with its ClusterRole: it works, and the same
// account may not write a Deployment.
func TestShippedRBAC(t *testing.T) {
	needEnvtest(t)
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join("..", "..", "kustomize", "status-controller", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if strings.Contains(doc, "kind: ClusterRole\n") {
			if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if role.Name != "wavesmith-status" || len(role.Rules) == 0 {
		t.Fatalf("no ClusterRole wavesmith-status in rbac.yaml")
	}
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			if res == "secrets" {
				t.Errorf("the shipped ClusterRole grants access to Secrets")
			}
		}
		for _, v := range r.Verbs {
			if v == "create" || v == "delete" || (v == "update" || v == "patch") && !strings.HasSuffix(r.Resources[0], "/status") {
				t.Errorf("the shipped ClusterRole grants %s on %v", v, r.Resources)
			}
		}
	}
	sa := "system:serviceaccount:wavesmith-system:wavesmith-status"
	role.ResourceVersion = ""
	role.Name = "wavesmith-status-test"
	if err := k8s.Create(ctx, &role); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "wavesmith-status-test"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: sa}}}
	if err := k8s.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(adminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: sa}
	var writes writeCounter
	startManager(t, countingConfig(cfg, &writes), Options{})

	ns := ownNamespace(t, "rbac-test")
	kaoto, kids := renderKaoto(t, ns, "rbac", map[string]any{}, generators.Kubernetes)
	create(t, kaoto)
	create(t, kids...)
	makeAvailable(t, ns, "rbac")
	waitPhase(t, ns, "rbac", PhaseReady, time.Minute)
	waitCounted(t, "the status was not written by the impersonated manager", func() bool { return writes.total.Load() > 0 })

	as, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	if err := as.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rbac"}, d); err != nil {
		t.Fatalf("the account must read Deployments: %v", err)
	}
	d.Spec.Replicas = new(int32)
	if err := as.Update(ctx, d); !apierrors.IsForbidden(err) {
		t.Errorf("updating a Deployment as the controller: %v, want Forbidden", err)
	}
	if err := as.Delete(ctx, d); !apierrors.IsForbidden(err) {
		t.Errorf("deleting a Deployment as the controller: %v, want Forbidden", err)
	}
	if err := as.Get(ctx, client.ObjectKey{Namespace: ns, Name: "any"}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading a Secret as the controller: %v, want Forbidden", err)
	}
}

// TestLeaderElection: of two managers one leads, as the Lease's
// holderIdentity says, and only it writes status; when it stops, it gives
// the Lease up at once (LeaderElectionReleaseOnCancel: without it the
// Lease stays its own until LeaseDuration passes) and the other takes
// over and writes. The hand-over time is logged, not checked.
func TestLeaderElection(t *testing.T) {
	needEnvtest(t)
	ctx := context.Background()
	ns := ownNamespace(t, "wavesmith-le")
	// Generous timings: a leader that cannot renew within RenewDeadline on
	// a busy machine would stop, which is not what this test is about.
	o := Options{MetricsAddr: "0", ProbeAddr: "0", LeaderElection: true, LeaderElectionID: "le-test", LeaderElectionNamespace: ns, Namespaces: []string{ns},
		LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 500 * time.Millisecond, skipNameValidation: true}
	type running struct {
		cancel context.CancelFunc
		done   chan error
		writes writeCounter
	}
	start := func(name string) *running {
		r := &running{done: make(chan error, 1)}
		cfg := countingConfig(adminConfig, &r.writes)
		cfg.UserAgent = name
		mgr, err := NewManager(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithCancel(ctx)
		r.cancel = cancel
		go func() { r.done <- mgr.Start(c) }()
		t.Cleanup(func() {
			cancel()
			if err := <-r.done; err != nil {
				t.Errorf("manager %s: %v", name, err)
			}
			r.done <- nil // a second receive (the test's own) returns at once
		})
		return r
	}
	holder := func() string {
		lease := &coordinationv1.Lease{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "le-test"}, lease); err != nil {
			if apierrors.IsNotFound(err) {
				return ""
			}
			t.Fatal(err)
		}
		if lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
	kaotoPending := func(name string) {
		t.Helper()
		k := &designerv1alpha1.Kaoto{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		if err := k8s.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		waitPhase(t, ns, name, PhasePending, time.Minute)
	}

	// a starts alone: the Lease's holder is a.
	a := start("a")
	var idA string
	eventually(t, time.Minute, "a holds the Lease", func() (bool, string) {
		idA = holder()
		return idA != "", "no holder"
	})
	b := start("b")
	kaotoPending("first")
	waitCounted(t, "leader a wrote no status", func() bool { return a.writes.total.Load() > 0 })
	if n := b.writes.total.Load(); n != 0 {
		t.Errorf("status writes: follower b %d, want none", n)
	}
	if h := holder(); h != idA {
		t.Fatalf("the Lease moved from a (%s) to %s while a ran", idA, h)
	}

	// a stops: it releases the Lease before Start returns.
	stopped := time.Now()
	a.cancel()
	if err := <-a.done; err != nil {
		t.Errorf("manager a: %v", err)
	}
	a.done <- nil
	if h := holder(); h == idA {
		t.Errorf("a stopped and still holds the Lease: the next leader waits out LeaseDuration (%v)", o.LeaseDuration)
	}
	var idB string
	eventually(t, 2*o.LeaseDuration, "b holds the Lease", func() (bool, string) {
		idB = holder()
		return idB != "" && idB != idA, "holder " + idB
	})
	t.Logf("hand-over: b holds the Lease %v after a was told to stop", time.Since(stopped).Round(time.Millisecond))
	kaotoPending("second")
	waitCounted(t, "b leads and wrote no status", func() bool { return b.writes.total.Load() > 0 })
}
