package syncwaves

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	"github.com/argoproj/gitops-engine/pkg/health"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/test/testkit"
)

// argocdNamespace is where Argo CD and its argocd-cm live.
const argocdNamespace = "argocd"

// cluster is an envtest API server and etcd with wavesmith's CRDs (Kaoto,
// Component) installed, as a cluster is before anything is synced.
type cluster struct {
	cfg *rest.Config
	c   client.Client
	// kubeconfig is a file for the processes the test starts.
	kubeconfig string
}

// startCluster starts kube-apiserver and etcd from KUBEBUILDER_ASSETS.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	assets := testkit.EnvtestAssets(t)
	env := &envtest.Environment{
		BinaryAssetsDirectory:   assets,
		CRDDirectoryPaths:       []string{filepath.Join(repoRoot(t), "kustomize", "crd", "bases")},
		ErrorIfCRDPathMissing:   true,
		ControlPlaneStopTimeout: time.Minute,
	}
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	t.Logf("envtest started in %s", time.Since(start).Round(time.Millisecond))
	// The cluster cache watches every kind, deprecated ones too (v1
	// Endpoints): no warnings in the test log.
	cfg.WarningHandler = rest.NoWarnings{}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The processes connect as cluster admins, as their service accounts
	// are bound in a real install.
	user, err := env.AddUser(envtest.User{Name: "controllers", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kcFile := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kcFile, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return &cluster{cfg: cfg, c: c, kubeconfig: kcFile}
}

// installHealthChecks puts kustomize/argocd/argocd-cm-patch.yaml into the
// cluster as Argo CD's argocd-cm (the patch holds only what wavesmith
// adds, which is all the health checks need) and reads the resource
// overrides back the way Argo CD's application controller does: through
// its settings manager, from the API server. The sync and the test judge
// health with them.
func (cl *cluster) installHealthChecks(ctx context.Context, t *testing.T) health.HealthOverride {
	t.Helper()
	path := filepath.Join(repoRoot(t), "kustomize", "argocd", "argocd-cm-patch.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if cm.Name != "argocd-cm" {
		t.Fatalf("%s patches ConfigMap %q, not argocd-cm", path, cm.Name)
	}
	cm.Namespace = argocdNamespace
	if err := cl.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argocdNamespace}}); err != nil {
		t.Fatal(err)
	}
	if err := cl.c.Create(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	kc, err := kubernetes.NewForConfig(cl.cfg)
	if err != nil {
		t.Fatal(err)
	}
	mgr := settings.NewSettingsManager(ctx, kc, argocdNamespace)
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		t.Fatalf("%s: Argo CD refuses the resource customizations: %v", path, err)
	}
	for _, gk := range []string{"designer.kaoto.io/Kaoto", "wavesmith.io/Component"} {
		if overrides[gk].HealthLua == "" {
			t.Fatalf("%s: Argo CD reads no health check for %s", path, gk)
		}
	}
	return lua.ResourceHealthOverrides(overrides)
}

// startStatus runs wavesmith-status (WAVESMITH_STATUS_BIN) as it is
// deployed, its own process, until the test ends (SIGINT, a kill after
// 10 s). A process that exits early fails the test; its output is logged
// when the test fails.
func (cl *cluster) startStatus(t *testing.T) {
	t.Helper()
	bin := testkit.Tool(t, "WAVESMITH_STATUS_BIN", "make build-status")
	testkit.StartProcess(t, bin, []string{"KUBECONFIG=" + cl.kubeconfig}, 60,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
}

// startControllers runs, until the test ends, what envtest lacks: the
// kubelet with the deployment and job controllers (delay after it first
// sees a Deployment or Job, it writes the status that makes it available
// or complete), an ingress controller (an Ingress gets a load balancer)
// and the garbage collector (an object deleted in the foreground, as Argo
// CD deletes hooks, loses its foregroundDeletion finalizer: envtest runs
// no pods, so nothing depends on it).
func (cl *cluster) startControllers(t *testing.T, delay time.Duration) {
	t.Helper()
	k := &fakeKubelet{c: cl.c, delay: delay, firstSeen: map[string]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			// A conflict or a deleted object is retried on the next tick.
			if err := k.step(ctx); err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				t.Errorf("fake controllers: %v", err)
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

type fakeKubelet struct {
	c         client.Client
	delay     time.Duration
	firstSeen map[string]time.Time
}

func (k *fakeKubelet) step(ctx context.Context) error {
	var deps appsv1.DeploymentList
	var jobs batchv1.JobList
	var ings networkingv1.IngressList
	for _, l := range []client.ObjectList{&deps, &jobs, &ings} {
		if err := k.c.List(ctx, l); err != nil {
			return err
		}
	}
	var errs []error
	for i := range deps.Items {
		d := &deps.Items[i]
		if d.DeletionTimestamp != nil || (d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas > 0) || !k.due("Deployment", d) {
			continue
		}
		r := int32(1)
		if d.Spec.Replicas != nil {
			r = *d.Spec.Replicas
		}
		now := metav1.Now()
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
			}}
		errs = append(errs, k.c.Status().Update(ctx, d))
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if j.DeletionTimestamp != nil {
			errs = append(errs, k.collect(ctx, j))
			continue
		}
		if j.Status.CompletionTime != nil || !k.due("Job", j) {
			continue
		}
		n := int32(1)
		if j.Spec.Completions != nil {
			n = *j.Spec.Completions
		}
		now := metav1.Now()
		start := metav1.NewTime(j.CreationTimestamp.Time)
		j.Status = batchv1.JobStatus{StartTime: &start, CompletionTime: &now, Succeeded: n,
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
			}}
		errs = append(errs, k.c.Status().Update(ctx, j))
	}
	for i := range ings.Items {
		ing := &ings.Items[i]
		if ing.DeletionTimestamp != nil || len(ing.Status.LoadBalancer.Ingress) > 0 || !k.due("Ingress", ing) {
			continue
		}
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10"}}
		errs = append(errs, k.c.Status().Update(ctx, ing))
	}
	return errors.Join(errs...)
}

// due reports whether delay has passed since the object (this UID) was
// first seen.
func (k *fakeKubelet) due(kind string, o client.Object) bool {
	id := kind + "/" + string(o.GetUID())
	seen, ok := k.firstSeen[id]
	if !ok {
		k.firstSeen[id] = time.Now()
		return false
	}
	return time.Since(seen) >= k.delay
}

// collect is the garbage collector's last step of a foreground deletion
// without dependents: it drops the foregroundDeletion finalizer.
func (k *fakeKubelet) collect(ctx context.Context, o client.Object) error {
	var keep []string
	for _, f := range o.GetFinalizers() {
		if f != metav1.FinalizerDeleteDependents {
			keep = append(keep, f)
		}
	}
	if len(keep) == len(o.GetFinalizers()) {
		return nil
	}
	o.SetFinalizers(keep)
	return k.c.Update(ctx, o)
}
