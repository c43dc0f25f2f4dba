package flux

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	ssautils "github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const (
	applyOrder   = "wavesmith.io/apply-order"
	inventoryKey = "wavesmith.io/inventory"
	ssaKey       = "kustomize.toolkit.fluxcd.io/ssa"
)

// isSpec reports whether o is a spec wavesmith renders and wavesmith-status
// reports on: a Kaoto or a Component.
func isSpec(o *unstructured.Unstructured) bool {
	gk := o.GroupVersionKind().GroupKind()
	return (gk.Group == "designer.kaoto.io" && gk.Kind == "Kaoto") || (gk.Group == "wavesmith.io" && gk.Kind == "Component")
}

func id(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
}

// specWave is where a spec of a Flux tree is applied, and its children.
type specWave struct {
	id       string
	wave     int
	children map[string]int // Kind/namespace/name -> wave
	// hooks are the children listed with hook= (chart hooks): absent from
	// the cluster, they count as done for wavesmith-status.
	hooks map[string]bool
}

// lastKept is the latest wave of the spec's children that are not hooks:
// those wavesmith-status waits for before the spec is Ready.
func (s specWave) lastKept() int {
	last := s.wave
	for c, w := range s.children {
		if !s.hooks[c] && w > last {
			last = w
		}
	}
	return last
}

// lastChild is the latest wave of the spec's children and the child in it.
func (s specWave) lastChild() (int, string) {
	last, which := s.wave, ""
	names := make([]string, 0, len(s.children))
	for c := range s.children {
		names = append(names, c)
	}
	sort.Strings(names)
	for i, c := range names {
		if w := s.children[c]; i == 0 || w > last {
			last, which = w, c
		}
	}
	return last, which
}

// objectWaves maps every object a Flux tree applies (Kind/namespace/name)
// to its wave, by kustomize-controller's build of each wave's folder;
// handoff stubs, which Flux never applies, are left out. It returns the
// objects too, in wave order.
func objectWaves(t *testing.T, deploy string) (map[string]int, []*unstructured.Unstructured) {
	t.Helper()
	waves := map[string]int{}
	var objs []*unstructured.Unstructured
	for _, k := range kustomizations(t, deploy) {
		w := k.wave(t)
		for _, o := range build(t, waveFolder(deploy, k)) {
			if strings.EqualFold(o.GetAnnotations()[ssaKey], "Ignore") {
				continue
			}
			waves[id(o)] = w
			objs = append(objs, o)
		}
	}
	return waves, objs
}

