package syncwaves

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/wavesmith/wavesmith/test/testkit"
)

// Annotations the test reads from wavesmith's output and sources.
const (
	syncWave         = "argocd.argoproj.io/sync-wave"
	hookAnnotation   = "argocd.argoproj.io/hook"
	hookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	helmHook         = "helm.sh/hook"
	inventoryKey     = "wavesmith.io/inventory"
	applyOrder       = "wavesmith.io/apply-order"
)

// phaseOrder is gitops-engine's phase order.
var phaseOrder = map[common.SyncPhase]int{common.SyncPhasePreSync: 0, common.SyncPhaseSync: 1, common.SyncPhasePostSync: 2}

// step is one (phase, wave) of a sync.
type step struct {
	Phase common.SyncPhase
	Wave  int
}

func (s step) before(o step) bool {
	if s.Phase != o.Phase {
		return phaseOrder[s.Phase] < phaseOrder[o.Phase]
	}
	return s.Wave < o.Wave
}

func (s step) String() string { return fmt.Sprintf("%s/%d", s.Phase, s.Wave) }

// target is one rendered object and where wavesmith put it.
type target struct {
	obj   *unstructured.Unstructured
	key   kube.ResourceKey
	steps []step
	hook  bool
	// deletedOnSuccess: a hook that Argo CD deletes once it succeeded.
	deletedOnSuccess bool
	// children: a spec's wavesmith.io/inventory.
	children []child
}

func (tg *target) isSpec() bool { return isSpecKey(tg.key) }

func isSpecKey(k kube.ResourceKey) bool {
	return (k.Group == "designer.kaoto.io" && k.Kind == "Kaoto") || (k.Group == "wavesmith.io" && k.Kind == "Component")
}

// child is one line of a spec's inventory.
type child struct {
	key kube.ResourceKey
	// mayBeAbsent: a hook or an object with a purge order (the line's
	// hook= or purge-order= attribute), which wavesmith-status counts as
	// done while absent once every other child is ready.
	mayBeAbsent bool
}

// renderObjects runs `wavesmith render` on dir.
func renderObjects(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	bin := testkit.Tool(t, "WAVESMITH_BIN", "make build")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "render", "--root", repoRoot(t), dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("wavesmith render warnings:\n%s", stderr.String())
	}
	objs, err := decodeObjects(&stdout)
	if err != nil {
		t.Fatalf("decoding the render: %v", err)
	}
	if len(objs) == 0 {
		t.Fatalf("%s rendered no objects", dir)
	}
	return objs
}

// decodeObjects reads a YAML or JSON stream of objects.
func decodeObjects(r io.Reader) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// repoRoot is the wavesmith checkout holding this module.
func repoRoot(t *testing.T) string {
	t.Helper()
	return testkit.RepoRoot(t)
}

// classify reads the phase and wave wavesmith wrote on each object, and
// each spec's inventory.
func classify(t *testing.T, objs []*unstructured.Unstructured) []*target {
	t.Helper()
	var out []*target
	for _, o := range objs {
		k := kube.GetResourceKey(o)
		a := o.GetAnnotations()
		w, ok := a[syncWave]
		if !ok {
			t.Fatalf("%s has no %s annotation", k, syncWave)
		}
		wave, err := strconv.Atoi(w)
		if err != nil {
			t.Fatalf("%s: %s %q: %v", k, syncWave, w, err)
		}
		if o.GetKind() == "Namespace" && o.GetName() == syncNamespace {
			t.Fatalf("the fixture has a Namespace named like the sync namespace %q: gitops-engine creates it outside the waves", syncNamespace)
		}
		tg := &target{obj: o, key: k}
		hooks, isHook := a[hookAnnotation]
		if !isHook {
			if _, helm := a[helmHook]; helm {
				t.Fatalf("%s has %s but no %s: wavesmith must translate Helm hooks", k, helmHook, hookAnnotation)
			}
			hooks = string(common.SyncPhaseSync)
		}
		tg.hook = isHook
		for _, h := range strings.Split(hooks, ",") {
			switch p := common.SyncPhase(strings.TrimSpace(h)); p {
			case common.SyncPhasePreSync, common.SyncPhaseSync, common.SyncPhasePostSync:
				tg.steps = append(tg.steps, step{p, wave})
			default:
				t.Fatalf("%s: hook %q is not one this test syncs", k, h)
			}
		}
		sort.Slice(tg.steps, func(i, j int) bool { return tg.steps[i].before(tg.steps[j]) })
		if isHook {
			for _, p := range strings.Split(a[hookDeletePolicy], ",") {
				if strings.TrimSpace(p) == string(common.HookDeletePolicyHookSucceeded) {
					tg.deletedOnSuccess = true
				}
			}
		}
		if tg.isSpec() {
			tg.children = parseInventory(t, k, a[inventoryKey])
		}
		out = append(out, tg)
	}
	return out
}

