package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// chartRepo serves a Helm chart repository (index.yaml and packaged
// charts, made with the Helm SDK) from a fresh folder holding webapp at
// each version given, behind basic auth when user is set.
type chartRepo struct {
	dir, url, user, password string
}

func serveRepo(t *testing.T, user, password string, versions ...string) *chartRepo {
	t.Helper()
	return serveRepoOf(t, "webapp", user, password, versions...)
}

// serveRepoOf serves the test chart of folder dir as webapp.
func serveRepoOf(t *testing.T, dir, user, password string, versions ...string) *chartRepo {
	t.Helper()
	r := &chartRepo{dir: t.TempDir(), user: user, password: password}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); r.user != "" && (!ok || u != r.user || p != r.password) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.ServeFile(w, req, filepath.Join(r.dir, filepath.FromSlash(strings.TrimPrefix(req.URL.Path, "/"))))
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	for _, v := range versions {
		chrt, err := loader.Load(filepath.Join(root, "testdata", "charts", dir))
		if err != nil {
			t.Fatal(err)
		}
		chrt.Metadata.Name, chrt.Metadata.Version = "webapp", v
		if _, err := chartutil.Save(chrt, r.dir); err != nil {
			t.Fatal(err)
		}
	}
	r.index(t)
	return r
}

// index writes index.yaml, with the archives' digests.
func (r *chartRepo) index(t *testing.T) {
	t.Helper()
	idx, err := repo.IndexDirectory(r.dir, r.url)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(r.dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repositoryConfig writes Helm's repositories.yaml with r's credentials.
func (r *chartRepo) repositoryConfig(t *testing.T) string {
	t.Helper()
	f := repo.NewFile()
	f.Add(&repo.Entry{Name: "test", URL: r.url, Username: r.user, Password: r.password})
	file := filepath.Join(t.TempDir(), "repositories.yaml")
	if err := f.WriteFile(file, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func repoSpec(t testing.TB, url, version string) *manifest.Object {
	return spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"repo": url, "name": "webapp", "version": version}}})
}

