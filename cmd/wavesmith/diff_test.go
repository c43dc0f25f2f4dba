package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/wavesmith/wavesmith/internal/kubetest"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/livediff"
	"github.com/wavesmith/wavesmith/manifest"
)

// The diff tests run against a real kube-apiserver and etcd (envtest),
// started on first use with the Kaoto and Component CRDs installed, and
// stopped by TestMain.
var envtestCluster struct {
	once       sync.Once
	c          *kubetest.Cluster
	kubeconfig string
	err        error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if c := envtestCluster.c; c != nil {
		_ = c.Stop()
		_ = os.RemoveAll(filepath.Dir(envtestCluster.kubeconfig))
	}
	os.Exit(code)
}

func cluster(t *testing.T) (*kubetest.Cluster, string) {
	t.Helper()
	testtool.Inputs(t) // the envtest binaries and CRDs
	e := &envtestCluster
	e.once.Do(func() {
		e.c, e.err = kubetest.Start(filepath.Join("..", "..", "bin"), filepath.Join("..", "..", "kustomize", "crd", "bases"))
		if e.err != nil {
			return
		}
		dir, err := os.MkdirTemp("", "wavesmith-diff-test")
		if err != nil {
			e.err = err
			return
		}
		e.kubeconfig, e.err = e.c.Kubeconfig(dir)
	})
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.c, e.kubeconfig
}

// applyStream applies every object of a YAML stream server-side with
// livediff's field manager, in order, waiting for the kinds of CRDs applied
// before to be served.
func applyStream(t *testing.T, c *kubetest.Cluster, stream string) {
	t.Helper()
	objs, err := manifest.Decode("stream", []byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(c.Config)))
	ctx := context.Background()
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: o.Map}
		gvk := u.GroupVersionKind()
		var m *meta.RESTMapping
		deadline := time.Now().Add(30 * time.Second)
		for {
			m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err == nil || !meta.IsNoMatchError(err) || time.Now().After(deadline) {
				break
			}
			mapper.Reset()
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s: %v", o.Key(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		body, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		force := true
		if _, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: livediff.FieldManager, Force: &force}); err != nil {
			t.Fatalf("applying %s: %v", o.Key(), err)
		}
	}
}

