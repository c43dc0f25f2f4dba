package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/wavesmith/wavesmith/generators/helm"
)

// TestFetchThenRenderOffline: wavesmith fetch fills the lock and the
// cache from a chart repository; render then works with the repository
// gone, and without the cache fails naming the command.
func TestFetchThenRenderOffline(t *testing.T) {
	srv, root := chartRepoAndComponent(t)
	t.Setenv("WAVESMITH_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "repositories.yaml"))

	code, out, stderr := wavesmith(t, "", "fetch", "--root", root, root)
	if code != exitOK || !strings.Contains(out, "webapp 0.3.0 sha256:") {
		t.Fatalf("fetch: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, helm.LockFile)); err != nil {
		t.Fatal(err)
	}
	srv.Close() // offline from here
	code, out, stderr = wavesmith(t, "", "render", "--root", root, root)
	if code != exitOK || !strings.Contains(out, "kind: Deployment") {
		t.Fatalf("render after fetch: exit %d: %s", code, stderr)
	}
	t.Setenv("WAVESMITH_CACHE_DIR", filepath.Join(t.TempDir(), "empty"))
	code, _, stderr = wavesmith(t, "", "render", "--root", root, root)
	if code == exitOK || !strings.Contains(stderr, "run wavesmith fetch") {
		t.Errorf("render without the cache: exit %d, want a failure naming wavesmith fetch: %s", code, stderr)
	}
}

// TestPluginFetchesLockedCharts: through the Argo CD plugin's door
// (wavesmith render with ARGOCD_APP_NAME set), a chart the lock names and
// the repo-server's cache lacks is fetched and rendered; the same render
// without ARGOCD_APP_NAME fails offline naming wavesmith fetch.
func TestPluginFetchesLockedCharts(t *testing.T) {
	_, root := chartRepoAndComponent(t)
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "repositories.yaml"))
	t.Setenv("WAVESMITH_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	if code, _, stderr := wavesmith(t, "", "fetch", "--root", root, root); code != exitOK {
		t.Fatalf("fetch: exit %d: %s", code, stderr)
	}
	t.Chdir(root)

	t.Setenv("WAVESMITH_CACHE_DIR", filepath.Join(t.TempDir(), "repo-server-cache")) // empty
	setEnv(t, map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "."})
	code, out, stderr := wavesmith(t, "", "render", "-q", ".")
	if code != exitOK || !strings.Contains(out, "kind: Deployment") {
		t.Fatalf("under Argo CD, render with an empty cache: exit %d: %s", code, stderr)
	}

	t.Setenv("WAVESMITH_CACHE_DIR", filepath.Join(t.TempDir(), "empty"))
	setEnv(t, nil)
	code, _, stderr = wavesmith(t, "", "render", "-q", "--root", root, ".")
	if code == exitOK || !strings.Contains(stderr, "run wavesmith fetch") {
		t.Errorf("outside Argo CD, render with an empty cache: exit %d, want a failure naming wavesmith fetch: %s", code, stderr)
	}
}

// TestRenderFileDependency: a chart whose Chart.yaml names a chart folder
// beside it (repository: file://../lib) renders; the folder is the
// chart's source, never loose objects of the render (its templates are no
// YAML).
func TestRenderFileDependency(t *testing.T) {
	root := t.TempDir()
	for file, text := range map[string]string{
		"comp.yaml":                 "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: shop, namespace: apps}\nspec:\n  source:\n    chart: {path: umbrella}\n",
		"umbrella/Chart.yaml":       "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n- name: lib\n  version: ^0.4\n  repository: file://../lib\n  alias: mylib\n",
		"umbrella/templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-a\n",
		"lib/Chart.yaml":            "apiVersion: v2\nname: lib\nversion: 0.4.0\n",
		"lib/templates/b.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := wavesmith(t, "", "render", "-q", "--root", root, root)
	if code != exitOK || !strings.Contains(out, "name: shop-a") || !strings.Contains(out, "name: shop-mylib") {
		t.Fatalf("render: exit %d, stdout %s, stderr %s", code, out, stderr)
	}
}

// chartRepoAndComponent serves testdata/charts/webapp as version 0.3.0
// from a chart repository (index.yaml and the archive, over httptest,
// closed with the test) and returns it with a root holding a Component
// asking for ~0.3 from it.
func chartRepoAndComponent(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	repoDir := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(repoDir)))
	t.Cleanup(srv.Close)
	chrt, err := loader.Load("../../testdata/charts/webapp")
	if err != nil {
		t.Fatal(err)
	}
	chrt.Metadata.Version = "0.3.0"
	if _, err := chartutil.Save(chrt, repoDir); err != nil {
		t.Fatal(err)
	}
	idx, err := repo.IndexDirectory(repoDir, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(repoDir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	comp := "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: shop, namespace: apps}\nspec:\n  source:\n    chart: {repo: " + srv.URL + ", name: webapp, version: \"~0.3\"}\n"
	if err := os.WriteFile(filepath.Join(root, "comp.yaml"), []byte(comp), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, root
}