// specWaves reads a Flux tree: the wave each object is applied in (by
// kustomize-controller's build of each wave's folder; handoff stubs, which
// Flux never applies, left out) and, for every spec, the waves of its
// children (its wavesmith.io/inventory annotation, hooks and CRDs
// included).
func specWaves(t *testing.T, deploy string) []specWave {
	t.Helper()
	waves, objs := objectWaves(t, deploy)
	var specs []*unstructured.Unstructured
	for _, o := range objs {
		if isSpec(o) {
			specs = append(specs, o)
		}
	}
	var out []specWave
	for _, s := range specs {
		sw := specWave{id: id(s), wave: waves[id(s)], children: map[string]int{}, hooks: map[string]bool{}}
		for _, line := range strings.Split(strings.TrimSpace(s.GetAnnotations()[inventoryKey]), "\n") {
			// group/version/Kind/namespace/name ("" group and namespace
			// for the core group and cluster-scoped kinds), then
			// attributes (" hook=pre-install purge-order=-1").
			line, attrs, _ := strings.Cut(line, " ")
			parts := strings.Split(line, "/")
			if len(parts) != 5 {
				t.Fatalf("%s: %s entry %q: want group/version/kind/namespace/name", sw.id, inventoryKey, line)
			}
			c := parts[2] + "/" + parts[3] + "/" + parts[4]
			w, ok := waves[c]
			if !ok {
				t.Fatalf("%s: child %s is in no wave of %s/_flux", sw.id, c, deploy)
			}
			sw.children[c] = w
			if strings.Contains(" "+attrs, " hook=") {
				sw.hooks[c] = true
			}
		}
		out = append(out, sw)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	if len(out) == 0 {
		t.Fatalf("%s/_flux applies no spec", deploy)
	}
	return out
}

// checkSpecWaves fails t for every spec applied before one of its
// children: with wavesmith-status running, a spec is not Ready (kstatus
// InProgress) until its children exist and are ready, so its wave's
// Kustomization (wait: true) would wait for a later wave, which waits for
// it.
func checkSpecWaves(t *testing.T, deploy string) {
	t.Helper()
	for _, s := range specWaves(t, deploy) {
		if last, child := s.lastChild(); s.wave < last {
			t.Errorf("%s is applied in wave %d, before its child %s in wave %d: with wavesmith-status running, wave %d never becomes ready", s.id, s.wave, child, last, s.wave)
		}
	}
}

// TestSpecWaves checks, on the rendered examples, that every spec is
// applied at or after the wave of its last child.
func TestSpecWaves(t *testing.T) {
	work := t.TempDir()
	deploy := filepath.Join(work, "deploy")
	renderFlux(t, deploy, "testdata/examples")
	checkSpecWaves(t, deploy)
}

// declaredWaves maps each spec of the source files under dir to the wave
// it declares: a Component's spec.wave, else the wavesmith.io/apply-order
// annotation, else 0.
func declaredWaves(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		objs, err := ssautils.ReadObjects(strings.NewReader(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, o := range objs {
			if !isSpec(o) {
				continue
			}
			w := 0
			if v, ok, _ := unstructured.NestedInt64(o.Object, "spec", "wave"); ok {
				w = int(v)
			} else if a, ok := o.GetAnnotations()[applyOrder]; ok {
				if w, err = strconv.Atoi(a); err != nil {
					return fmt.Errorf("%s: %s %s: %w", p, id(o), applyOrder, err)
				}
			}
			out[id(o)] = w
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// oldPlacement rewrites a rendered Flux tree to place every spec as render
// did before specs moved to the wave of their last child: in the wave the
// spec declares (declaredWaves of the sources). It moves the spec's entry
// between the waves' kustomization.yaml files and returns how many it
// moved.
func oldPlacement(t *testing.T, deploy, sources string) int {
	t.Helper()
	declared := declaredWaves(t, sources)
	type waveFile struct {
		file      string
		k         map[string]any
		resources []any
	}
	byWave := map[int]*waveFile{}
	ksByWave := map[int]ksFile{}
	for _, k := range kustomizations(t, deploy) {
		ksByWave[k.wave(t)] = k
		f := filepath.Join(waveFolder(deploy, k), "kustomization.yaml")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wf := &waveFile{file: f}
		if err := yaml.Unmarshal(b, &wf.k); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		wf.resources, _ = wf.k["resources"].([]any)
		byWave[k.wave(t)] = wf
	}
	moved := 0
	movedTypes := map[int]map[string]bool{} // wave -> apiVersion/kind of the specs moved into it
	for _, w := range sortedKeys(byWave) {
		wf := byWave[w]
		var keep []any
		for _, r := range wf.resources {
			entry, _ := r.(string)
			b, err := os.ReadFile(filepath.Join(filepath.Dir(wf.file), filepath.FromSlash(entry)))
			if err != nil {
				t.Fatal(err)
			}
			objs, err := ssautils.ReadObjects(strings.NewReader(string(b)))
			if err != nil {
				t.Fatalf("%s: %v", entry, err)
			}
			to, ok := 0, false
			if len(objs) == 1 && isSpec(objs[0]) && !strings.EqualFold(objs[0].GetAnnotations()[ssaKey], "Ignore") {
				if to, ok = declared[id(objs[0])]; !ok {
					t.Fatalf("%s: no source under %s declares it", id(objs[0]), sources)
				}
			}
			if !ok || to == w {
				keep = append(keep, r)
				continue
			}
			dst := byWave[to]
			if dst == nil {
				t.Fatalf("%s declares wave %d, which the tree has no Kustomization for", id(objs[0]), to)
			}
			dst.resources = append(dst.resources, r)
			if movedTypes[to] == nil {
				movedTypes[to] = map[string]bool{}
			}
			movedTypes[to][objs[0].GetAPIVersion()+"/"+objs[0].GetKind()] = true
			moved++
		}
		wf.resources = keep
	}
	for _, wf := range byWave {
		wf.k["resources"] = wf.resources
		b, err := yaml.Marshal(wf.k)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, wf.file, string(b))
	}
	oldHealthChecks(t, ksByWave, movedTypes)
	return moved
}

// oldHealthChecks gives each wave Kustomization the health checks of the
// spec types moved into it, as render wrote them for the waves it placed
// specs in: the old placement judged a spec by its status too. Without
// them kstatus reads a spec wavesmith-status has not written yet as
// Current, and the wave may pass before the spec is seen (the control
// then converges by chance).
func oldHealthChecks(t *testing.T, ksByWave map[int]ksFile, movedTypes map[int]map[string]bool) {
	t.Helper()
	read := func(k ksFile) map[string]any {
		b, err := os.ReadFile(k.File)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", k.File, err)
		}
		return m
	}
	exprsOf := func(m map[string]any) []any {
		spec, _ := m["spec"].(map[string]any)
		list, _ := spec["healthCheckExprs"].([]any)
		return list
	}
	typeOf := func(e any) string {
		em, _ := e.(map[string]any)
		return fmt.Sprintf("%v/%v", em["apiVersion"], em["kind"])
	}
	rendered := map[string]any{} // apiVersion/kind -> the expressions render wrote
	for _, k := range ksByWave {
		for _, e := range exprsOf(read(k)) {
			rendered[typeOf(e)] = e
		}
	}
	for _, w := range sortedKeys(movedTypes) {
		k := ksByWave[w]
		m := read(k)
		list := exprsOf(m)
		have := map[string]bool{}
		for _, e := range list {
			have[typeOf(e)] = true
		}
		for _, typ := range sortedStrings(movedTypes[w]) {
			if have[typ] {
				continue
			}
			e, ok := rendered[typ]
			if !ok {
				t.Fatalf("no wave Kustomization of the render has healthCheckExprs for %s", typ)
			}
			list = append(list, e)
		}
		m["spec"].(map[string]any)["healthCheckExprs"] = list
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, k.File, string(b))
	}
}

func sortedStrings(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