// parseInventory reads a wavesmith.io/inventory annotation: one child a
// line, group/version/Kind/namespace/name ("" group and namespace for the
// core group and cluster-scoped kinds), then key=value attributes.
func parseInventory(t *testing.T, spec kube.ResourceKey, inv string) []child {
	t.Helper()
	if strings.TrimSpace(inv) == "" {
		t.Fatalf("%s has no %s", spec, inventoryKey)
	}
	var out []child
	for _, line := range strings.Split(strings.TrimSpace(inv), "\n") {
		fields := strings.Fields(line)
		parts := strings.Split(fields[0], "/")
		if len(parts) != 5 {
			t.Fatalf("%s: %s line %q: want group/version/Kind/namespace/name", spec, inventoryKey, line)
		}
		c := child{key: kube.NewResourceKey(parts[0], parts[2], parts[3], parts[4])}
		for _, attr := range fields[1:] {
			switch k, _, _ := strings.Cut(attr, "="); k {
			case "hook", "purge-order":
				c.mayBeAbsent = true
			default:
				t.Fatalf("%s: %s line %q: attribute %q", spec, inventoryKey, line, attr)
			}
		}
		out = append(out, c)
	}
	return out
}

// byKey indexes targets.
func byKey(targets []*target) map[kube.ResourceKey]*target {
	m := map[kube.ResourceKey]*target{}
	for _, tg := range targets {
		m[tg.key] = tg
	}
	return m
}

// lateChildren returns the children of spec that the sync applies in a
// step after the spec's and that wavesmith-status waits for (not hooks or
// objects with a purge order): while they are missing the spec is not
// Ready, and gitops-engine does not start their step before the spec's
// is healthy.
func lateChildren(t *testing.T, spec *target, all map[kube.ResourceKey]*target) []*target {
	t.Helper()
	var out []*target
	for _, c := range spec.children {
		tg, ok := all[c.key]
		if !ok {
			t.Fatalf("%s lists %s, which the render does not hold", spec.key, c.key)
		}
		if !c.mayBeAbsent && spec.steps[0].before(tg.steps[0]) {
			out = append(out, tg)
		}
	}
	return out
}

// checkSpecPlacement fails t for every spec in an earlier wave than one of
// its children (hooks and CRDs included): render places each spec in the
// wave of its last child.
func checkSpecPlacement(t *testing.T, targets []*target) {
	t.Helper()
	all := byKey(targets)
	specs := 0
	for _, s := range targets {
		if !s.isSpec() {
			continue
		}
		specs++
		for _, c := range s.children {
			if tg, ok := all[c.key]; !ok {
				t.Errorf("%s lists %s, which the render does not hold", s.key, c.key)
			} else if tg.steps[0].Wave > s.steps[0].Wave {
				t.Errorf("%s is in wave %d, before its child %s in wave %d", s.key, s.steps[0].Wave, c.key, tg.steps[0].Wave)
			}
		}
	}
	if specs == 0 {
		t.Fatal("the render holds no Kaoto or Component")
	}
}

