// Package flux tests wavesmith's Flux output with Flux's own code: the flux
// CLI (flux build kustomization) and fluxcd/pkg/ssa, the apply engine of
// kustomize-controller, against a real kube-apiserver and etcd (envtest).
// It is a module of its own because Flux pins other k8s.io versions than
// wavesmith.
package flux

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautils "github.com/fluxcd/pkg/ssa/utils"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// repoRoot is the wavesmith checkout holding this module.
func repoRoot(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// tool returns the binary an environment variable names; a missing tool
// fails the test with how to build it (make test builds them all).
func tool(t testing.TB, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set: run the tests through 'make test' (or 'make e2e'), which builds the tools into bin/ and sets it", env)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v: run 'make test', which builds it", env, p, err)
	}
	return p
}

// run runs a command in dir and returns its stdout; a failure fails t.
func run(t testing.TB, dir string, name string, args ...string) []byte {
	t.Helper()
	out, stderr, err := runErr(dir, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr)
	}
	return out
}

func runErr(dir string, name string, args ...string) ([]byte, []byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	return out.Bytes(), stderr.Bytes(), err
}

// copyDir copies the regular files under src to dst.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ksFile is the part of a generated Flux Kustomization the tests read.
type ksFile struct {
	File     string
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Path      string `json:"path"`
		DependsOn []struct {
			Name string `json:"name"`
		} `json:"dependsOn"`
		Wait  bool `json:"wait"`
		Prune bool `json:"prune"`
	} `json:"spec"`
}

// kustomizations reads DIR/flux/wave-*.yaml and returns them in an order
// that respects dependsOn (failing on a dependency that does not exist
// or a cycle), the order kustomize-controller reconciles them in.
func kustomizations(t testing.TB, dir string) []ksFile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "flux", "wave-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Kustomizations in %s/flux: %v", dir, err)
	}
	byName := map[string]ksFile{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var k ksFile
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		k.File = f
		byName[k.Metadata.Name] = k
	}
	var order []ksFile
	done := map[string]bool{}
	var visit func(name string, stack []string)
	visit = func(name string, stack []string) {
		if done[name] {
			return
		}
		for _, s := range stack {
			if s == name {
				t.Fatalf("dependency cycle: %v", append(stack, name))
			}
		}
		k, ok := byName[name]
		if !ok {
			t.Fatalf("%s depends on Kustomization %s, which is not generated", stack[len(stack)-1], name)
		}
		for _, d := range k.Spec.DependsOn {
			visit(d.Name, append(stack, name))
		}
		done[name] = true
		order = append(order, k)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		visit(n, nil)
	}
	return order
}

// build runs kustomize over a wave folder as kustomize-controller does:
// plugins disabled, load restrictions none.
func build(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	k := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: kustypes.LoadRestrictionsNone, PluginConfig: kustypes.DisabledPluginConfig()})
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	b, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ssautils.ReadObjects(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// cluster is an envtest API server with Flux's apply engine.
type cluster struct {
	cfg *rest.Config
	c   client.Client
	rm  *ssa.ResourceManager
	env *envtest.Environment
	// inventory is what each Kustomization's status.inventory would hold.
	inventory map[string]object.ObjMetadataSet
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, b)); assets == "" || err != nil {
			t.Fatalf("KUBEBUILDER_ASSETS=%q lacks %s: run 'make test', which builds kube-apiserver and etcd into bin/", assets, b)
		}
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(repoRoot(t), "kustomize", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	rm := ssa.NewResourceManager(c, polling.NewStatusPoller(c, mapper, polling.Options{}),
		ssa.Owner{Field: "kustomize-controller", Group: "kustomize.toolkit.fluxcd.io"})
	return &cluster{cfg: cfg, c: c, rm: rm, env: env, inventory: map[string]object.ObjMetadataSet{}}
}

