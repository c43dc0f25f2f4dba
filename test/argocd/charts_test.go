package argocd_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// chartArchive packages a chart named web at version holding one
// ConfigMap, as helm package lays it out (web/Chart.yaml, ...).
func chartArchive(t *testing.T, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, text string }{
		{"web/Chart.yaml", "apiVersion: v2\nname: web\nversion: " + version + "\n"},
		{"web/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-web\ndata:\n  chart: {{ .Chart.Version | quote }}\n"},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.text)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPluginFetchesLockedChart runs a chart of a repository through the
// real cmp-server: the repository holds the Component and wavesmith.lock
// (as wavesmith fetch wrote it), the sidecar's chart cache is empty, and
// the plugin fetches exactly the locked archive from the chart repository
// and renders it. A Component asking for a version the lock lacks is
// refused, naming wavesmith fetch: nothing is resolved at sync time.
func TestPluginFetchesLockedChart(t *testing.T) {
	startCMPServer(t)
	archive := chartArchive(t, "1.0.0")
	sum := sha256.Sum256(archive)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	var mu sync.Mutex
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.URL.Path)
		mu.Unlock()
		if r.URL.Path != "/web-1.0.0.tgz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(archive)
	}))
	defer srv.Close()

	repo := t.TempDir()
	appPath := filepath.Join(repo, "deploy")
	component := func(version string) string {
		return "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: shop, namespace: demo}\nspec:\n  source:\n    chart: {repo: " + srv.URL + ", name: web, version: \"" + version + "\"}\n"
	}
	writeFile(t, filepath.Join(repo, "wavesmith.lock"), fmt.Sprintf("apiVersion: wavesmith.io/v1alpha1\nkind: ChartLock\ncharts:\n- repo: %s\n  name: web\n  version: ^1\n  resolved: 1.0.0\n  digest: %s\n  url: %s/web-1.0.0.tgz\n", srv.URL, digest, srv.URL))
	writeFile(t, filepath.Join(appPath, "component.yaml"), component("^1"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := application{name: "shop", namespace: "demo", sourcePath: "deploy", kubeVersion: "1.34.2"}.environ(t)

	manifests, err := generate(ctx, repo, appPath, env)
	if err != nil {
		t.Fatalf("the plugin, with an empty chart cache and the chart in the lock: %v", err)
	}
	var docs [][]byte
	for _, m := range manifests {
		docs = append(docs, []byte(m))
	}
	cm := find(objects(t, docs...), "v1", "ConfigMap", "demo", "shop-web")
	if cm == nil {
		t.Fatalf("no ConfigMap shop-web among %d manifests", len(manifests))
	}
	if got := cm["data"].(map[string]any)["chart"]; got != "1.0.0" {
		t.Errorf("the ConfigMap says chart %v, want 1.0.0", got)
	}
	mu.Lock()
	asked := strings.Join(requests, ",")
	mu.Unlock()
	if asked != "/web-1.0.0.tgz" {
		t.Errorf("the plugin asked the repository for %v; want exactly the locked archive (no index: nothing is resolved)", asked)
	}

	writeFile(t, filepath.Join(appPath, "component.yaml"), component("1.0.0"))
	if _, err := generate(ctx, repo, appPath, env); err == nil || !strings.Contains(err.Error(), "run wavesmith fetch") {
		t.Errorf("a version the lock lacks: want a refusal naming wavesmith fetch, got %v", err)
	}
}
