package flux

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
)

const ownerLabel = "kustomize.toolkit.fluxcd.io/name"

// live reads the object o names from the cluster; nil when it does not
// exist (or its kind is not served yet).
func (cl *cluster) live(t *testing.T, ctx context.Context, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GroupVersionKind())
	err := cl.c.Get(ctx, client.ObjectKeyFromObject(o), u)
	if apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: %v", id(o), err)
	}
	return u
}

// TestWavesOnCluster lets kustomize-controller reconcile the examples'
// wave Kustomizations from a GitRepository artifact: a wave whose objects
// are not healthy holds every later wave back (wait and dependsOn), each
// wave owns exactly its folder's objects, and reconciling again changes
// nothing but drift (objects applied once, ssa IfNotPresent, keep their
// live edits).
func TestWavesOnCluster(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	deploy := filepath.Join(work, "deploy")
	renderFlux(t, deploy, "testdata/examples")
	ks := kustomizations(t, deploy)
	names := append([]string{"wavesmith"}, waveNames(ks)...)
	waves, objs := objectWaves(t, deploy)

	// The migration Job of an early wave does not complete until released.
	const heldJob = "Job/operators/widgets-migrate"
	held, ok := waves[heldJob]
	if !ok {
		t.Fatalf("the examples have no %s", heldJob)
	}
	var heldKs, nextKs string
	for i, k := range ks {
		if k.wave(t) == held && i+1 < len(ks) {
			heldKs, nextKs = k.Metadata.Name, ks[i+1].Metadata.Name
		}
	}
	if nextKs == "" {
		t.Fatalf("%s is in the last wave, %d: nothing to hold back", heldJob, held)
	}

	cl := startCluster(t)
	cl.startStatus(t) // as in production: the wave of a spec waits for its status
	kub := cl.startKubelet(t, heldJob)
	cl.startKustomizeController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	src := cl.newSource(t, "flux-system")
	rev := src.publish(t, ctx, work)
	cl.applyRoot(t, ctx, "wavesmith", "./deploy/_flux")

	waitFor(t, ctx, 3*time.Minute, heldKs+" waiting on "+heldJob+" and "+nextKs+" on it", func() string {
		cl.failFast(t, ctx, rev, names)
		h, n := cl.kustomization(t, ctx, heldKs), cl.kustomization(t, ctx, nextKs)
		if h == nil || !apimeta.IsStatusConditionTrue(h.Status.Conditions, fluxmeta.ReconcilingCondition) ||
			!strings.Contains(apimeta.FindStatusCondition(h.Status.Conditions, fluxmeta.ReconcilingCondition).Message, "Running health checks") {
			return heldKs + ": " + ksState(h) + "; want it running health checks"
		}
		if n == nil || apimeta.FindStatusCondition(n.Status.Conditions, fluxmeta.ReadyCondition) == nil ||
			apimeta.FindStatusCondition(n.Status.Conditions, fluxmeta.ReadyCondition).Reason != fluxmeta.DependencyNotReadyReason {
			return nextKs + ": " + ksState(n) + "; want DependencyNotReady"
		}
		return ""
	})
	for _, o := range objs {
		if waves[id(o)] > held && cl.live(t, ctx, o) != nil {
			t.Errorf("%s (wave %d) exists while wave %d is not healthy", id(o), waves[id(o)], held)
		}
	}
	kub.release(heldJob)
	cl.waitApplied(t, ctx, 3*time.Minute, rev, names)

	// Each wave owns its folder's objects: its inventory, the owner label.
	for _, k := range ks {
		want := ids(build(t, waveFolder(deploy, k)))
		if diff := cmp.Diff(want, inventory(t, cl.kustomization(t, ctx, k.Metadata.Name))); diff != "" {
			t.Errorf("%s: inventory differs from the wave's objects (-want +got):\n%s", k.Metadata.Name, diff)
		}
	}
	versions := map[string]string{}
	for _, o := range objs {
		u := cl.live(t, ctx, o)
		if u == nil {
			t.Fatalf("%s was not applied", id(o))
		}
		if got, want := u.GetLabels()[ownerLabel], waveName(t, ks, waves[id(o)]); got != want {
			t.Errorf("%s: owned by %q, want %q", id(o), got, want)
		}
		versions[id(o)] = u.GetResourceVersion()
	}

	// Live edits: one to an object applied once (ssa IfNotPresent), one to
	// an object Flux keeps in line. Then every wave reconciles again.
	edit := func(ns, name, value string) string {
		var cm corev1.ConfigMap
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &cm); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range cm.Data {
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			t.Fatalf("ConfigMap %s/%s has no data to edit", ns, name)
		}
		sort.Strings(keys)
		key := keys[0]
		cm.Data[key] = value
		if err := cl.c.Update(ctx, &cm, client.FieldOwner("someone")); err != nil {
			t.Fatal(err)
		}
		delete(versions, "ConfigMap/"+ns+"/"+name)
		return key
	}
	onceKey := edit("demo", "designer-settings", "edited")
	var kept string
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetNamespace() == "shop-prod" {
			kept = o.GetName()
		}
	}
	keptKey := edit("shop-prod", kept, "edited")
	cl.requestReconcile(t, ctx, 3*time.Minute, waveNames(ks))
	var cm corev1.ConfigMap
	if err := cl.c.Get(ctx, types.NamespacedName{Namespace: "demo", Name: "designer-settings"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data[onceKey] != "edited" {
		t.Errorf("ConfigMap demo/designer-settings (ssa IfNotPresent) was re-applied: %s=%q", onceKey, cm.Data[onceKey])
	}
	if err := cl.c.Get(ctx, types.NamespacedName{Namespace: "shop-prod", Name: kept}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data[keptKey] == "edited" {
		t.Errorf("ConfigMap shop-prod/%s: the live edit of %s survived the reconcile", kept, keptKey)
	}
	for _, o := range objs {
		want, ok := versions[id(o)]
		if u := cl.live(t, ctx, o); ok && (u == nil || u.GetResourceVersion() != want) {
			t.Errorf("%s changed on a reconcile of an unchanged revision", id(o))
		}
	}
}

// waveName is the name of the Kustomization of wave w.
func waveName(t *testing.T, ks []ksFile, w int) string {
	t.Helper()
	for _, k := range ks {
		if k.wave(t) == w {
			return k.Metadata.Name
		}
	}
	t.Fatalf("no Kustomization applies wave %d", w)
	return ""
}

// TestHandoffOnCluster moves a ConfigMap to a later wave and lets
// kustomize-controller reconcile the new revision: with wavesmith's
// handoff stub the object survives (same UID) and the new wave owns it.
// The control: the same move rendered without the previous tree (no stub)
// lets the old wave prune it before the new wave re-creates it (a new UID),
// which is the hazard the stub prevents.
func TestHandoffOnCluster(t *testing.T) {
	t.Parallel()
	cl := startCluster(t)
	cl.startKustomizeController(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	specs := func(dir, dataWave string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "objects.yaml"), `apiVersion: v1
kind: Namespace
metadata:
  name: handoff
  annotations:
    wavesmith.io/apply-order: "0"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: handoff
  annotations:
    wavesmith.io/apply-order: "0"
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: data
  namespace: handoff
  annotations:
    wavesmith.io/apply-order: "`+dataWave+`"
data: {precious: "yes"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: later
  namespace: handoff
  annotations:
    wavesmith.io/apply-order: "2"
data: {b: "2"}
`)
	}
	ws := tool(t, "WAVESMITH_BIN")
	uid := func() (types.UID, string) {
		var cm corev1.ConfigMap
		err := cl.c.Get(ctx, types.NamespacedName{Namespace: "handoff", Name: "data"}, &cm)
		if apierrors.IsNotFound(err) {
			return "", ""
		}
		if err != nil {
			t.Fatal(err)
		}
		return cm.UID, cm.Labels[ownerLabel]
	}
	src := cl.newSource(t, "flux-system")
	// publish makes the tree under root the source's revision and waits
	// until every Kustomization applied it.
	publish := func(root string) {
		t.Helper()
		rev := src.publish(t, ctx, root)
		names := append([]string{"wavesmith"}, waveNames(kustomizations(t, filepath.Join(root, "deploy")))...)
		cl.waitApplied(t, ctx, 2*time.Minute, rev, names)
	}

	work := t.TempDir()
	in, deploy := filepath.Join(work, "src"), filepath.Join(work, "deploy")
	render := func(out string) {
		t.Helper()
		run(t, work, ws, "render", "-q", in, "-o", out, "--flux", "--tree-path", "deploy")
	}
	specs(in, "0")
	render(deploy)
	cl.applyRoot(t, ctx, "wavesmith", "./deploy/_flux")
	publish(work)
	before, owner := uid()
	if before == "" || owner != "wavesmith-wave-0" {
		t.Fatalf("after the first render: want ConfigMap data owned by wavesmith-wave-0, got uid %q owner %q", before, owner)
	}

	// The object moves from wave 0 to wave 1; wave 0 reconciles the new
	// revision first (wave 1 depends on it).
	specs(in, "1")
	render(deploy)
	if _, err := os.Stat(filepath.Join(deploy, "_flux", "wave-0", "handoff-configmap-handoff-data.yaml")); err != nil {
		t.Fatalf("want a handoff stub in wave 0: %v", err)
	}
	publish(work)
	after, owner := uid()
	if diff := cmp.Diff([]string{string(before), "wavesmith-wave-1"}, []string{string(after), owner}); diff != "" {
		t.Errorf("after the move: want the same object owned by wave 1 (-want +got):\n%s", diff)
	}
	t.Logf("wave 0 keeps the handed-off object in its inventory: %v", inventory(t, cl.kustomization(t, ctx, "wavesmith-wave-0")))
	// Idempotent: rendering again keeps the stub and check passes.
	run(t, work, ws, "check", "-q", in, "-o", deploy, "--flux", "--tree-path", "deploy")

	// Back to wave 0: wave 0 adopts it first, wave 1 then drops it from
	// its inventory without deleting what wave 0 now owns.
	specs(in, "0")
	render(deploy)
	publish(work)
	if back, owner := uid(); back != before || owner != "wavesmith-wave-0" {
		t.Fatalf("moving back to an earlier wave: uid %q owner %q, want %q owned by wavesmith-wave-0", back, owner, before)
	}

	// The control: the same move rendered into a fresh tree (no previous
	// tree, so no stub).
	specs(in, "1")
	fresh := filepath.Join(work, "fresh")
	render(filepath.Join(fresh, "deploy"))
	if _, err := os.Stat(filepath.Join(fresh, "deploy", "_flux", "wave-0", "handoff-configmap-handoff-data.yaml")); !os.IsNotExist(err) {
		t.Fatalf("a render without a previous tree wrote a stub: %v", err)
	}
	publish(fresh)
	if got, owner := uid(); got == before || owner != "wavesmith-wave-1" {
		t.Errorf("control: without a stub, wave 0 should have pruned ConfigMap data and wave 1 re-created it; uid %q (was %q), owner %q", got, before, owner)
	}
	if t.Failed() {
		for _, n := range []string{"wavesmith-wave-0", "wavesmith-wave-1"} {
			ks := cl.kustomization(t, ctx, n)
			t.Logf("%s: %s; inventory %v", n, ksState(ks), inventory(t, ks))
		}
	}
}
