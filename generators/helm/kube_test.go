package helm

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
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

// TestHelmVersion: charts see the Helm SDK's full version, as released
// helm binaries report it (v3.22.0), not the SDK's source default (v3.22);
// the fallback of binaries without module information is go.mod's.
func TestHelmVersion(t *testing.T) {
	caps, err := capabilities(generators.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*helm\.sh/helm/v3 (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod does not require helm.sh/helm/v3")
	}
	if want := string(m[1]); caps.HelmVersion.Version != want || fallbackSDKVersion != want {
		t.Errorf(".Capabilities.HelmVersion.Version = %q, fallback %q; want go.mod's %s", caps.HelmVersion.Version, fallbackSDKVersion, want)
	}
}
