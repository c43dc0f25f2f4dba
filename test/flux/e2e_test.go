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

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var (
	kaotoGVK     = schema.GroupVersionKind{Group: "designer.kaoto.io", Version: "v1alpha1", Kind: "Kaoto"}
	componentGVK = schema.GroupVersionKind{Group: "wavesmith.io", Version: "v1alpha1", Kind: "Component"}
)

// e2eRepo is a repository holding the bundled examples, the sources they
// read, and the same designer for OpenShift in a namespace of its own.
func e2eRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	for _, d := range []string{"examples", "charts", "kustomizations"} {
		copyDir(t, filepath.Join(repoRoot(t), "testdata", d), filepath.Join(repo, "testdata", d))
	}
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
	return repo
}

// e2eRender is the render (or check) of one platform's tree into
// deploy/<platform>, with its own Kustomization names.
func e2eRender(cmd, repo, dir, platform string, extra ...string) []string {
	return append([]string{cmd, "-q", "--root", repo, "--platform", platform, dir, "-o", filepath.Join(repo, "deploy", platform),
		"--flux", "--flux-name", platform, "--tree-path", "deploy/" + platform}, extra...)
}

// e2eCluster starts, in production order, what runs before a tree is
// committed: an API server with the CRDs installed (wavesmith's, Flux's,
// OpenShift's Route), wavesmith-status, kustomize-controller, the kubelet,
// and the GitRepository the Kustomizations read.
func e2eCluster(t *testing.T) (*cluster, *source) {
	t.Helper()
	cl := startCluster(t, filepath.Join(repoRoot(t), "internal", "status", "testdata", "crds"))
	cl.startStatus(t)
	cl.startKubelet(t)
	cl.startKustomizeController(t)
	return cl, cl.newSource(t, "flux-system")
}

