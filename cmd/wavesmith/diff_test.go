package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wavesmith/wavesmith/internal/treecache"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/wavesmith/wavesmith/internal/kubetest"
	"github.com/wavesmith/wavesmith/internal/livediff"
	"github.com/wavesmith/wavesmith/internal/testtool"
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
	if mode := os.Getenv(hugePageChildEnv); mode != "" {
		os.Exit(hugePageChild(mode)) // runChild's fresh process
	}
	// The tree cache of the in-process renders: never the user's.
	cache, err := os.MkdirTemp("", "wavesmith-tree-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv(treecache.Env, cache)
	code := m.Run()
	os.RemoveAll(cache)
	if c := envtestCluster.c; c != nil {
		_ = c.Stop()
		_ = os.RemoveAll(filepath.Dir(envtestCluster.kubeconfig))
	}
	os.Exit(code)
}

func cluster(t testing.TB) (*kubetest.Cluster, string) {
	t.Helper()
	testtool.EnvtestAssets(t, filepath.Join("..", "..", "bin")) // skips or fails without them
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
func applyStream(t testing.TB, c *kubetest.Cluster, stream string) {
	t.Helper()
	applyStreamAs(t, c, stream, livediff.FieldManager)
}

// applyStreamAs is applyStream with the field manager of an applier.
func applyStreamAs(t testing.TB, c *kubetest.Cluster, stream, manager string) {
	t.Helper()
	objs, err := manifest.Decode("stream", []byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS = -1 // no client-side limit
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
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
		if _, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: manager, Force: &force}); err != nil {
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
	code, out, stderr := wavesmithBinary(t, "diff", examples, "--kubeconfig", kubeconfig)
	if code != exitDifferences {
		t.Fatalf("empty cluster: exit %d, want %d: %s", code, exitDifferences, stderr)
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
	code, out, stderr = wavesmithBinary(t, "diff", examples)
	if code != exitOK || out != "" {
		t.Fatalf("applied: exit %d, want 0 and no output; stdout:\n%s\nstderr: %s", code, out, stderr)
	}

	// (c) A field changed live shows as that field only.
	dyn := dynamic.NewForConfigOrDie(c.Config)
	deployments := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("demo")
	if _, err := deployments.Patch(context.Background(), "my-kaoto", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = wavesmithBinary(t, "diff", examples)
	if code != exitDifferences {
		t.Fatalf("drifted: exit %d, want %d: %s", code, exitDifferences, stderr)
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

	code, out, stderr := wavesmithBinary(t, "diff", in, "--kubeconfig", kubeconfig)
	if code != exitDifferences || !strings.Contains(out, "+  password: (sensitive)\n") {
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
	code, out, _ = wavesmithBinary(t, "diff", in, "--kubeconfig", kubeconfig)
	if code != exitOK || out != "" {
		t.Fatalf("applied Secret: exit %d, stdout:\n%s", code, out)
	}

	in2 := writeInput(t, "secret.yaml", secret("hunter2-second"))
	code, out, _ = wavesmithBinary(t, "diff", in2, "--kubeconfig", kubeconfig)
	if code != exitDifferences {
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
	code, out, stderr := wavesmithBinary(t, "diff", in, "--kubeconfig", kubeconfig)
	if code != exitDiffError {
		t.Fatalf("exit %d, want %d", code, exitDiffError)
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
	code, out, stderr := wavesmithBinary(t, "diff", in, "--kubeconfig", kubeconfig)
	want := `error: ConfigMap/nowhere/lost: namespace "nowhere" does not exist and the render does not create it`
	if code != exitDiffError || out != "" || !strings.Contains(stderr, want) {
		t.Errorf("exit %d (want %d), stdout %q (want none), stderr %q (want %q)", code, exitDiffError, out, stderr, want)
	}
}

func TestDiffHelp(t *testing.T) {
	code, out, _ := wavesmithBinary(t, "diff", "--help")
	for _, want := range []string{livediff.FieldManager, livediff.FluxFieldManager, livediff.ArgoCDFieldManager, "dryRun=All", "Exit codes, as kubectl diff's: 0 nothing would change", "--kubeconfig", "--context", "(sensitive)"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("diff --help (exit %d) lacks %q", code, want)
		}
	}
}

func TestDiffBadInput(t *testing.T) {
	_, kubeconfig := cluster(t)
	in := writeInput(t, "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n")
	code, out, stderr := wavesmithBinary(t, "diff", in, "--kubeconfig", kubeconfig)
	if code != exitDiffError || out != "" || !strings.Contains(stderr, "bad.yaml:") {
		t.Errorf("malformed YAML: exit %d (want %d), stdout %q (want none), stderr %q", code, exitDiffError, out, stderr)
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
	code, out, stderr := wavesmithBinary(t, "diff", dir, "--kubeconfig", kubeconfig)
	if code != exitOK || out != "" {
		t.Fatalf("applied render (control): exit %d, stdout:\n%s\nstderr: %s", code, out, stderr)
	}

	write("kust/kustomization.yaml", "resources: [a.yaml]\n")
	code, out, stderr = wavesmithBinary(t, "diff", dir, "--kubeconfig", kubeconfig)
	if code != exitDifferences {
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

// renderApplyAs renders in and applies the stream as manager.
func renderApplyAs(t *testing.T, c *kubetest.Cluster, manager string, in ...string) {
	t.Helper()
	code, stream, stderr := wavesmith(t, "", append([]string{"render"}, in...)...)
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	applyStreamAs(t, c, stream, manager)
}

// TestDiffRemovedField: diffing as the applier's field manager shows a
// field the render stopped setting as removed; the default manager owns
// nothing and does not (the control, as documented).
func TestDiffRemovedField(t *testing.T) {
	c, kubeconfig := cluster(t)
	for _, manager := range []string{livediff.FluxFieldManager, livediff.ArgoCDFieldManager} {
		t.Run(manager, func(t *testing.T) {
			cm := func(extra string) string {
				return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: removed-field-" + manager + "\n  namespace: default\ndata:\n  kept: \"0\"\n" + extra
			}
			renderApplyAs(t, c, manager, writeInput(t, "cm.yaml", cm("  extra: \"1\"\n")))
			in := writeInput(t, "cm.yaml", cm(""))
			code, out, stderr := wavesmithBinary(t, "diff", in, "--kubeconfig", kubeconfig, "--field-manager", manager, "-q")
			if code != exitDifferences {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr: %s", code, exitDifferences, out, stderr)
			}
			if diff := cmp.Diff([]string{`-  extra: "1"`}, changedLines(out)); diff != "" {
				t.Errorf("changed lines (-want +got):\n%s\n%s", diff, out)
			}
			if !strings.Contains(stderr, "applying would create 0 and change 1 of 1 objects") {
				t.Errorf("-q hid the summary line: stderr %q", stderr)
			}
			code, out, _ = wavesmithBinary(t, "diff", in, "--kubeconfig", kubeconfig)
			if code != exitOK || out != "" {
				t.Errorf("default field manager (owns nothing): exit %d, stdout:\n%s", code, out)
			}
		})
	}
}

// kubeconfigFile writes a kubeconfig for server, with a bearer token.
func kubeconfigFile(t *testing.T, server string, ca []byte, token string) string {
	t.Helper()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: u
  user:
    token: %s
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`, server, base64.StdEncoding.EncodeToString(ca), token)
	return writeInput(t, "kubeconfig", cfg)
}

// TestDiffExitCodes: errors exit 2, as kubectl diff's: a cluster that
// cannot be reached, credentials refused, access refused, bad input.
// Differences exit 1 (the control, beside the other tests).
func TestDiffExitCodes(t *testing.T) {
	c, kubeconfig := cluster(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	nobody, err := c.Env.AddUser(envtest.User{Name: "nobody"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	nobodyConfig, err := nobody.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	in := writeInput(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: exit-codes\n  namespace: default\ndata:\n  a: b\n")
	for name, tc := range map[string]struct {
		kubeconfig string
		in         string
		want       string
	}{
		"unreachable": {
			kubeconfig: kubeconfigFile(t, closed, c.Config.CAData, "x"),
			in:         in,
			want:       "error: reaching the cluster at " + closed + ": ",
		},
		"token refused": {
			kubeconfig: kubeconfigFile(t, c.Config.Host, c.Config.CAData, "not-a-token"),
			in:         in,
			want:       "error: the cluster at " + c.Config.Host + " refused the credentials (401 Unauthorized)",
		},
		"forbidden": {
			kubeconfig: writeInput(t, "kubeconfig", string(nobodyConfig)),
			in:         in,
			want:       `error: ConfigMap/default/exit-codes: reading the live object: configmaps "exit-codes" is forbidden: User "nobody" cannot get resource`,
		},
		"bad input": {
			kubeconfig: kubeconfig,
			in:         writeInput(t, "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n"),
			want:       "bad.yaml:",
		},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := wavesmithBinary(t, "diff", tc.in, "--kubeconfig", tc.kubeconfig)
			if code != exitDiffError || out != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stdout %q (want none), stderr %q (want %q)", code, exitDiffError, out, stderr, tc.want)
			}
		})
	}
}

// TestDiffKept: children no longer rendered that an annotation keeps from
// pruning are reported as kept, not as deleted. The control: the same
// child without the annotation is deleted.
func TestDiffKept(t *testing.T) {
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
	kept := map[string]string{
		"orphan":  `{"wavesmith.io/delete-policy":"orphan"}`,
		"argocd":  `{"argocd.argoproj.io/sync-options":"ServerSideApply=true,Prune=false"}`,
		"flux":    `{"kustomize.toolkit.fluxcd.io/prune":"disabled"}`,
		"helm":    `{"helm.sh/resource-policy":"keep"}`,
		"deleted": `{"unrelated":"x"}`,
	}
	names := []string{"argocd", "deleted", "flux", "helm", "orphan"}
	write("ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kept-test\n")
	write("component.yaml", "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: settings\n  namespace: kept-test\nspec:\n  source:\n    kustomization:\n      path: kust\n")
	write("kust/kustomization.yaml", "resources: [a.yaml, "+strings.Join(names, ".yaml, ")+".yaml]\n")
	write("kust/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n")
	for _, n := range names {
		write("kust/"+n+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+n+"\ndata:\n  k: v\n")
	}
	renderApplyAs(t, c, livediff.FluxFieldManager, dir)
	cms := dynamic.NewForConfigOrDie(c.Config).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("kept-test")
	for n, ann := range kept {
		if _, err := cms.Patch(context.Background(), n, types.MergePatchType, []byte(`{"metadata":{"annotations":`+ann+`}}`), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
			t.Fatal(err)
		}
	}
	write("kust/kustomization.yaml", "resources: [a.yaml]\n")
	code, out, stderr := wavesmithBinary(t, "diff", dir, "--kubeconfig", kubeconfig, "--field-manager", livediff.FluxFieldManager)
	if code != exitDifferences {
		t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr: %s", code, exitDifferences, out, stderr)
	}
	for _, n := range names {
		deleted := strings.Contains(out, "--- ConfigMap/kept-test/"+n+" (live; listed by Component.wavesmith.io/kept-test/settings, no longer rendered)\n+++ /dev/null\n")
		keptLine := strings.Contains(stderr, "kept: ConfigMap/kept-test/"+n+" is no longer rendered; ")
		if want := n == "deleted"; deleted != want || keptLine == want {
			t.Errorf("%s: shown deleted %v, reported kept %v; want deleted %v\nstdout:\n%s\nstderr: %s", n, deleted, keptLine, want, out, stderr)
		}
	}
	if !strings.Contains(stderr, "a pruning applier would delete 1 no longer rendered; 4 no longer rendered are kept") {
		t.Errorf("summary: %s", stderr)
	}
}

// TestDiffRemovedSpec: a spec file removed (git rm of a Kaoto) shows the
// live spec and its children as pruned. Not shown: a spec in a namespace
// the render does not cover, and one another Flux Kustomization applied
// (the controls for the destination).
func TestDiffRemovedSpec(t *testing.T) {
	c, kubeconfig := cluster(t)
	kaoto := func(name, ns string) string {
		return "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n  image: quay.io/kaotoio/kaoto-app:2.4.0\n  ingress:\n    host: " + name + ".example.com\n"
	}
	dir := t.TempDir()
	elsewhere := t.TempDir()
	foreign := t.TempDir()
	files := map[string]string{
		filepath.Join(foreign, "foreign.yaml"): kaoto("foreign", "removed-spec"),
		filepath.Join(dir, "ns.yaml"):          "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: removed-spec\n",
		filepath.Join(dir, "stays.yaml"):       kaoto("stays", "removed-spec"),
		filepath.Join(dir, "goes.yaml"):        kaoto("goes", "removed-spec"),
		filepath.Join(elsewhere, "ns.yaml"):    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: removed-spec-other\n",
		filepath.Join(elsewhere, "other.yaml"): kaoto("other", "removed-spec-other"),
		filepath.Join(dir, "ns-gone.yaml"):     "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: removed-spec-gone\n",
		filepath.Join(dir, "moved.yaml"):       kaoto("moved", "removed-spec-gone"),
	}
	for p, content := range files {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	renderApplyAs(t, c, livediff.FluxFieldManager, dir)
	renderApplyAs(t, c, livediff.FluxFieldManager, elsewhere)
	renderApplyAs(t, c, livediff.FluxFieldManager, foreign)
	kaotos := dynamic.NewForConfigOrDie(c.Config).Resource(schema.GroupVersionResource{Group: "designer.kaoto.io", Version: "v1alpha1", Resource: "kaotoes"}).Namespace("removed-spec")
	labels := func(ks string) []byte {
		return []byte(`{"metadata":{"labels":{"kustomize.toolkit.fluxcd.io/name":"` + ks + `","kustomize.toolkit.fluxcd.io/namespace":"flux-system"}}}`)
	}
	for name, ks := range map[string]string{"stays": "app", "goes": "app", "foreign": "other-app"} {
		if _, err := kaotos.Patch(context.Background(), name, types.MergePatchType, labels(ks), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
			t.Fatal(err)
		}
	}
	// A spec alone in its namespace, applied by the same Kustomization.
	gone := dynamic.NewForConfigOrDie(c.Config).Resource(schema.GroupVersionResource{Group: "designer.kaoto.io", Version: "v1alpha1", Resource: "kaotoes"}).Namespace("removed-spec-gone")
	if _, err := gone.Patch(context.Background(), "moved", types.MergePatchType, labels("app"), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := wavesmithBinary(t, "diff", dir, "--kubeconfig", kubeconfig, "--field-manager", livediff.FluxFieldManager)
	if code != exitOK || out != "" {
		t.Fatalf("applied (control): exit %d, stdout:\n%s\nstderr: %s", code, out, stderr)
	}
	for _, f := range []string{"goes.yaml", "moved.yaml", "ns-gone.yaml"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr = wavesmithBinary(t, "diff", dir, "--kubeconfig", kubeconfig, "--field-manager", livediff.FluxFieldManager)
	if code != exitDifferences {
		t.Fatalf("removed spec: exit %d, want %d; stdout:\n%s\nstderr: %s", code, exitDifferences, out, stderr)
	}
	var shown []string
	for _, m := range regexp.MustCompile(`(?m)^--- (\S+) \(live; ([^)]*)\)\n\+\+\+ /dev/null$`).FindAllStringSubmatch(out, -1) {
		shown = append(shown, m[1]+" "+m[2])
	}
	sort.Strings(shown)
	by := "listed by Kaoto.designer.kaoto.io/removed-spec/goes, no longer rendered"
	byMoved := "listed by Kaoto.designer.kaoto.io/removed-spec-gone/moved, no longer rendered"
	want := []string{
		"Deployment.apps/removed-spec-gone/moved " + byMoved,
		"Deployment.apps/removed-spec/goes " + by,
		"Ingress.networking.k8s.io/removed-spec-gone/moved " + byMoved,
		"Ingress.networking.k8s.io/removed-spec/goes " + by,
		"Kaoto.designer.kaoto.io/removed-spec-gone/moved a spec, no longer rendered",
		"Kaoto.designer.kaoto.io/removed-spec/goes a spec, no longer rendered",
		"Service/removed-spec-gone/moved " + byMoved,
		"Service/removed-spec/goes " + by,
	}
	if diff := cmp.Diff(want, shown); diff != "" {
		t.Errorf("pruned (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(stderr, "a pruning applier would delete 8 no longer rendered") {
		t.Errorf("summary: %s", stderr)
	}
}

// TestDiffHooks: when Argo CD applies, hooks are left out (said once); as
// Flux applies they are objects like the others (the control).
func TestDiffHooks(t *testing.T) {
	_, kubeconfig := cluster(t)
	in := writeInput(t, "hook.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: migrate\n  namespace: default\n  annotations:\n    wavesmith.io/hook: post-install\ndata:\n  a: b\n")
	for name, tc := range map[string]struct {
		args   []string
		code   int
		hidden bool
	}{
		"argocd field manager": {[]string{"--field-manager", livediff.ArgoCDFieldManager}, exitOK, true},
		"argocd dialect":       {[]string{"--dialects", "argocd"}, exitOK, true},
		"flux":                 {[]string{"--field-manager", livediff.FluxFieldManager}, exitDifferences, false},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := wavesmithBinary(t, append([]string{"diff", in, "--kubeconfig", kubeconfig}, tc.args...)...)
			said := strings.Count(stderr, "left out: 1 hooks")
			if code != tc.code || (out == "") != tc.hidden || said != map[bool]int{true: 1}[tc.hidden] {
				t.Errorf("exit %d (want %d), said %d times; stdout:\n%s\nstderr: %s", code, tc.code, said, out, stderr)
			}
		})
	}
}

// TestDiffImmutable: a Job whose pod template changed is shown as
// replaced, with the changed field only; without a recreate policy it is
// also an error (applying in place would fail), short, and the summary
// line stays.
func TestDiffImmutable(t *testing.T) {
	c, kubeconfig := cluster(t)
	job := func(name, image, ann string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n  namespace: default\n" + ann +
			"spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: " + image + "\n"
	}
	recreate := "  annotations:\n    wavesmith.io/update-policy: recreate\n"
	renderApplyAs(t, c, livediff.FluxFieldManager, writeInput(t, "job.yaml", job("plain", "busybox:1", "")+"---\n"+job("recreated", "busybox:1", recreate)))
	for name, tc := range map[string]struct {
		job  string
		code int
	}{
		"recreate": {job("recreated", "busybox:2", recreate), exitDifferences},
		"in place": {job("plain", "busybox:2", ""), exitDiffError},
	} {
		t.Run(name, func(t *testing.T) {
			in := writeInput(t, "job.yaml", tc.job)
			code, out, stderr := wavesmithBinary(t, "diff", in, "--kubeconfig", kubeconfig, "--field-manager", livediff.FluxFieldManager)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr: %s", code, tc.code, out, stderr)
			}
			if diff := cmp.Diff([]string{"-      - image: busybox:1", "+      - image: busybox:2"}, changedLines(out)); diff != "" {
				t.Errorf("changed lines (-want +got):\n%s\n%s", diff, out)
			}
			if !strings.Contains(out, " (after replace; not checked by the API server: immutable spec.template changed)\n") {
				t.Errorf("header:\n%s", out)
			}
			if !strings.Contains(stderr, "applying would create 0 and change 1 of 1 objects (1 by deleting and re-creating it)") {
				t.Errorf("summary: %s", stderr)
			}
			wantErr := tc.code == exitDiffError
			if got := strings.Contains(stderr, "error: Job.batch/default/plain: spec.template: field is immutable: applying in place would fail; wavesmith.io/update-policy: recreate deletes and re-creates it\n"); got != wantErr {
				t.Errorf("error reported %v, want %v: %s", got, wantErr, stderr)
			}
			if strings.Contains(stderr, "PodTemplateSpec") {
				t.Errorf("the server's Go struct is shown: %s", stderr)
			}
		})
	}
}

// TestDiffVersionNotServed: an apiVersion the CRD does not serve is an
// error naming the object and the versions served, whether the CRD is in
// the render or only in the cluster.
func TestDiffVersionNotServed(t *testing.T) {
	c, kubeconfig := cluster(t)
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.net
spec:
  group: example.net
  names: {kind: Gizmo, plural: gizmos, singular: gizmo, listKind: GizmoList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
	gizmo := func(version string) string {
		return "apiVersion: example.net/" + version + "\nkind: Gizmo\nmetadata:\n  name: g\n  namespace: default\nspec:\n  size: 1\n"
	}
	applyStream(t, c, crd+"---\n"+strings.Replace(gizmo("v1"), "name: g\n", "name: probe\n", 1)) // waits for Gizmo to be served
	for name, tc := range map[string]struct {
		in   string
		code int
		want string
	}{
		"served (control)": {gizmo("v1"), exitDifferences, ""},
		"cluster":          {gizmo("v2"), exitDiffError, "error: Gizmo.example.net/default/g: apiVersion example.net/v2 is not served: the cluster serves Gizmo.example.net in v1 only\n"},
		"render":           {crd + "---\n" + gizmo("v2"), exitDiffError, "error: Gizmo.example.net/default/g: apiVersion example.net/v2 is not served: the CustomResourceDefinition of this render serves Gizmo.example.net in v1 only\n"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := wavesmithBinary(t, "diff", writeInput(t, "gizmo.yaml", tc.in), "--kubeconfig", kubeconfig)
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(out, "not checked") {
				t.Errorf("exit %d (want %d), stderr %q (want %q), stdout:\n%s", code, tc.code, stderr, tc.want, out)
			}
		})
	}
}

func TestDiffKubeconfigMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	code, out, stderr := wavesmithBinary(t, "diff", examples)
	want := "error: KUBECONFIG=" + missing + ": no kubeconfig file " + missing + ": file does not exist\n"
	if code != exitUsage || out != "" || !strings.Contains(stderr, want) {
		t.Errorf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, exitUsage, out, stderr, want)
	}
}

// BenchmarkDiff500Kaotos measures wavesmith diff on 500 Kaoto specs (2,001
// objects, their Namespace included) applied by Flux's field manager, and,
// beside it, kubectl diff --server-side on the same rendered objects:
//
//	KUBEBUILDER_ASSETS=$PWD/bin go test -run '^$' -bench Diff500 -benchtime 3x ./cmd/wavesmith/
func BenchmarkDiff500Kaotos(b *testing.B) {
	assets := testtool.EnvtestAssets(b, filepath.Join("..", "..", "bin"))
	// Its own control plane: 500 Services need more cluster IPs than
	// envtest's default /24 has.
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "kustomize", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.0.0.0/16")
	if _, err := env.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	c := &kubetest.Cluster{Env: env, Config: env.Config}
	kubeconfig, err := c.Kubeconfig(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var in strings.Builder
	in.WriteString("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench\n")
	for i := range 500 {
		fmt.Fprintf(&in, "---\napiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: k%03d\n  namespace: bench\nspec:\n  image: quay.io/kaotoio/kaoto-app:2.4.0\n  ingress:\n    host: k%03d.example.com\n", i, i)
	}
	input := filepath.Join(b.TempDir(), "kaotos.yaml")
	if err := os.WriteFile(input, []byte(in.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	var stream, errb bytes.Buffer
	if code := run([]string{"render", input}, strings.NewReader(""), &stream, &errb); code != exitOK {
		b.Fatalf("render: %s", errb.String())
	}
	applyStreamAs(b, c, stream.String(), livediff.FluxFieldManager)
	rendered := filepath.Join(b.TempDir(), "rendered.yaml")
	if err := os.WriteFile(rendered, stream.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Run("wavesmith", func(b *testing.B) {
		for b.Loop() {
			var out, errb bytes.Buffer
			if code := run([]string{"diff", input, "--kubeconfig", kubeconfig, "--field-manager", livediff.FluxFieldManager}, strings.NewReader(""), &out, &errb); code != exitOK {
				b.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
			}
		}
	})
	b.Run("kubectl", func(b *testing.B) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			b.Skip("no kubectl on PATH")
		}
		for b.Loop() {
			out, err := exec.Command(kubectl, "diff", "--server-side", "--force-conflicts", "--field-manager", livediff.FluxFieldManager, "--kubeconfig", kubeconfig, "-f", rendered).CombinedOutput()
			if err != nil {
				b.Fatalf("kubectl diff: %v: %s", err, out)
			}
		}
	})
}

// TestDiffManyObjects: with many objects of one kind in one namespace the
// live objects are read with one LIST (livediff's listThreshold): the
// answers are the same as with a GET each: nothing after an apply, one
// drifted object, one new one.
func TestDiffManyObjects(t *testing.T) {
	c, kubeconfig := cluster(t)
	var in strings.Builder
	in.WriteString("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: many\n")
	for i := range 60 {
		fmt.Fprintf(&in, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%02d\n  namespace: many\ndata:\n  k: v\n", i)
	}
	path := writeInput(t, "many.yaml", in.String())
	renderApplyAs(t, c, livediff.FluxFieldManager, path)
	code, out, stderr := wavesmithBinary(t, "diff", path, "--kubeconfig", kubeconfig, "--field-manager", livediff.FluxFieldManager)
	if code != exitOK || out != "" {
		t.Fatalf("applied (control): exit %d, stdout:\n%s\nstderr: %s", code, out, stderr)
	}
	cms := dynamic.NewForConfigOrDie(c.Config).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("many")
	if _, err := cms.Patch(context.Background(), "cm07", types.MergePatchType, []byte(`{"data":{"k":"drifted"}}`), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&in, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm60\n  namespace: many\ndata:\n  k: v\n")
	path = writeInput(t, "many.yaml", in.String())
	code, out, stderr = wavesmithBinary(t, "diff", path, "--kubeconfig", kubeconfig, "--field-manager", livediff.FluxFieldManager)
	if code != exitDifferences {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitDifferences, stderr)
	}
	if diff := cmp.Diff([]string{"ConfigMap/many/cm07", "ConfigMap/many/cm60"}, headers(out)); diff != "" {
		t.Errorf("objects shown (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(out, "-  k: drifted\n+  k: v\n") || !strings.Contains(out, "--- /dev/null\n+++ ConfigMap/many/cm60 (new)\n") {
		t.Errorf("diff:\n%s", out)
	}
}

// TestDiffProgress: on a terminal (a progress with a writer) the count of
// compared objects is shown once the run takes over a second; without a
// terminal nothing is (the control).
func TestDiffProgress(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, start: time.Now().Add(-2 * time.Second)}
	comparing(p)(3, 3)
	p.done()
	if got, want := buf.String(), "\rcomparing: 3/3 objects\r\033[K"; got != want {
		t.Errorf("terminal: %q, want %q", got, want)
	}
	if f := comparing(&progress{}); f != nil {
		t.Error("no terminal: a progress function")
	}
}

// packageDir is the folder of this package, the tests' working folder
// before any of them moves.
var packageDir, _ = os.Getwd()

// wavesmithBinary runs the built binary (bin/wavesmith, which make test
// builds first) as a process, as users and CI run diff: exit code,
// stdout and stderr.
func wavesmithBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return wavesmithBinaryIn(t, "", args...)
}
