package status

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
)

func TestComponentStatusOnAPIServer(t *testing.T) {
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
		eventually(t, 10*time.Second, "Component state "+state, func() (bool, string) {
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
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join("..", "kustomize", "status-controller", "rbac.yaml"))
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
	var writes atomic.Int64
	startManager(t, countingConfig(cfg, &writes), Options{})

	ns := ownNamespace(t, "rbac-test")
	kaoto, kids := renderKaoto(t, ns, "rbac", map[string]any{}, generators.Kubernetes)
	create(t, kaoto)
	create(t, kids...)
	makeAvailable(t, ns, "rbac")
	waitPhase(t, ns, "rbac", PhaseReady, 15*time.Second)
	if writes.Load() == 0 {
		t.Fatal("the status was not written by the impersonated manager")
	}

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

// TestLeaderElection: of two managers one leads; when it stops, the other
// takes over.
func TestLeaderElection(t *testing.T) {
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "wavesmith-le"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	o := Options{MetricsAddr: "0", ProbeAddr: "0", LeaderElection: true, LeaderElectionID: "le-test", LeaderElectionNamespace: "wavesmith-le",
		LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond, skipNameValidation: true}
	type running struct {
		cancel context.CancelFunc
		done   chan error
		leads  atomic.Bool
		name   string
	}
	start := func(name string) *running {
		cfg := rest.CopyConfig(adminConfig)
		cfg.UserAgent = name
		mgr, err := NewManager(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		r := &running{done: make(chan error, 1), name: name}
		c, cancel := context.WithCancel(ctx)
		r.cancel = cancel
		go func() { <-mgr.Elected(); r.leads.Store(true) }()
		go func() { r.done <- mgr.Start(c) }()
		return r
	}
	a, b := start("a"), start("b")
	defer func() {
		for _, r := range []*running{a, b} {
			r.cancel()
			<-r.done
		}
	}()
	var leader, follower *running
	eventually(t, 10*time.Second, "one manager leads", func() (bool, string) {
		switch {
		case a.leads.Load() && b.leads.Load():
			t.Fatal("both managers lead")
		case a.leads.Load():
			leader, follower = a, b
		case b.leads.Load():
			leader, follower = b, a
		}
		return leader != nil, "no leader yet"
	})
	lease := &coordinationv1.Lease{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "wavesmith-le", Name: "le-test"}, lease); err != nil {
		t.Fatalf("no Lease: %v", err)
	}
	leader.cancel()
	<-leader.done
	leader.done <- nil // for the deferred cleanup
	eventually(t, 15*time.Second, "the other manager takes over", func() (bool, string) {
		return follower.leads.Load(), "follower " + follower.name + " not leading"
	})
}