// reconcile does what kustomize-controller does for one Kustomization with
// prune and wait (internal/controller/kustomization_controller.go: build,
// normalize, owner labels, ApplyAllStaged with the controller's selectors,
// inventory without skipped entries, garbage collection of stale entries
// by owner labels, then a health check of the applied set).
func (cl *cluster) reconcile(t *testing.T, ctx context.Context, name, namespace, dir string) *ssa.ChangeSet {
	t.Helper()
	objects := build(t, dir)
	if err := normalize.UnstructuredList(objects); err != nil {
		t.Fatalf("%s: normalize: %v", name, err)
	}
	cl.rm.SetOwnerLabels(objects, name, namespace)
	opts := ssa.DefaultApplyOptions()
	opts.WaitTimeout = time.Minute
	opts.ExclusionSelector = map[string]string{
		"kustomize.toolkit.fluxcd.io/reconcile": "disabled",
		"kustomize.toolkit.fluxcd.io/ssa":       "Ignore",
	}
	opts.IfNotPresentSelector = map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}
	opts.ForceSelector = map[string]string{"kustomize.toolkit.fluxcd.io/force": "Enabled"}
	withSkipped, err := cl.rm.ApplyAllStaged(ctx, objects, opts)
	if err != nil {
		t.Fatalf("Kustomization %s: apply: %v", name, err)
	}
	applied := ssa.NewChangeSet()
	skipped := map[object.ObjMetadata]bool{}
	for _, e := range withSkipped.Entries {
		if e.Action == ssa.SkippedAction {
			skipped[e.ObjMetadata] = true
		} else {
			applied.Add(e)
		}
	}
	newInv := applied.ToObjMetadataSet()
	var stale []*unstructured.Unstructured
	for _, id := range cl.inventory[name] {
		if !newInv.Contains(id) && !skipped[id] {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(id.GroupKind.WithVersion(versionOf(t, cl, id)))
			u.SetNamespace(id.Namespace)
			u.SetName(id.Name)
			stale = append(stale, u)
		}
	}
	cl.inventory[name] = newInv
	if len(stale) > 0 {
		if _, err := cl.rm.DeleteAll(ctx, stale, ssa.DeleteOptions{
			PropagationPolicy: metav1.DeletePropagationBackground,
			Inclusions:        cl.rm.GetOwnerLabels(name, namespace),
			Exclusions: map[string]string{
				"kustomize.toolkit.fluxcd.io/prune":     "disabled",
				"kustomize.toolkit.fluxcd.io/reconcile": "disabled",
			},
		}); err != nil {
			t.Fatalf("Kustomization %s: prune: %v", name, err)
		}
	}
	if err := cl.rm.WaitForSetWithContext(ctx, newInv, ssa.WaitOptions{Interval: 200 * time.Millisecond, Timeout: time.Minute}); err != nil {
		t.Fatalf("Kustomization %s: health check: %v", name, err)
	}
	return withSkipped
}

// versionOf finds a served version of a kind (inventory entries record it;
// the test keeps only group and kind).
func versionOf(t *testing.T, cl *cluster, id object.ObjMetadata) string {
	m, err := cl.c.RESTMapper().RESTMapping(id.GroupKind)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	return m.Resource.Version
}

// kubelet makes every Deployment available, as the deployment controller
// and kubelets would, until the context ends.
func (cl *cluster) kubelet(ctx context.Context) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			_ = cl.markDeploymentsAvailable(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	return &wg
}

func (cl *cluster) markDeploymentsAvailable(ctx context.Context) error {
	if err := cl.completeJobs(ctx); err != nil {
		return err
	}
	var list appsv1.DeploymentList
	if err := cl.c.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		d := &list.Items[i]
		if d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas > 0 {
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
		if err := cl.c.Status().Update(ctx, d); err != nil {
			return fmt.Errorf("deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
}

// ids formats objects as Kind/namespace/name, sorted.
func ids(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(out)
	return out
}

// completeJobs marks every Job as complete, as the job controller would
// after its pods succeeded.
func (cl *cluster) completeJobs(ctx context.Context) error {
	var list batchv1.JobList
	if err := cl.c.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		j := &list.Items[i]
		if j.Status.CompletionTime != nil {
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
		if err := cl.c.Status().Update(ctx, j); err != nil {
			return fmt.Errorf("job %s/%s: %w", j.Namespace, j.Name, err)
		}
	}
	return nil
}
