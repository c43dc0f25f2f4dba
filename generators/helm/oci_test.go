package helm

import (
	"context"
	"errors"
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
	host, _ := serveOCIDigests(t, versions...)
	return host
}

// serveOCIDigests is serveOCI, also giving the manifest digest of each
// version pushed.
func serveOCIDigests(t *testing.T, versions ...string) (string, map[string]string) {
	t.Helper()
	manifests := map[string]string{}
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
		res, err := client.Push(data, host+"/charts/webapp:"+v, registry.PushOptCreationTime("2026-01-01T00:00:00Z"))
		if err != nil {
			t.Fatal(err)
		}
		manifests[v] = res.Manifest.Digest
	}
	return host, manifests
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

// TestOCIChartByDigest: an OCI chart pinned by its manifest digest, alone
// or with its tag, is pulled by the digest, locked with it and rendered
// offline as the real helm template oci://...@sha256:... renders it.
func TestOCIChartByDigest(t *testing.T) {
	host, manifests := serveOCIDigests(t, "0.1.0", "0.2.0")
	d := manifests["0.2.0"]
	home := t.TempDir()
	t.Setenv("HELM_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("HELM_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("HELM_DATA_HOME", filepath.Join(home, "data"))
	for name, tc := range map[string]struct{ version, ref string }{
		"Digest":       {d, "oci://" + host + "/charts/webapp@" + d},
		"TagAndDigest": {"0.2.0@" + d, "oci://" + host + "/charts/webapp:0.2.0@" + d},
	} {
		t.Run(name, func(t *testing.T) {
			s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "oci://" + host + "/charts", "name": "webapp", "version": tc.version}}})
			rootDir, cache := t.TempDir(), t.TempDir()
			t.Setenv("WAVESMITH_CACHE_DIR", cache)
			locked, err := Fetch(context.Background(), rootDir, []*manifest.Object{s}, FetchOptions{Cache: cache, PlainHTTP: true, RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
			if err != nil {
				t.Fatal(err)
			}
			want := LockedChart{Repo: "oci://" + host + "/charts", Name: "webapp", Version: tc.version, Resolved: "0.2.0", Manifest: d, URL: "oci://" + host + "/charts/webapp@" + d, PlainHTTP: true}
			if len(locked) == 1 {
				want.Digest = locked[0].Digest
			}
			if diff := cmp.Diff([]LockedChart{want}, locked); diff != "" {
				t.Fatalf("lock (-want +got):\n%s", diff)
			}
			res, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
			if err != nil {
				t.Fatal(err)
			}
			out := helmTemplate(t, "rel", tc.ref, "--plain-http", "--namespace", "apps")
			objs, err := decode("helm", out)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 || len(objs) != len(res.Objects) {
				t.Fatalf("helm template gives %d objects, wavesmith %d", len(objs), len(res.Objects))
			}
			if diff := cmp.Diff(withoutAdditions(runsOnInstall(objs)), withoutAdditions(res.Objects)); diff != "" {
				t.Errorf("-helm template +wavesmith:\n%s", diff)
			}
		})
	}
}

// TestOCIDigestRefusals: a tag that names another manifest, a digest
// the registry lacks, a range with a digest, a malformed digest, and a
// lock whose manifest is not the pinned one are refused at
// spec.source.chart.version (or repo, for a chart the registry lacks).
func TestOCIDigestRefusals(t *testing.T) {
	host, manifests := serveOCIDigests(t, "0.1.0", "0.2.0")
	absent := "sha256:" + strings.Repeat("0", 64)
	for name, tc := range map[string]struct {
		version, field string
		want           error
	}{
		"TagNamesAnother": {"0.1.0@" + manifests["0.2.0"], versionField, ErrDigest},
		"AbsentDigest":    {absent, repoField, ErrFetch},
		"RangeAndDigest":  {"^0.1@" + manifests["0.1.0"], versionField, ErrFetch},
		"BadDigest":       {"0.1.0@sha256:abc", versionField, ErrFetch},
	} {
		t.Run(name, func(t *testing.T) {
			s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "oci://" + host + "/charts", "name": "webapp", "version": tc.version}}})
			cache := t.TempDir()
			_, err := Fetch(context.Background(), t.TempDir(), []*manifest.Object{s}, FetchOptions{Cache: cache, PlainHTTP: true, RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
			var me *manifest.Error
			if !errors.Is(err, tc.want) || !errors.As(err, &me) || me.Field != tc.field || !strings.Contains(me.Object, "Component") {
				t.Fatalf("want %v at %s naming the Component, got %#v", tc.want, tc.field, err)
			}
		})
	}
	t.Run("LockNotPinned", func(t *testing.T) {
		s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "oci://" + host + "/charts", "name": "webapp", "version": manifests["0.1.0"]}}})
		rootDir, cache := t.TempDir(), t.TempDir()
		t.Setenv("WAVESMITH_CACHE_DIR", cache)
		if _, err := Fetch(context.Background(), rootDir, []*manifest.Object{s}, FetchOptions{Cache: cache, PlainHTTP: true, RegistryConfig: filepath.Join(t.TempDir(), "config.json")}); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(rootDir, LockFile)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.Replace(string(b), "manifest: "+manifests["0.1.0"], "manifest: "+manifests["0.2.0"], 1))
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
		var me *manifest.Error
		if !errors.Is(err, ErrDigest) || !errors.As(err, &me) || me.Field != versionField {
			t.Fatalf("want ErrDigest at %s, got %v", versionField, err)
		}
	})
}

// TestOCIVersionAsHelmReadsIt: a version semver reads leniently (v0.3.0,
// as cert-manager's chart has it) is the tag, as helm takes it, not a
// range over the tags (Helm's tag list keeps strict versions only).
func TestOCIVersionAsHelmReadsIt(t *testing.T) {
	host := serveOCI(t, "v0.3.0")
	s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "oci://" + host + "/charts", "name": "webapp", "version": "v0.3.0"}}})
	locked, err := Fetch(context.Background(), t.TempDir(), []*manifest.Object{s}, FetchOptions{Cache: t.TempDir(), PlainHTTP: true, RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
	if err != nil || len(locked) != 1 || locked[0].Resolved != "v0.3.0" {
		t.Fatalf("want v0.3.0 locked, got %+v, %v", locked, err)
	}
}