// TestEndToEnd is the proof of the mission, in production order on a real
// API server: wavesmith-status and kustomize-controller run from the start;
// the bundled examples (Kaoto resources for both platforms, a Component
// from a chart with CRDs and install hooks, a Component from a
// kustomization that depends on it) are rendered into Flux trees and
// published as a GitRepository artifact; one Kustomization per platform
// applies the tree's wave Kustomizations, which kustomize-controller
// reconciles wave after wave (each waits for kstatus Current of every
// object in it, specs included) while the test plays kubelet. Every Kaoto
// reports Ready with its endpoint and every Component Ready with its
// inventory. Then a spec changes: check fails with a diff, a re-render is
// published, and the status follows. A child is deleted: the condition
// drops; Flux's next reconcile puts it back and it recovers.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	ws := tool(t, "WAVESMITH_BIN")
	repo := e2eRepo(t)
	platforms := map[string]string{"kubernetes": "testdata/examples", "openshift": "openshift"}
	renderAll := func() {
		t.Helper()
		for p, dir := range platforms {
			run(t, repo, ws, e2eRender("render", repo, dir, p)...)
		}
	}
	renderAll()
	var names, kubernetesWaves []string
	for _, p := range []string{"kubernetes", "openshift"} {
		deploy := filepath.Join(repo, "deploy", p)
		checkSpecWaves(t, deploy)
		waves := waveNames(kustomizations(t, deploy))
		names = append(append(names, p), waves...)
		if p == "kubernetes" {
			kubernetesWaves = waves
		}
	}

	cl, src := e2eCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	rev := src.publish(t, ctx, repo)
	for p := range platforms {
		cl.applyRoot(t, ctx, p, "./deploy/"+p+"/_flux")
	}
	cl.waitApplied(t, ctx, 4*time.Minute, rev, names)

	wantEndpoints := map[string]string{
		"demo/designer":           "http://designer.demo.svc.cluster.local:8080/",
		"demo/k2":                 "http://k2.demo.svc.cluster.local:8080/",
		"demo/my-kaoto":           "http://kaoto.example.com/designer/",
		"tools/kaoto":             "http://kaoto.example.com/kaoto/", // the default Ingress path is /<name>
		"demo-openshift/my-kaoto": "https://kaoto.apps.example.com/designer/",
	}
	waitFor(t, ctx, 2*time.Minute, "every Kaoto Ready with its endpoint and every Component Ready with its inventory", func() string {
		return problems(ctx, t, cl, wantEndpoints)
	})

	// A spec changes: the committed tree is stale, check says so.
	myKaoto := filepath.Join(repo, "testdata", "examples", "my-kaoto.yaml")
	b, err := os.ReadFile(myKaoto)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, myKaoto, strings.Replace(string(b), "kaoto-app:2.4.0", "kaoto-app:2.5.0", 1))
	out, _, err := runErr(repo, ws, e2eRender("check", repo, "testdata/examples", "kubernetes")...)
	if code := exitCode(err); code != 1 || !bytes.Contains(out, []byte("kaoto-app:2.5.0")) || !bytes.Contains(out, []byte("\n+")) {
		t.Fatalf("check after a spec change: want exit 1 and a diff with the new image, got exit %d:\n%s", code, out)
	}
	generation := func() int64 {
		return get(ctx, t, cl, kaotoGVK, "demo", "my-kaoto").GetGeneration()
	}
	before := generation()
	renderAll()
	run(t, repo, ws, e2eRender("check", repo, "testdata/examples", "kubernetes")...)
	rev = src.publish(t, ctx, repo)
	cl.waitApplied(t, ctx, 3*time.Minute, rev, names)
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
	waitFor(t, ctx, 2*time.Minute, "the status following the changed spec (observedGeneration, Ready)", func() string {
		return problems(ctx, t, cl, wantEndpoints)
	})

	// A child disappears: the condition drops.
	svc := &corev1.Service{}
	svc.Namespace, svc.Name = "tools", "kaoto"
	if err := cl.c.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 2*time.Minute, "tools/kaoto not Ready after its Service was deleted", func() string {
		k := get(ctx, t, cl, kaotoGVK, "tools", "kaoto")
		phase, _, _ := unstructured.NestedString(k.Object, "status", "phase")
		if ready(k) != "False" || phase != "Pending" {
			return fmt.Sprintf("tools/kaoto: Ready %q, phase %q; want False, Pending (a child is missing)", ready(k), phase)
		}
		return ""
	})
	// Flux puts it back on its next reconcile ('flux reconcile'); the
	// status recovers.
	cl.requestReconcile(t, ctx, 3*time.Minute, kubernetesWaves)
	waitFor(t, ctx, 2*time.Minute, "every spec Ready again after the next reconcile", func() string {
		return problems(ctx, t, cl, wantEndpoints)
	})
}

