package flux

import (
	"os"
	"path/filepath"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"sigs.k8s.io/yaml"
)

// TestFluxExample decodes the shipped example with kustomize-controller's
// own API types, refusing unknown fields, and builds its folder.
func TestFluxExample(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "kustomize", "flux")
	b, err := os.ReadFile(filepath.Join(dir, "waves.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomizev1.Kustomization
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatalf("kustomize/flux/waves.yaml: %v", err)
	}
	if k.Kind != kustomizev1.KustomizationKind || k.APIVersion != kustomizev1.GroupVersion.String() || !k.Spec.Prune || k.Spec.SourceRef.Kind != "GitRepository" {
		t.Errorf("unexpected example: %+v", k)
	}
	if objs := build(t, dir); len(objs) != 1 {
		t.Errorf("kustomize/flux builds %d objects, want 1", len(objs))
	}
}
