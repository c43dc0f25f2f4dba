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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

var (
	kaotoGVK     = schema.GroupVersionKind{Group: "designer.kaoto.io", Version: "v1alpha1", Kind: "Kaoto"}
	componentGVK = schema.GroupVersionKind{Group: "wavesmith.io", Version: "v1alpha1", Kind: "Component"}
	routeGVK     = schema.GroupVersionKind{Group: "route.openshift.io", Version: "v1", Kind: "Route"}
)

// TestEndToEnd is the proof of the mission, on a real API server: render
// the bundled examples (Kaoto resources, a Component from a chart with CRDs
// and install hooks, a Component from a kustomization that depends on it)
// into a Flux tree, apply it wave by wave with Flux's engine while a fake
// kubelet makes Deployments available and Jobs complete, run
// wavesmith-status, and watch every spec report Ready. Then change a spec:
// check fails with a diff, a re-render and re-apply follow, and so does the
// status. Delete a child: the condition drops; re-apply: it recovers.
func TestEndToEnd(t *testing.T) {
	ws := tool(t, "WAVESMITH_BIN")
	statusBin := tool(t, "WAVESMITH_STATUS_BIN")
	cl := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kctx, stopKubelet := context.WithCancel(ctx)
	wg := cl.kubelet(kctx)
	defer func() { stopKubelet(); wg.Wait() }()
	// OpenShift's Route kind, for the OpenShift render of one Kaoto.
	if _, err := envtest.InstallCRDs(cl.cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(repoRoot(t), "status", "testdata", "crds")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatal(err)
	}

	// A repository holding the examples and the sources they read.
	repo := t.TempDir()
	for _, d := range []string{"examples", "charts", "kustomizations"} {
		copyDir(t, filepath.Join(repoRoot(t), "testdata", d), filepath.Join(repo, "testdata", d))
	}
	// The same designer on OpenShift, in a namespace of its own.
	openshift := filepath.Join(repo, "openshift")
	if err := os.MkdirAll(openshift, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(openshift, "kaoto.yaml"), `apiVersion: v1
kind: Namespace
metadata:
  name: demo-openshift
---
apiVersion: designer.kaoto.io/v1alpha1
kind: Kaoto
metadata:
  name: my-kaoto
  namespace: demo-openshift
spec:
  image: quay.io/kaotoio/kaoto-app:2.4.0
  ingress:
    host: kaoto.apps.example.com
    path: /designer
`)
	renderArgs := func(cmd string, dir, platform string) []string {
		return []string{cmd, "-q", "--root", repo, "--platform", platform, dir, "-o", filepath.Join(repo, "deploy", platform), "--flux", "--flux-name", platform, "--tree-path", "deploy/" + platform}
	}
	renderAll := func() {
		t.Helper()
		run(t, repo, ws, renderArgs("render", "testdata/examples", "kubernetes")...)
		run(t, repo, ws, renderArgs("render", "openshift", "openshift")...)
	}
	applyAll := func() {
		t.Helper()
		for _, platform := range []string{"kubernetes", "openshift"} {
			for _, k := range kustomizations(t, filepath.Join(repo, "deploy", platform)) {
				cl.reconcile(t, ctx, k.Metadata.Name, k.Metadata.Namespace, filepath.Join(repo, filepath.FromSlash(strings.TrimPrefix(k.Spec.Path, "./"))))
			}
		}
		// The OpenShift router admits the Route.
		route := &unstructured.Unstructured{}
		route.SetGroupVersionKind(routeGVK)
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: "demo-openshift", Name: "my-kaoto"}, route); err != nil {
			t.Fatalf("the OpenShift render applied no Route: %v", err)
		}
		host, _, _ := unstructured.NestedString(route.Object, "spec", "host")
		_ = unstructured.SetNestedSlice(route.Object, []any{map[string]any{
			"host": host, "routerName": "default",
			"conditions": []any{map[string]any{"type": "Admitted", "status": "True"}},
		}}, "status", "ingress")
		if err := cl.c.Status().Update(ctx, route); err != nil {
			t.Fatalf("admitting the Route: %v", err)
		}
	}
	renderAll()
	applyAll()

	// The status controller, as deployed: its own process, a kubeconfig.
	user, err := cl.env.AddUser(envtest.User{Name: "wavesmith-status", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kcFile := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, kcFile, string(kc))
	var logs bytes.Buffer
	sctx, stopStatus := context.WithCancel(ctx)
	status := exec.CommandContext(sctx, statusBin, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	status.Env = append(os.Environ(), "KUBECONFIG="+kcFile)
	status.Stdout, status.Stderr = &logs, &logs
	if err := status.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stopStatus()
		_ = status.Wait()
		if t.Failed() {
			t.Logf("wavesmith-status logs:\n%s", logs.String())
		}
	}()

	wantEndpoints := map[string]string{
		"demo/designer":           "http://designer.demo.svc.cluster.local:8080/",
		"demo/k2":                 "http://k2.demo.svc.cluster.local:8080/",
		"demo/my-kaoto":           "http://kaoto.example.com/designer/",
		"tools/kaoto":             "http://kaoto.example.com/kaoto/", // the default Ingress path is /<name>
		"demo-openshift/my-kaoto": "https://kaoto.apps.example.com/designer/",
	}
	waitFor(t, ctx, "every Kaoto Ready with its endpoint and every Component Ready with its inventory", func() string {
		return problems(ctx, t, cl, wantEndpoints)
	})

	// A spec changes: the committed tree is stale, check says so.
	myKaoto := filepath.Join(repo, "testdata", "examples", "my-kaoto.yaml")
	b, err := os.ReadFile(myKaoto)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, myKaoto, strings.Replace(string(b), "kaoto-app:2.4.0", "kaoto-app:2.5.0", 1))
	out, _, err := runErr(repo, ws, renderArgs("check", "testdata/examples", "kubernetes")...)
	if code := exitCode(err); code != 1 || !bytes.Contains(out, []byte("kaoto-app:2.5.0")) || !bytes.Contains(out, []byte("\n+")) {
		t.Fatalf("check after a spec change: want exit 1 and a diff with the new image, got exit %d:\n%s", code, out)
	}
	generation := func() int64 {
		k := &unstructured.Unstructured{}
		k.SetGroupVersionKind(kaotoGVK)
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: "demo", Name: "my-kaoto"}, k); err != nil {
			t.Fatal(err)
		}
		return k.GetGeneration()
	}
	before := generation()
	renderAll()
	run(t, repo, ws, renderArgs("check", "testdata/examples", "kubernetes")...)
	applyAll()
	if after := generation(); after <= before {
		t.Fatalf("the re-applied Kaoto kept generation %d", after)
	}
	var d appsv1.Deployment
	if err := cl.c.Get(ctx, types.NamespacedName{Namespace: "demo", Name: "my-kaoto"}, &d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "quay.io/kaotoio/kaoto-app:2.5.0" {
		t.Fatalf("the re-applied Deployment runs %s", img)
	}
	waitFor(t, ctx, "the status following the changed spec (observedGeneration, Ready)", func() string {
		return problems(ctx, t, cl, wantEndpoints)
	})

	// A child disappears: the condition drops.
	svc := &corev1.Service{}
	svc.Namespace, svc.Name = "tools", "kaoto"
	if err := cl.c.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "tools/kaoto not Ready after its Service was deleted", func() string {
		k := get(ctx, t, cl, kaotoGVK, "tools", "kaoto")
		phase, _, _ := unstructured.NestedString(k.Object, "status", "phase")
		if ready(k) != "False" || phase != "Pending" {
			return fmt.Sprintf("tools/kaoto: Ready %q, phase %q; want False, Pending (a child is missing)", ready(k), phase)
		}
		return ""
	})
	// Flux puts it back on its next reconcile; the status recovers.
	applyAll()
	waitFor(t, ctx, "every spec Ready again after the next reconcile", func() string {
		return problems(ctx, t, cl, wantEndpoints)
	})
}