// TestEndToEndOldPlacement is the control of TestEndToEnd: the same
// production order with each spec placed as render placed specs before
// they moved to the wave of their last child (in the wave the spec
// declares). The spec's wave Kustomization waits for the spec, which is
// not Ready until its children in later waves exist, and those waves wait
// for it: nothing converges, and kustomize-controller names the spec when
// the wave's health check times out (rendered with --flux-timeout 40s).
func TestEndToEndOldPlacement(t *testing.T) {
	t.Parallel()
	ws := tool(t, "WAVESMITH_BIN")
	repo := e2eRepo(t)
	run(t, repo, ws, e2eRender("render", repo, "testdata/examples", "kubernetes", "--flux-timeout", "40s")...)
	deploy := filepath.Join(repo, "deploy", "kubernetes")
	moved := oldPlacement(t, deploy, filepath.Join(repo, "testdata", "examples"))
	ks := kustomizations(t, deploy)
	// The specs now applied before a child they wait for (hooks absent
	// from the cluster count as done), by wave.
	stuck := map[int][]specWave{}
	for _, s := range specWaves(t, deploy) {
		if last := s.lastKept(); s.wave < last {
			stuck[s.wave] = append(stuck[s.wave], s)
		}
	}
	if len(stuck) == 0 {
		t.Fatalf("the old placement (%d specs moved) applies no spec before its children: nothing to control", moved)
	}
	first := sortedKeys(stuck)[0]
	t.Logf("old placement: %d specs moved; the first stuck wave is %d: %v", moved, first, stuck[first])

	cl, src := e2eCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rev := src.publish(t, ctx, repo)
	cl.applyRoot(t, ctx, "kubernetes", "./deploy/kubernetes/_flux")

	// Bounded: the wave's health check times out after 40 s; the wait
	// allows for a busy machine, and fails as soon as every wave is Ready.
	stuckKs := waveName(t, ks, first)
	var msg string
	waitFor(t, ctx, 2*time.Minute, stuckKs+" failing its health check", func() string {
		cl.failFast(t, ctx, rev, []string{"kubernetes"})
		if cl.notReady(t, ctx, rev, waveNames(ks)) == "" {
			t.Fatalf("control: every wave applied %s with the old placement; it should deadlock", rev)
		}
		k := cl.kustomization(t, ctx, stuckKs)
		if k == nil {
			return stuckKs + ": not created"
		}
		if c := apimeta.FindStatusCondition(k.Status.Conditions, fluxmeta.ReadyCondition); c == nil || c.Reason != fluxmeta.HealthCheckFailedReason {
			return stuckKs + ": " + ksState(k)
		}
		msg = apimeta.FindStatusCondition(k.Status.Conditions, fluxmeta.ReadyCondition).Message
		return ""
	})
	for _, s := range stuck[first] {
		if !strings.Contains(msg, s.id+" status: ") {
			t.Errorf("%s: the health check failure does not name %s: %s", stuckKs, s.id, msg)
		}
	}
	// Every later wave waits on it; none of the stuck specs' later children
	// were applied; the specs are not Ready.
	for _, k := range ks {
		if k.wave(t) <= first {
			continue
		}
		kk := cl.kustomization(t, ctx, k.Metadata.Name)
		if c := apimeta.FindStatusCondition(kk.Status.Conditions, fluxmeta.ReadyCondition); c == nil || c.Reason != fluxmeta.DependencyNotReadyReason {
			t.Errorf("%s (after the stuck wave %d): %s; want DependencyNotReady", k.Metadata.Name, first, ksState(kk))
		}
	}
	for _, s := range stuck[first] {
		for c, w := range s.children {
			if w <= first {
				continue
			}
			if inv := inventoryOf(t, ctx, cl, ks, w); contains(inv, c) {
				t.Errorf("%s (wave %d), a child of %s, was applied", c, w, s.id)
			}
		}
		sp := strings.SplitN(s.id, "/", 3)
		gvk := kaotoGVK
		if sp[0] == componentGVK.Kind {
			gvk = componentGVK
		}
		if r := ready(get(ctx, t, cl, gvk, sp[1], sp[2])); r == "True" {
			t.Errorf("%s is Ready with children missing", s.id)
		}
	}
	if p := problems(ctx, t, cl, nil); p == "" {
		t.Errorf("control: the specs report Ready")
	}
	t.Logf("control: %s: %s", stuckKs, msg)
}

// inventoryOf is the inventory of the Kustomization of wave w.
func inventoryOf(t *testing.T, ctx context.Context, cl *cluster, ks []ksFile, w int) []string {
	k := cl.kustomization(t, ctx, waveName(t, ks, w))
	if k == nil {
		return nil
	}
	return inventory(t, k)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// problems lists what is not yet as it should be; "" when all is well.
// endpoints nil skips the endpoint comparison.
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
	if diff := cmp.Diff(endpoints, got); endpoints != nil && diff != "" {
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
		want := len(strings.Split(strings.TrimSpace(c.GetAnnotations()[inventoryKey]), "\n"))
		if len(inv) != want {
			out = append(out, fmt.Sprintf("Component %s: status.inventory has %d children, its %s %d", id, len(inv), inventoryKey, want))
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

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	return -1
}
