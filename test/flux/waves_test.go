package flux

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/ssa"
	ssautils "github.com/fluxcd/pkg/ssa/utils"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// TestWavesOnCluster applies the examples' Kustomizations one after the
// other, as kustomize-controller would (each waits for the health of its
// objects before the next, which depends on it, starts), on envtest.
func TestWavesOnCluster(t *testing.T) {
	cl := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kctx, stop := context.WithCancel(ctx)
	wg := cl.kubelet(kctx)
	defer func() { stop(); wg.Wait() }()

	work := t.TempDir()
	deploy := filepath.Join(work, "deploy")
	renderFlux(t, deploy, "testdata/examples")
	for _, k := range kustomizations(t, deploy) {
		dir := filepath.Join(work, filepath.FromSlash(strings.TrimPrefix(k.Spec.Path, "./")))
		cs := cl.reconcile(t, ctx, k.Metadata.Name, k.Metadata.Namespace, dir)
		for _, e := range cs.Entries {
			if e.Action != ssa.CreatedAction {
				t.Errorf("%s: first apply of %s: want created, got %s", k.Metadata.Name, e.Subject, e.Action)
			}
		}
	}
	// A second pass changes nothing: the tree is stable on the cluster.
	// Objects applied once (reconcile-policy once: ssa IfNotPresent, such
	// as Helm hooks) are skipped instead.
	once := 0
	for _, k := range kustomizations(t, deploy) {
		dir := filepath.Join(work, filepath.FromSlash(strings.TrimPrefix(k.Spec.Path, "./")))
		ifNotPresent := map[string]bool{}
		for _, o := range build(t, dir) {
			if o.GetAnnotations()["kustomize.toolkit.fluxcd.io/ssa"] == "IfNotPresent" {
				ifNotPresent[ssautils.FmtUnstructured(o)] = true
			}
		}
		for _, e := range cl.reconcile(t, ctx, k.Metadata.Name, k.Metadata.Namespace, dir).Entries {
			want := ssa.UnchangedAction
			if ifNotPresent[e.Subject] {
				want = ssa.SkippedAction
				once++
			}
			if e.Action != want {
				t.Errorf("%s: second apply of %s: want %s, got %s", k.Metadata.Name, e.Subject, want, e.Action)
			}
		}
	}
	if once == 0 {
		t.Errorf("the examples hold objects applied once (Helm hooks, a settings ConfigMap): none was skipped")
	}
}

// TestHandoffOnCluster moves a ConfigMap to a later wave and reconciles the
// waves in order, as Flux would: with wavesmith's handoff stub the object
// survives (same UID) and the new wave owns it; rendered without the
// previous tree (no stub), the old wave prunes it first, which is the
// hazard the stub prevents.
func TestHandoffOnCluster(t *testing.T) {
	cl := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	specs := func(dir, dataWave string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		y := `apiVersion: v1
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
    wavesmith.io/apply-order: "` + dataWave + `"
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
`
		if err := os.WriteFile(filepath.Join(dir, "objects.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := tool(t, "WAVESMITH_BIN")
	apply := func(deploy string) {
		t.Helper()
		for _, k := range kustomizations(t, deploy) {
			dir := filepath.Join(filepath.Dir(deploy), filepath.FromSlash(strings.TrimPrefix(k.Spec.Path, "./")))
			cl.reconcile(t, ctx, k.Metadata.Name, k.Metadata.Namespace, dir)
		}
	}
	uid := func() (types.UID, string) {
		var cm corev1.ConfigMap
		err := cl.c.Get(ctx, types.NamespacedName{Namespace: "handoff", Name: "data"}, &cm)
		if apierrors.IsNotFound(err) {
			return "", ""
		}
		if err != nil {
			t.Fatal(err)
		}
		return cm.UID, cm.Labels["kustomize.toolkit.fluxcd.io/name"]
	}

	work := t.TempDir()
	src, deploy := filepath.Join(work, "src"), filepath.Join(work, "deploy")
	specs(src, "0")
	run(t, work, ws, "render", "-q", src, "-o", deploy, "--flux", "--tree-path", "deploy")
	apply(deploy)
	before, owner := uid()
	if before == "" || owner != "wavesmith-wave-0" {
		t.Fatalf("after the first render: want ConfigMap data owned by wavesmith-wave-0, got uid %q owner %q", before, owner)
	}

	// The object moves from wave 0 to wave 1. Wave 0 reconciles first.
	specs(src, "1")
	run(t, work, ws, "render", "-q", src, "-o", deploy, "--flux", "--tree-path", "deploy")
	if _, err := os.Stat(filepath.Join(deploy, "flux", "wave-0", "handoff-configmap-handoff-data.yaml")); err != nil {
		t.Fatalf("want a handoff stub in wave 0: %v", err)
	}
	ks := kustomizations(t, deploy)
	wave0 := filepath.Join(work, filepath.FromSlash(strings.TrimPrefix(ks[0].Spec.Path, "./")))
	cl.reconcile(t, ctx, ks[0].Metadata.Name, ks[0].Metadata.Namespace, wave0)
	if got, _ := uid(); got != before {
		t.Fatalf("wave 0 pruned the moving object before wave 1 adopted it: uid %q, want %q", got, before)
	}
	apply(deploy)
	after, owner := uid()
	if diff := cmp.Diff([]string{string(before), "wavesmith-wave-1"}, []string{string(after), owner}); diff != "" {
		t.Errorf("after the move: want the same object owned by wave 1 (-want +got):\n%s", diff)
	}
	// Idempotent: rendering again keeps the stub and check passes.
	run(t, work, ws, "check", "-q", src, "-o", deploy, "--flux", "--tree-path", "deploy")

	// The control: the same move rendered into a fresh tree (no previous
	// tree, so no stub) lets wave 0 prune the object. First move it back.
	specs(src, "0")
	run(t, work, ws, "render", "-q", src, "-o", deploy, "--flux", "--tree-path", "deploy")
	apply(deploy)
	back, _ := uid()
	if back != before {
		t.Fatalf("moving back to an earlier wave re-created the object: uid %q, want %q", back, before)
	}
	specs(src, "1")
	fresh := filepath.Join(work, "fresh", "deploy")
	run(t, work, ws, "render", "-q", src, "-o", fresh, "--flux", "--tree-path", "deploy")
	ks = kustomizations(t, fresh)
	cl.inventory[ks[0].Metadata.Name] = cl.inventory["wavesmith-wave-0"]
	cl.reconcile(t, ctx, ks[0].Metadata.Name, ks[0].Metadata.Namespace, filepath.Join(filepath.Dir(fresh), filepath.FromSlash(strings.TrimPrefix(ks[0].Spec.Path, "./"))))
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := uid()
		if got == "" {
			break // pruned: the hazard is real, and the stub is what prevents it
		}
		if time.Now().After(deadline) {
			t.Fatalf("control: without a stub, wave 0 should have pruned ConfigMap data; it is still there")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
