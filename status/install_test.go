package status

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/wavesmith/wavesmith/manifest"
)

// TestInstallManifestsAgree renders kustomize/status-controller with
// kustomize and charts/wavesmith with Helm (default values) and requires
// the same objects.
func TestInstallManifestsAgree(t *testing.T) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("..", "kustomize", "status-controller"))
	if err != nil {
		t.Fatalf("kustomize: %v", err)
	}
	kyaml, err := rm.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	fromKustomize := objectsOf(t, "kustomize", string(kyaml))

	chart, err := loader.Load(filepath.Join("..", "charts", "wavesmith"))
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	vals, err := chartutil.ToRenderValues(chart, map[string]any{}, chartutil.ReleaseOptions{Name: "wavesmith", Namespace: "wavesmith-system", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := engine.Render(chart, vals)
	if err != nil {
		t.Fatalf("helm: %v", err)
	}
	var docs []string
	for name, s := range rendered {
		if strings.HasSuffix(name, ".yaml") && strings.TrimSpace(s) != "" {
			docs = append(docs, s)
		}
	}
	for _, crd := range chart.CRDObjects() {
		docs = append(docs, string(crd.File.Data))
	}
	fromHelm := objectsOf(t, "helm", strings.Join(docs, "\n---\n"))

	if len(fromKustomize) < 8 {
		t.Fatalf("kustomize gave only %d objects", len(fromKustomize))
	}
	if diff := cmp.Diff(fromKustomize, fromHelm); diff != "" {
		t.Errorf("-kustomize +helm:\n%s", diff)
	}
}

func objectsOf(t *testing.T, name, stream string) map[string]any {
	t.Helper()
	objs, err := manifest.Decode(name, []byte(stream))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m := map[string]any{}
	for _, o := range objs {
		m[o.Key().String()] = manifest.DeepCopyValue(o.Map)
	}
	return m
}
