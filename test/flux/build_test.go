package flux

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	ssautils "github.com/fluxcd/pkg/ssa/utils"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// renderFlux renders folders of the repository into out with --flux.
func renderFlux(t *testing.T, out string, args ...string) {
	t.Helper()
	ws := tool(t, "WAVESMITH_BIN")
	run(t, repoRoot(t), ws, append([]string{"render", "-q", "-o", out, "--flux", "--tree-path", "deploy"}, args...)...)
}

// TestFluxBuild runs the real flux CLI (flux build kustomization --dry-run)
// on every generated Kustomization: each builds, yields exactly the
// objects of its wave with Flux's owner labels, and together the waves
// hold every object of the tree once.
func TestFluxBuild(t *testing.T) {
	fluxBin := tool(t, "FLUX_BIN")
	work := t.TempDir()
	deploy := filepath.Join(work, "deploy")
	renderFlux(t, deploy, "testdata/examples")

	all := build(t, deploy)
	seen := map[string]string{}
	ks := kustomizations(t, deploy)
	for i, k := range ks {
		if !k.Spec.Wait || !k.Spec.Prune {
			t.Errorf("%s: want wait and prune, got wait=%v prune=%v", k.Metadata.Name, k.Spec.Wait, k.Spec.Prune)
		}
		if i > 0 && (len(k.Spec.DependsOn) == 0 || k.Spec.DependsOn[0].Name != ks[i-1].Metadata.Name) {
			t.Errorf("%s: want it to depend on the previous wave %s, got %v", k.Metadata.Name, ks[i-1].Metadata.Name, k.Spec.DependsOn)
		}
		dir := filepath.Join(work, filepath.FromSlash(strings.TrimPrefix(k.Spec.Path, "./")))
		out := run(t, work, fluxBin, "build", "kustomization", k.Metadata.Name,
			"--path", dir, "--kustomization-file", k.File, "--dry-run")
		got, err := ssautils.ReadObjects(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s: reading flux build output: %v", k.Metadata.Name, err)
		}
		if len(got) == 0 {
			t.Errorf("%s: flux build gave no objects: an empty wave must not have a Kustomization", k.Metadata.Name)
		}
		want := build(t, dir)
		for _, o := range want {
			labels := o.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels["kustomize.toolkit.fluxcd.io/name"] = k.Metadata.Name
			labels["kustomize.toolkit.fluxcd.io/namespace"] = k.Metadata.Namespace
			o.SetLabels(labels)
			id := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
			if prev, dup := seen[id]; dup {
				t.Errorf("%s is in two waves: %s and %s", id, prev, k.Metadata.Name)
			}
			seen[id] = k.Metadata.Name
		}
		if diff := cmp.Diff(byID(want), byID(got)); diff != "" {
			t.Errorf("%s: flux build differs from the wave's files (-want +got):\n%s", k.Metadata.Name, diff)
		}
	}
	var missing []string
	for _, id := range ids(all) {
		if _, ok := seen[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 || len(seen) != len(all) {
		t.Errorf("the waves hold %d objects, the tree %d; missing from every wave: %v", len(seen), len(all), missing)
	}
	t.Logf("%d Kustomizations, %d objects", len(ks), len(all))
}

func byID(objs []*unstructured.Unstructured) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, o := range objs {
		m[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = o.Object
	}
	return m
}