// problems lists what is not yet as it should be; "" when all is well.
func problems(ctx context.Context, t *testing.T, cl *cluster, endpoints map[string]string) string {
	var out []string
	kaotos := list(ctx, t, cl, kaotoGVK)
	got := map[string]string{}
	for i := range kaotos {
		k := &kaotos[i]
		id := k.GetNamespace() + "/" + k.GetName()
		got[id], _, _ = unstructured.NestedString(k.Object, "status", "endpoint")
		phase, _, _ := unstructured.NestedString(k.Object, "status", "phase")
		og, _, _ := unstructured.NestedInt64(k.Object, "status", "observedGeneration")
		if phase != "Ready" || ready(k) != "True" || og != k.GetGeneration() {
			out = append(out, fmt.Sprintf("Kaoto %s: phase %q, Ready %q, observedGeneration %d of %d", id, phase, ready(k), og, k.GetGeneration()))
		}
	}
	if diff := cmp.Diff(endpoints, got); diff != "" {
		out = append(out, "Kaoto endpoints (-want +got):\n"+diff)
	}
	comps := list(ctx, t, cl, componentGVK)
	if len(comps) != 2 {
		out = append(out, fmt.Sprintf("want 2 Components, got %d", len(comps)))
	}
	for i := range comps {
		c := &comps[i]
		id := c.GetNamespace() + "/" + c.GetName()
		state, _, _ := unstructured.NestedString(c.Object, "status", "state")
		inv, _, _ := unstructured.NestedSlice(c.Object, "status", "inventory")
		og, _, _ := unstructured.NestedInt64(c.Object, "status", "observedGeneration")
		if state != "Ready" || ready(c) != "True" || og != c.GetGeneration() {
			out = append(out, fmt.Sprintf("Component %s: state %q, Ready %q, observedGeneration %d of %d", id, state, ready(c), og, c.GetGeneration()))
		}
		want := len(strings.Split(strings.TrimSpace(c.GetAnnotations()["wavesmith.io/inventory"]), "\n"))
		if len(inv) != want {
			out = append(out, fmt.Sprintf("Component %s: status.inventory has %d children, its wavesmith.io/inventory %d", id, len(inv), want))
		}
		for _, e := range inv {
			m, _ := e.(map[string]any)
			if s := m["status"]; s != "Current" && !(m["kind"] == "Secret" && s == "Unknown") {
				out = append(out, fmt.Sprintf("Component %s: child %v/%v is %v", id, m["kind"], m["name"], s))
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func list(ctx context.Context, t *testing.T, cl *cluster, gvk schema.GroupVersionKind) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := cl.c.List(ctx, l); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func get(ctx context.Context, t *testing.T, cl *cluster, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// ready is the status of the Ready condition ("" when absent).
func ready(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// waitFor polls check until it reports nothing; on timeout the test fails
// with the last report.
func waitFor(t *testing.T, ctx context.Context, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	start := time.Now()
	for {
		p := check()
		if p == "" {
			t.Logf("%s: after %s", what, time.Since(start).Round(10*time.Millisecond))
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting for %s: still:\n%s", what, p)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	return -1
}