// fetchInto fetches the charts of specs into a fresh root and cache.
func fetchInto(t *testing.T, r *chartRepo, specs ...*manifest.Object) (string, []LockedChart) {
	t.Helper()
	rootDir, cache := t.TempDir(), t.TempDir()
	t.Setenv("WAVESMITH_CACHE_DIR", cache)
	locked, err := Fetch(context.Background(), rootDir, specs, FetchOptions{Cache: cache, RepositoryConfig: r.repositoryConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	return rootDir, locked
}

// TestRepositoryChart: a chart of a repository behind basic auth,
// fetched into the lock and the cache, renders as the real
// helm template --repo --version against the same server.
func TestRepositoryChart(t *testing.T) {
	r := serveRepo(t, "ann", "s3cret", "0.1.0", "0.2.0", "1.0.0")
	s := repoSpec(t, r.url, "^0.1 || ^0.2")
	rootDir, locked := fetchInto(t, r, s)
	if len(locked) != 1 || locked[0].Resolved != "0.2.0" || !strings.HasPrefix(locked[0].Digest, "sha256:") {
		t.Fatalf("want 0.2.0 locked with its digest, got %+v", locked)
	}
	res, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HELM_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("HELM_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("HELM_DATA_HOME", filepath.Join(home, "data"))
	out := helmTemplate(t, "rel", "webapp", "--repo", r.url, "--version", "^0.1 || ^0.2", "--username", "ann", "--password", "s3cret", "--namespace", "apps")
	want, err := decode("helm", out)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || len(res.Objects) != len(want) {
		t.Fatalf("helm template gives %d objects, wavesmith %d", len(want), len(res.Objects))
	}
	if diff := cmp.Diff(withoutAdditions(runsOnInstall(want)), withoutAdditions(res.Objects)); diff != "" {
		t.Errorf("-helm template +wavesmith:\n%s", diff)
	}

	// A second fetch finds the chart in the cache: no network.
	r.user = "someone-else"
	cache := os.Getenv("WAVESMITH_CACHE_DIR")
	again, err := Fetch(context.Background(), rootDir, []*manifest.Object{s}, FetchOptions{Cache: cache})
	if err != nil {
		t.Fatalf("a filled cache needs no network: %v", err)
	}
	if diff := cmp.Diff(locked, again); diff != "" {
		t.Errorf("the lock changed: %s", diff)
	}
}

// TestRepositoryChartRefusals: render reads the lock and the cache only;
// what they lack or what does not match is an error naming the remedy.
func TestRepositoryChartRefusals(t *testing.T) {
	r := serveRepo(t, "", "", "0.1.0")
	s := repoSpec(t, r.url, "0.1.0")
	generate := func(rootDir string) error {
		_, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
		return err
	}
	t.Run("NoLock", func(t *testing.T) {
		t.Setenv("WAVESMITH_CACHE_DIR", t.TempDir())
		err := generate(t.TempDir())
		if !errors.Is(err, ErrNotFetched) || !strings.Contains(err.Error(), "run wavesmith fetch") || !strings.Contains(err.Error(), "spec.source.chart.repo") {
			t.Errorf("want ErrNotFetched naming the field and the command, got %v", err)
		}
	})
	t.Run("NotCached", func(t *testing.T) {
		rootDir, _ := fetchInto(t, r, s)
		t.Setenv("WAVESMITH_CACHE_DIR", t.TempDir())
		if err := generate(rootDir); !errors.Is(err, ErrNotFetched) || !strings.Contains(err.Error(), "run wavesmith fetch") {
			t.Errorf("want ErrNotFetched, got %v", err)
		}
	})
	t.Run("TamperedCache", func(t *testing.T) {
		rootDir, locked := fetchInto(t, r, s)
		h, _ := digestHex(locked[0].Digest)
		file := cachePath(os.Getenv("WAVESMITH_CACHE_DIR"), h)
		b, _ := os.ReadFile(file)
		b[len(b)/2] ^= 1
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := generate(rootDir); !errors.Is(err, ErrDigest) {
			t.Errorf("want ErrDigest, got %v", err)
		}
	})
	t.Run("OtherVersionAsked", func(t *testing.T) {
		rootDir, _ := fetchInto(t, r, s)
		_, err := Generator{}.Generate(context.Background(), repoSpec(t, r.url, "0.1.x"), generators.Options{Root: rootDir})
		if !errors.Is(err, ErrNotFetched) {
			t.Errorf("a lock made for another version range no longer matches: want ErrNotFetched, got %v", err)
		}
	})
	t.Run("IndexDigest", func(t *testing.T) {
		bad := serveRepo(t, "", "", "0.1.0")
		// The archive changes after the index recorded its digest.
		chrt, _ := loader.Load(filepath.Join(root, "testdata", "charts", "webapp"))
		chrt.Metadata.Version = "0.1.0"
		chrt.Metadata.Description = "tampered"
		if _, err := chartutil.Save(chrt, bad.dir); err != nil {
			t.Fatal(err)
		}
		_, err := Fetch(context.Background(), t.TempDir(), []*manifest.Object{repoSpec(t, bad.url, "0.1.0")}, FetchOptions{Cache: t.TempDir()})
		if !errors.Is(err, ErrDigest) {
			t.Errorf("want ErrDigest, got %v", err)
		}
	})
	t.Run("NoSuchVersion", func(t *testing.T) {
		_, err := Fetch(context.Background(), t.TempDir(), []*manifest.Object{repoSpec(t, r.url, "^9")}, FetchOptions{Cache: t.TempDir()})
		var me *manifest.Error
		if !errors.Is(err, ErrFetch) || !errors.As(err, &me) || me.Field != "spec.source.chart.repo" {
			t.Errorf("want ErrFetch at spec.source.chart.repo, got %v", err)
		}
	})
	t.Run("Unauthorized", func(t *testing.T) {
		locked := serveRepo(t, "ann", "s3cret", "0.1.0")
		_, err := Fetch(context.Background(), t.TempDir(), []*manifest.Object{repoSpec(t, locked.url, "0.1.0")}, FetchOptions{Cache: t.TempDir()})
		if !errors.Is(err, ErrFetch) {
			t.Errorf("want ErrFetch without credentials, got %v", err)
		}
	})
}

// TestHostileArchives: an archive is hostile input.
func TestHostileArchives(t *testing.T) {
	type entry struct {
		name string
		typ  byte
		body string
		link string
	}
	good := []entry{
		{"webapp/Chart.yaml", tar.TypeReg, "apiVersion: v2\nname: webapp\nversion: 0.1.0\n", ""},
		{"webapp/templates/cm.yaml", tar.TypeReg, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", ""},
	}
	cases := map[string]struct {
		extra []entry
		want  error
	}{
		"Symlink":   {[]entry{{"webapp/templates/link.yaml", tar.TypeSymlink, "", "/etc/passwd"}}, ErrArchive},
		"Hardlink":  {[]entry{{"webapp/templates/hard.yaml", tar.TypeLink, "", "webapp/Chart.yaml"}}, ErrArchive},
		"FIFO":      {[]entry{{"webapp/templates/fifo", tar.TypeFifo, "", ""}}, ErrArchive},
		"Device":    {[]entry{{"webapp/templates/dev", tar.TypeChar, "", ""}}, ErrArchive},
		"DotDot":    {[]entry{{"webapp/../../etc/x.yaml", tar.TypeReg, "a: b\n", ""}}, ErrArchive},
		"Absolute":  {[]entry{{"/etc/x.yaml", tar.TypeReg, "a: b\n", ""}}, ErrArchive},
		"TopLevel":  {[]entry{{"loose.yaml", tar.TypeReg, "a: b\n", ""}}, ErrArchive},
		"Twice":     {[]entry{{"webapp/Chart.yaml", tar.TypeReg, "apiVersion: v2\nname: webapp\nversion: 0.1.0\n", ""}}, ErrArchive},
		"OtherName": {[]entry{}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			for _, e := range append(append([]entry{}, good...), tc.extra...) {
				h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
				if err := tw.WriteHeader(h); err != nil {
					t.Fatal(err)
				}
				if _, err := tw.Write([]byte(e.body)); err != nil {
					t.Fatal(err)
				}
			}
			tw.Close()
			zw.Close()
			want, chartName := tc.want, "webapp"
			if name == "OtherName" {
				want, chartName = ErrArchive, "other" // the archive holds webapp
			}
			_, err := loadArchive(buf.Bytes(), chartName, "0.1.0")
			if !errors.Is(err, want) {
				t.Errorf("want %v, got %v", want, err)
			}
		})
	}
	t.Run("NotGzip", func(t *testing.T) {
		if _, err := loadArchive([]byte("not an archive"), "webapp", "0.1.0"); !errors.Is(err, ErrArchive) {
			t.Errorf("want ErrArchive, got %v", err)
		}
	})
	t.Run("Large", func(t *testing.T) {
		// A header announcing more than a chart may hold is refused
		// before anything is read.
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		if err := tw.WriteHeader(&tar.Header{Name: "webapp/big", Typeflag: tar.TypeReg, Mode: 0o644, Size: maxChartSize + 1}); err != nil {
			t.Fatal(err)
		}
		zw.Close() // truncated on purpose: the size alone must refuse it
		if _, err := loadArchive(buf.Bytes(), "webapp", "0.1.0"); !errors.Is(err, ErrBudget) {
			t.Errorf("want ErrBudget, got %v", err)
		}
	})
}

// TestRepositoryChartFields: warnings and failures of a repository chart
// name spec.source.chart (it has no path).
func TestRepositoryChartFields(t *testing.T) {
	r := serveRepoOf(t, "upgrade-hooks", "", "", "0.1.0")
	s := repoSpec(t, r.url, "0.1.0")
	rootDir, _ := fetchInto(t, r, s)
	res, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Field != "spec.source.chart" || !strings.Contains(res.Warnings[0].Message, "webapp-0.1.0.tgz/templates/hooks.yaml") {
		t.Errorf("want the left-out hooks warning on spec.source.chart naming the archive's file, got %+v", res.Warnings)
	}
	strict := spec(t, map[string]any{"source": s.Map["spec"].(map[string]any)["source"], "strictHooks": true})
	_, err = Generator{}.Generate(context.Background(), strict, generators.Options{Root: rootDir})
	if !errors.Is(err, ErrHook) || !strings.Contains(err.Error(), "webapp-0.1.0.tgz/templates/hooks.yaml") {
		t.Errorf("want ErrHook naming the archive's file, got %v", err)
	}
}

// TestFetchNothing: without repository charts, fetch writes no lock.
func TestFetchNothing(t *testing.T) {
	rootDir := t.TempDir()
	kust := spec(t, map[string]any{"source": map[string]any{"kustomization": map[string]any{"path": "k"}}})
	locked, err := Fetch(context.Background(), rootDir, []*manifest.Object{kust}, FetchOptions{Cache: t.TempDir()})
	if err != nil || len(locked) != 0 {
		t.Fatalf("got %v, %v", locked, err)
	}
	if _, err := os.Stat(filepath.Join(rootDir, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("want no %s, got %v", LockFile, err)
	}
}

// TestRepositoryDependencies: a chart folder whose Chart.yaml names a
// dependency from a repository (charts/ lacking it) renders, once
// fetched, as the real helm dependency build and helm template render
// it; without the lock it fails naming the dependency and the command.
func TestRepositoryDependencies(t *testing.T) {
	r := serveRepo(t, "", "", "0.1.0", "0.1.5", "0.2.0")
	rootDir := t.TempDir()
	dir := filepath.Join(rootDir, "umbrella")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	chartYAML := "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n- name: webapp\n  version: ~0.1.0\n  repository: " + r.url + "\n"
	for file, text := range map[string]string{
		"Chart.yaml":              chartYAML,
		"values.yaml":             "webapp:\n  replicaCount: 3\n",
		"templates/umbrella.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-umbrella\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "umbrella"}}})
	s.Source.File = filepath.Join(rootDir, "components.yaml")
	cache := t.TempDir()
	t.Setenv("WAVESMITH_CACHE_DIR", cache)

	_, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
	if !errors.Is(err, ErrNotFetched) || !strings.Contains(err.Error(), "dependency webapp") || !strings.Contains(err.Error(), "run wavesmith fetch") {
		t.Fatalf("before fetch: want ErrNotFetched naming the dependency and the command, got %v", err)
	}
	locked, err := Fetch(context.Background(), rootDir, []*manifest.Object{s}, FetchOptions{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if len(locked) != 1 || locked[0].Resolved != "0.1.5" {
		t.Fatalf("want webapp 0.1.5 locked, got %+v", locked)
	}
	res, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
	if err != nil {
		t.Fatal(err)
	}

	// The real helm, on a copy of the folder (helm dependency build
	// writes charts/ and Chart.lock).
	home := t.TempDir()
	t.Setenv("HELM_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("HELM_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("HELM_DATA_HOME", filepath.Join(home, "data"))
	copyDir := filepath.Join(t.TempDir(), "umbrella")
	if err := os.CopyFS(copyDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(helmBin(t), "dependency", "build", copyDir).CombinedOutput(); err != nil {
		t.Fatalf("helm dependency build: %v\n%s", err, out)
	}
	want, err := decode("helm", helmTemplate(t, "rel", copyDir, "--namespace", "apps"))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 2 || len(want) != len(res.Objects) {
		t.Fatalf("helm template gives %d objects, wavesmith %d", len(want), len(res.Objects))
	}
	if diff := cmp.Diff(withoutAdditions(runsOnInstall(want)), withoutAdditions(res.Objects)); diff != "" {
		t.Errorf("-helm +wavesmith:\n%s", diff)
	}
}

// TestCacheIsItsOwnRoot: the chart cache is read as its own root
// (fsroot.Root): an archive that is a symlink leading out of the cache, or
// a FIFO, is refused (never followed or waited on), and fetch replaces
// such an entry with the archive rather than writing through it.
func TestCacheIsItsOwnRoot(t *testing.T) {
	r := serveRepo(t, "", "", "0.1.0")
	s := repoSpec(t, r.url, "0.1.0")
	plants := map[string]func(t *testing.T, file string){
		"SymlinkOut": func(t *testing.T, file string) {
			outside := filepath.Join(t.TempDir(), "elsewhere.tgz")
			if err := os.Rename(file, outside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, file); err != nil {
				t.Fatal(err)
			}
		},
		"FIFO": func(t *testing.T, file string) {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(file, 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range plants {
		t.Run(name, func(t *testing.T) {
			rootDir, locked := fetchInto(t, r, s)
			cache := os.Getenv("WAVESMITH_CACHE_DIR")
			h, _ := digestHex(locked[0].Digest)
			file := cachePath(cache, h)
			plant(t, file)
			_, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
			if !errors.Is(err, fsroot.ErrOutsideRoot) && !errors.Is(err, fsroot.ErrNotRegular) {
				t.Fatalf("want the cache entry refused (fsroot.ErrOutsideRoot or ErrNotRegular), got %v", err)
			}
			if _, err := Fetch(context.Background(), rootDir, []*manifest.Object{s}, FetchOptions{Cache: cache}); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("fetch must replace the entry with the archive: %v, %v", fi, err)
			}
			if _, err := (Generator{}).Generate(context.Background(), s, generators.Options{Root: rootDir}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
