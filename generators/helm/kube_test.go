package helm

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestDefaultCapabilities: without a kube version, a chart requiring a
// recent Kubernetes renders as helm template --kube-version gives it the
// default version.
func TestDefaultCapabilities(t *testing.T) {
	dir := filepath.Join(root, "testdata", "charts", "kube-version")
	want, err := manifest.Decode("helm", helmTemplate(t, "rel", dir, "-n", "apps", "--kube-version", generators.DefaultKubeVersion()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Generator{}.Generate(context.Background(), chartSpec(t, "kube-version"), generators.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withoutAdditions(want), withoutAdditions(res.Objects)); diff != "" {
		t.Errorf("-helm template +wavesmith:\n%s", diff)
	}
}
