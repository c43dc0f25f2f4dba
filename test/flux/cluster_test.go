package flux

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/wavesmith/wavesmith/test/testkit"
)

var routeGVK = schema.GroupVersionKind{Group: "route.openshift.io", Version: "v1", Kind: "Route"}

// cluster is an envtest API server and etcd with the CRDs of wavesmith's
// kinds and of the Flux kinds kustomize-controller reads (FLUX_CRDS_DIR),
// and, optionally, OpenShift's Route.
type cluster struct {
	cfg *rest.Config
	c   client.Client
	env *envtest.Environment
	// kubeconfig is a file for the processes the tests start.
	kubeconfig string
}

// startCluster starts an API server; extra CRD folders are installed too.
func startCluster(t *testing.T, extraCRDs ...string) *cluster {
	t.Helper()
	testkit.EnvtestAssets(t)
	// envtest logs through controller-runtime's logger; without one set it
	// prints a warning with a stack trace.
	ctrllog.SetLogger(logr.Discard())
	env := &envtest.Environment{
		CRDDirectoryPaths:     append([]string{filepath.Join(repoRoot(t), "kustomize", "crd", "bases"), tool(t, "FLUX_CRDS_DIR")}, extraCRDs...),
		ErrorIfCRDPathMissing: true,
	}
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	t.Logf("envtest started in %s", time.Since(start).Round(time.Millisecond))
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kustomizev1.AddToScheme, sourcev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	// The processes connect as cluster admins, as the controllers'
	// service accounts are bound in a real install.
	user, err := env.AddUser(envtest.User{Name: "controllers", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kcFile := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, kcFile, string(kc))
	return &cluster{cfg: cfg, c: c, env: env, kubeconfig: kcFile}
}

// startProcess runs bin with the cluster's kubeconfig and env until the
// test ends (testkit.StartProcess).
func (cl *cluster) startProcess(t *testing.T, bin string, env []string, args ...string) *testkit.Process {
	t.Helper()
	return testkit.StartProcess(t, bin, append([]string{"KUBECONFIG=" + cl.kubeconfig}, env...), 80, args...)
}

// startStatus runs wavesmith-status as it is deployed: its own process.
func (cl *cluster) startStatus(t *testing.T) *testkit.Process {
	t.Helper()
	return cl.startProcess(t, tool(t, "WAVESMITH_STATUS_BIN"), nil,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
}

// kubelet plays the controllers and nodes envtest lacks: Deployments
// become available, Jobs complete, and the OpenShift router admits Routes,
// except for the objects held (Kind/namespace/name) until released.
type kubelet struct {
	cl   *cluster
	mu   sync.Mutex
	held map[string]bool
}

// startKubelet runs the kubelet until the test ends.
func (cl *cluster) startKubelet(t *testing.T, held ...string) *kubelet {
	k := &kubelet{cl: cl, held: map[string]bool{}}
	for _, h := range held {
		k.held[h] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			// A conflict or a deleted object is retried on the next tick.
			if err := k.step(ctx); err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				t.Logf("kubelet: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return k
}

// release lets the kubelet make a held object ready.
func (k *kubelet) release(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.held, id)
}

func (k *kubelet) isHeld(kind string, o metav1.Object) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.held[kind+"/"+o.GetNamespace()+"/"+o.GetName()]
}

func (k *kubelet) step(ctx context.Context) error {
	return errors.Join(k.completeJobs(ctx), k.makeDeploymentsAvailable(ctx), k.admitRoutes(ctx))
}

func (k *kubelet) makeDeploymentsAvailable(ctx context.Context) error {
	var list appsv1.DeploymentList
	if err := k.cl.c.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		d := &list.Items[i]
		if (d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas > 0) || k.isHeld("Deployment", d) {
			continue
		}
		r := int32(1)
		if d.Spec.Replicas != nil {
			r = *d.Spec.Replicas
		}
		now := metav1.Now()
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: "True", Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
				{Type: appsv1.DeploymentProgressing, Status: "True", Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
			},
		}
		if err := k.cl.c.Status().Update(ctx, d); err != nil {
			return fmt.Errorf("deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
}

// completeJobs marks every Job as complete, as the job controller would
// after its pods succeeded.
func (k *kubelet) completeJobs(ctx context.Context) error {
	var list batchv1.JobList
	if err := k.cl.c.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		j := &list.Items[i]
		if j.Status.CompletionTime != nil || k.isHeld("Job", j) {
			continue
		}
		n := int32(1)
		if j.Spec.Completions != nil {
			n = *j.Spec.Completions
		}
		now := metav1.Now()
		j.Status = batchv1.JobStatus{
			StartTime: &now, CompletionTime: &now, Succeeded: n,
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: "True", Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: "True", Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
			},
		}
		if err := k.cl.c.Status().Update(ctx, j); err != nil {
			return fmt.Errorf("job %s/%s: %w", j.Namespace, j.Name, err)
		}
	}
	return nil
}

// admitRoutes admits every Route, as the OpenShift router would; without
// the Route kind there is nothing to do.
func (k *kubelet) admitRoutes(ctx context.Context) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(routeGVK.GroupVersion().WithKind("RouteList"))
	if err := k.cl.c.List(ctx, list); meta.IsNoMatchError(err) {
		return nil
	} else if err != nil {
		return err
	}
	for i := range list.Items {
		r := &list.Items[i]
		if ing, _, _ := unstructured.NestedSlice(r.Object, "status", "ingress"); len(ing) > 0 || k.isHeld("Route", r) {
			continue
		}
		host, _, _ := unstructured.NestedString(r.Object, "spec", "host")
		_ = unstructured.SetNestedSlice(r.Object, []any{map[string]any{
			"host": host, "routerName": "default",
			"conditions": []any{map[string]any{"type": "Admitted", "status": "True"}},
		}}, "status", "ingress")
		if err := k.cl.c.Status().Update(ctx, r); err != nil {
			return fmt.Errorf("route %s/%s: %w", r.GetNamespace(), r.GetName(), err)
		}
	}
	return nil
}