// headers are the objects a diff output names, in order.
func headers(out string) []string {
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^\+\+\+ (\S+) \(`).FindAllStringSubmatch(out, -1) {
		keys = append(keys, m[1])
	}
	return keys
}

// changedLines are the - and + lines of a diff, without its headers.
func changedLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			lines = append(lines, l)
		}
	}
	return lines
}

func writeInput(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiffAgainstCluster walks one cluster from empty to applied to
// drifted: the steps depend on each other and run in order.
func TestDiffAgainstCluster(t *testing.T) {
	c, kubeconfig := cluster(t)

	code, stream, stderr := wavesmith(t, "", "render", examples)
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	objs, err := manifest.Decode("stream", []byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	var renderOrder []string
	for _, o := range objs {
		renderOrder = append(renderOrder, o.Key().String())
	}

	// (a) An empty cluster: every object is new, in the render's order.
	code, out, stderr := wavesmith(t, "", "diff", examples, "--kubeconfig", kubeconfig)
	if code != exitError {
		t.Fatalf("empty cluster: exit %d, want %d: %s", code, exitError, stderr)
	}
	if diff := cmp.Diff(renderOrder, headers(out)); diff != "" {
		t.Errorf("empty cluster: objects shown (-render order +diff):\n%s", diff)
	}
	for _, want := range []string{
		"--- /dev/null\n+++ Namespace/demo (new)\n",
		"+++ Deployment.apps/demo/my-kaoto (new; not checked by the API server: its Namespace is created by this render)\n",
		"+++ Widget.example.com/operators/first (new; not checked by the API server: its CustomResourceDefinition is created by this render)\n",
		"+  replicas: 1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("empty cluster: the diff lacks %q", want)
		}
	}
	if !strings.Contains(stderr, fmt.Sprintf("applying would create %d and change 0 of %d objects", len(renderOrder), len(renderOrder))) {
		t.Errorf("empty cluster: stderr %q", stderr)
	}

	// (b) Once applied with the same field manager, nothing would change:
	// the control that the diff is not always non-empty. The kubeconfig
	// comes from KUBECONFIG here.
	applyStream(t, c, stream)
	t.Setenv("KUBECONFIG", kubeconfig)
	code, out, stderr = wavesmith(t, "", "diff", examples)
	if code != exitOK || out != "" {
		t.Fatalf("applied: exit %d, want 0 and no output; stdout:\n%s\nstderr: %s", code, out, stderr)
	}

	// (c) A field changed live shows as that field only.
	dyn := dynamic.NewForConfigOrDie(c.Config)
	deployments := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("demo")
	if _, err := deployments.Patch(context.Background(), "my-kaoto", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = wavesmith(t, "", "diff", examples)
	if code != exitError {
		t.Fatalf("drifted: exit %d, want %d: %s", code, exitError, stderr)
	}
	if diff := cmp.Diff([]string{"Deployment.apps/demo/my-kaoto"}, headers(out)); diff != "" {
		t.Errorf("drifted: objects shown (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"-  replicas: 3", "+  replicas: 1"}, changedLines(out)); diff != "" {
		t.Errorf("drifted: changed lines (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(out, "--- Deployment.apps/demo/my-kaoto (live)\n+++ Deployment.apps/demo/my-kaoto (after apply)\n") {
		t.Errorf("drifted: headers:\n%s", out)
	}
}

func TestDiffSecretValuesMasked(t *testing.T) {
	c, kubeconfig := cluster(t)
	secret := func(password string) string {
		return `apiVersion: v1
kind: Namespace
metadata:
  name: vault
---
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: vault
stringData:
  user: admin-user-name
  password: ` + password + "\n"
	}
	in := writeInput(t, "secret.yaml", secret("hunter2-first"))
	secretValues := regexp.MustCompile(`admin-user-name|hunter2|YWRtaW4tdXNlci1uYW1l|aHVudGVyMi1`)

	code, out, stderr := wavesmith(t, "", "diff", in, "--kubeconfig", kubeconfig)
	if code != exitError || !strings.Contains(out, "+  password: (sensitive)\n") {
		t.Fatalf("new Secret: exit %d, stdout:\n%s\nstderr: %s", code, out, stderr)
	}
	if secretValues.MatchString(out + stderr) {
		t.Errorf("new Secret: a value is shown:\n%s", out)
	}

	code, stream, stderr := wavesmith(t, "", "render", in)
	if code != exitOK {
		t.Fatalf("render: %s", stderr)
	}
	applyStream(t, c, stream)
	code, out, _ = wavesmith(t, "", "diff", in, "--kubeconfig", kubeconfig)
	if code != exitOK || out != "" {
		t.Fatalf("applied Secret: exit %d, stdout:\n%s", code, out)
	}

	in2 := writeInput(t, "secret.yaml", secret("hunter2-second"))
	code, out, _ = wavesmith(t, "", "diff", in2, "--kubeconfig", kubeconfig)
	if code != exitError {
		t.Fatalf("changed Secret: exit %d", code)
	}
	if diff := cmp.Diff([]string{"-  password: (sensitive)", "+  password: (sensitive, changed)"}, changedLines(out)); diff != "" {
		t.Errorf("changed Secret: changed lines (-want +got):\n%s\n%s", diff, out)
	}
	if secretValues.MatchString(out) {
		t.Errorf("changed Secret: a value is shown:\n%s", out)
	}
}

func TestDiffUnknownKind(t *testing.T) {
	_, kubeconfig := cluster(t)
	in := writeInput(t, "gadget.yaml", `apiVersion: gadgets.example.org/v1
kind: Gadget
metadata:
  name: g1
  namespace: default
spec:
  size: 2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: beside-the-gadget
  namespace: default
data:
  a: b
`)
	code, out, stderr := wavesmith(t, "", "diff", in, "--kubeconfig", kubeconfig)
	if code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	want := "error: Gadget.gadgets.example.org/default/g1: the cluster has no kind Gadget in gadgets.example.org/v1: install its CustomResourceDefinition first\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	if diff := cmp.Diff([]string{"ConfigMap/default/beside-the-gadget"}, headers(out)); diff != "" {
		t.Errorf("the other objects are still compared (-want +got):\n%s", diff)
	}
}

func TestDiffMissingNamespace(t *testing.T) {
	_, kubeconfig := cluster(t)
	in := writeInput(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lost\n  namespace: nowhere\ndata:\n  a: b\n")
	code, out, stderr := wavesmith(t, "", "diff", in, "--kubeconfig", kubeconfig)
	want := `error: ConfigMap/nowhere/lost: namespace "nowhere" does not exist and the render does not create it`
	if code != exitError || out != "" || !strings.Contains(stderr, want) {
		t.Errorf("exit %d (want %d), stdout %q (want none), stderr %q (want %q)", code, exitError, out, stderr, want)
	}
}

func TestDiffHelp(t *testing.T) {
	code, out, _ := wavesmith(t, "", "diff", "--help")
	for _, want := range []string{livediff.FieldManager, "dryRun=All", "no longer has and that\nexist, are shown as deleted", "Exit codes: 0 nothing would change", "--kubeconfig", "--context", "(sensitive)"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("diff --help (exit %d) lacks %q", code, want)
		}
	}
}

func TestDiffBadInput(t *testing.T) {
	_, kubeconfig := cluster(t)
	in := writeInput(t, "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n")
	code, out, stderr := wavesmith(t, "", "diff", in, "--kubeconfig", kubeconfig)
	if code != exitError || out != "" || !strings.Contains(stderr, "bad.yaml:") {
		t.Errorf("malformed YAML: exit %d (want %d), stdout %q (want none), stderr %q", code, exitError, out, stderr)
	}
}

func TestDiffUsage(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for name, args := range map[string][]string{
		"no kubeconfig":      {"diff", examples},
		"missing kubeconfig": {"diff", examples, "--kubeconfig", filepath.Join(t.TempDir(), "nope")},
		"unknown flag":       {"diff", examples, "--no-such-flag"},
		"bad setting":        {"diff", examples, "--platform", "mars"},
	} {
		code, out, stderr := wavesmith(t, "", args...)
		if code != exitUsage || out != "" {
			t.Errorf("%s: exit %d (want %d), stdout %q, stderr %q", name, code, exitUsage, out, stderr)
		}
	}
}

// TestDiffPrune: a child the applied spec's inventory lists and the render
// no longer has is shown as deleted, listed by its spec. The control: the
// same cluster before the child was dropped shows nothing.
func TestDiffPrune(t *testing.T) {
	c, kubeconfig := cluster(t)
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prune-test\n")
	write("component.yaml", "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: settings\n  namespace: prune-test\nspec:\n  source:\n    kustomization:\n      path: kust\n")
	write("kust/kustomization.yaml", "resources: [a.yaml, b.yaml]\n")
	write("kust/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n")
	write("kust/b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n")

	code, stream, stderr := wavesmith(t, "", "render", dir)
	if code != exitOK {
		t.Fatalf("render: %s", stderr)
	}
	applyStream(t, c, stream)
	code, out, stderr := wavesmith(t, "", "diff", dir, "--kubeconfig", kubeconfig)
	if code != exitOK || out != "" {
		t.Fatalf("applied render (control): exit %d, stdout:\n%s\nstderr: %s", code, out, stderr)
	}

	write("kust/kustomization.yaml", "resources: [a.yaml]\n")
	code, out, stderr = wavesmith(t, "", "diff", dir, "--kubeconfig", kubeconfig)
	if code != exitError {
		t.Fatalf("dropped child: exit %d, want 1; stdout:\n%s\nstderr: %s", code, out, stderr)
	}
	want := "--- ConfigMap/prune-test/b (live; listed by Component.wavesmith.io/prune-test/settings, no longer rendered)\n+++ /dev/null\n"
	if !strings.Contains(out, want) {
		t.Errorf("dropped child: want %q in:\n%s", want, out)
	}
	if strings.Contains(out, "ConfigMap/prune-test/a ") {
		t.Errorf("the kept child is shown:\n%s", out)
	}
	if !strings.Contains(stderr, "a pruning applier would delete 1 no longer rendered") {
		t.Errorf("summary: %s", stderr)
	}
}
