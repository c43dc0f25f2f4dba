package argocdplugin

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/helm"
	"github.com/wavesmith/wavesmith/manifest"
)

// chartServer serves a chart repository holding web 1.0.0 (one
// ConfigMap holding data) from a folder, and returns its URL and folder.
func chartServer(t *testing.T, data string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	writeChart(t, dir, srv.URL, data)
	return srv.URL, dir
}

func writeChart(t *testing.T, dir, url, data string) {
	t.Helper()
	chrt := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "web", Version: "1.0.0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {v: " + data + "}\n")}},
	}
	if _, err := chartutil.Save(chrt, dir); err != nil {
		t.Fatal(err)
	}
	idx, err := repo.IndexDirectory(dir, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func component(t *testing.T, url, version string) *manifest.Object {
	t.Helper()
	objs, err := manifest.Decode("comp.yaml", []byte("apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: web, namespace: apps}\nspec:\n  source:\n    chart: {repo: "+url+", name: web, version: \""+version+"\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return objs[0]
}

// TestChartsFetchOnlyWhatTheLockNames: under Argo CD (ARGOCD_APP_NAME
// set) a chart the lock names and the cache lacks is fetched, its digest
// checked, and kept in the cache; without ARGOCD_APP_NAME the render
// stays offline and fails naming wavesmith fetch; a chart the lock lacks
// fails under Argo CD too (nothing is resolved at plugin time), and an
// archive that is no longer the locked one is refused.
func TestChartsFetchOnlyWhatTheLockNames(t *testing.T) {
	url, dir := chartServer(t, "one")
	root := t.TempDir()
	locked := component(t, url, "^1")
	if _, err := helm.Fetch(context.Background(), root, []*manifest.Object{locked}, helm.FetchOptions{Cache: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	argo := func(k string) string { return map[string]string{EnvAppName: "web"}[k] }
	none := func(string) string { return "" }
	render := func(getenv func(string) string, spec *manifest.Object) error {
		t.Setenv("WAVESMITH_CACHE_DIR", filepath.Join(t.TempDir(), "cache")) // empty
		t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "repositories.yaml"))
		res, err := helm.Generator{}.Generate(Charts(context.Background(), getenv), spec, generators.Options{Root: root})
		if err == nil && len(res.Objects) != 1 {
			t.Fatalf("want the chart's ConfigMap, got %d objects", len(res.Objects))
		}
		return err
	}

	if err := render(argo, locked); err != nil {
		t.Fatalf("under Argo CD a locked chart missing from the cache is fetched: %v", err)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("WAVESMITH_CACHE_DIR"), "charts", "sha256")); err != nil {
		t.Errorf("the fetched chart is not kept in the cache: %v", err)
	}
	if err := render(none, locked); !errors.Is(err, helm.ErrNotFetched) {
		t.Errorf("outside Argo CD a cache miss must fail offline with ErrNotFetched, got %v", err)
	}
	if err := render(argo, component(t, url, "1.0.0")); !errors.Is(err, helm.ErrNotFetched) {
		t.Errorf("a chart the lock lacks must fail under Argo CD too, got %v", err)
	}
	writeChart(t, dir, url, "two") // the repository now serves other bytes
	if err := render(argo, locked); !errors.Is(err, helm.ErrDigest) {
		t.Errorf("an archive that is not the locked one must be refused, got %v", err)
	}
}