// bubbleDependencies moves each Namespace to the step of the first object
// in it, and each CustomResourceDefinition to the step of the first object
// of its kind, when those come earlier: gitops-engine does the same
// (syncTasks.Sort, adjustDeps), so that a PreSync hook finds its
// namespace. Such a Namespace or CRD is applied in that step, not its own.
func bubbleDependencies(t *testing.T, targets []*target) {
	t.Helper()
	first := func(ref func(*target) bool) (step, bool) {
		var best step
		found := false
		for _, o := range targets {
			if ref(o) && (!found || o.steps[0].before(best)) {
				best, found = o.steps[0], true
			}
		}
		return best, found
	}
	move := func(dep *target, s step) {
		t.Logf("%s (%s) is applied in %s, with the first object that needs it", dep.key, dep.steps[0], s)
		dep.steps = []step{s}
	}
	for _, d := range targets {
		if d.key.Kind == "Namespace" && d.key.Group == "" {
			if s, ok := first(func(o *target) bool { return o.key.Namespace == d.key.Name }); ok && s.before(d.steps[0]) {
				move(d, s)
			}
		}
	}
	for _, d := range targets {
		if d.key.Kind == "CustomResourceDefinition" && d.key.Group == "apiextensions.k8s.io" {
			group, _, _ := unstructured.NestedString(d.obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(d.obj.Object, "spec", "names", "kind")
			if s, ok := first(func(o *target) bool { return o.key.Group == group && o.key.Kind == kind }); ok && s.before(d.steps[0]) {
				move(d, s)
			}
		}
	}
}

// expectedSteps returns the (phase, wave) steps of the annotations,
// sorted: PreSync, Sync, PostSync, each by wave.
func expectedSteps(targets []*target) []step {
	seen := map[step]bool{}
	var out []step
	for _, tg := range targets {
		for _, s := range tg.steps {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].before(out[j]) })
	return out
}

// declaredWaves maps each spec of the source files under dir
// (Kind/namespace/name) to the wave it declares: a Component's spec.wave,
// else its wavesmith.io/apply-order annotation, else 0.
func declaredWaves(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".json") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		objs, err := decodeObjects(f)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, o := range objs {
			k := kube.GetResourceKey(o)
			if !isSpecKey(k) {
				continue
			}
			w := 0
			if v, ok, _ := unstructured.NestedInt64(o.Object, "spec", "wave"); ok {
				w = int(v)
			} else if a, ok := o.GetAnnotations()[applyOrder]; ok {
				if w, err = strconv.Atoi(a); err != nil {
					return fmt.Errorf("%s: %s %s: %w", p, k, applyOrder, err)
				}
			}
			out[specID(k)] = w
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func specID(k kube.ResourceKey) string { return k.Kind + "/" + k.Namespace + "/" + k.Name }

// oldPlacement rewrites the sync-wave annotation of every rendered spec to
// the wave its source declares, where render placed specs before they
// moved to the wave of their last child. It returns how many it moved.
func oldPlacement(t *testing.T, objs []*unstructured.Unstructured, sources string) int {
	t.Helper()
	declared := declaredWaves(t, sources)
	moved := 0
	for _, o := range objs {
		k := kube.GetResourceKey(o)
		if !isSpecKey(k) {
			continue
		}
		w, ok := declared[specID(k)]
		if !ok {
			t.Fatalf("%s: no source under %s declares it", k, sources)
		}
		a := o.GetAnnotations()
		if a[syncWave] != strconv.Itoa(w) {
			t.Logf("old placement: %s from wave %s to %d", k, a[syncWave], w)
			a[syncWave] = strconv.Itoa(w)
			o.SetAnnotations(a)
			moved++
		}
	}
	return moved
}
