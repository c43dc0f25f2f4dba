package helm

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// serveOCI runs an in-process OCI registry (go-containerregistry's
// pkg/registry) holding webapp at each version, pushed with the Helm SDK's
// registry client; it returns the host.
func serveOCI(t *testing.T, versions ...string) string {
	t.Helper()
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	client, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		chrt, err := loader.Load(filepath.Join(root, "testdata", "charts", "webapp"))
		if err != nil {
			t.Fatal(err)
		}
		chrt.Metadata.Version = v
		file, err := chartutil.Save(chrt, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Push(data, host+"/charts/webapp:"+v, registry.PushOptCreationTime("2026-01-01T00:00:00Z")); err != nil {
			t.Fatal(err)
		}
	}
	return host
}

// TestOCIChart: a chart of an OCI registry, its version a semver range
// over the tags, fetched and rendered offline as the real
// helm template oci://... --version renders it.
func TestOCIChart(t *testing.T) {
	host := serveOCI(t, "0.1.0", "0.2.0", "1.0.0")
	s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "oci://" + host + "/charts", "name": "webapp", "version": "<1.0.0"}}})
	rootDir, cache := t.TempDir(), t.TempDir()
	t.Setenv("WAVESMITH_CACHE_DIR", cache)
	locked, err := Fetch(context.Background(), rootDir, []*manifest.Object{s}, FetchOptions{Cache: cache, PlainHTTP: true, RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
	if err != nil {
		t.Fatal(err)
	}
	if len(locked) != 1 || locked[0].Resolved != "0.2.0" || locked[0].URL != "oci://"+host+"/charts/webapp:0.2.0" {
		t.Fatalf("want 0.2.0 locked, got %+v", locked)
	}
	res, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HELM_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("HELM_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("HELM_DATA_HOME", filepath.Join(home, "data"))
	out := helmTemplate(t, "rel", "oci://"+host+"/charts/webapp", "--version", "<1.0.0", "--plain-http", "--namespace", "apps")
	want, err := decode("helm", out)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || len(want) != len(res.Objects) {
		t.Fatalf("helm template gives %d objects, wavesmith %d", len(want), len(res.Objects))
	}
	if diff := cmp.Diff(withoutAdditions(runsOnInstall(want)), withoutAdditions(res.Objects)); diff != "" {
		t.Errorf("-helm template +wavesmith:\n%s", diff)
	}
}
