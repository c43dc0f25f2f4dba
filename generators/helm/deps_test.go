package helm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// writeFiles writes files (path relative to dir: text).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for file, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// libChart is a chart folder for file:// dependencies.
var libChart = map[string]string{
	"lib/Chart.yaml":         "apiVersion: v2\nname: lib\nversion: 0.4.0\n",
	"lib/values.yaml":        "greeting: hello\n",
	"lib/templates/lib.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\ndata:\n  greeting: {{ .Values.greeting }}\n",
}

// TestDependenciesAsBuilt: Chart.yaml dependencies with alias: (one
// repository chart twice) and with repository: file://../lib (a chart
// folder beside the umbrella, inside the root) render, once fetched, as
// the real helm dependency build and helm template render them.
func TestDependenciesAsBuilt(t *testing.T) {
	r := serveRepo(t, "", "", "0.1.0", "0.1.5")
	cases := map[string]struct{ deps, values string }{
		"Aliases": {
			"- name: webapp\n  version: ~0.1.0\n  repository: " + r.url + "\n  alias: front\n- name: webapp\n  version: ~0.1.0\n  repository: " + r.url + "\n  alias: back\n",
			"front:\n  replicaCount: 2\nback:\n  replicaCount: 3\n",
		},
		"File": {
			"- name: lib\n  version: ^0.4\n  repository: file://../lib\n",
			"lib:\n  greeting: hi\n",
		},
		"FileAliasedTwiceAndRepository": {
			"- name: lib\n  version: \">=0\"\n  repository: file://../lib\n  alias: one\n- name: lib\n  version: 0.4.0\n  repository: file://../lib\n  alias: two\n- name: webapp\n  version: 0.1.0\n  repository: " + r.url + "\n",
			"two:\n  greeting: bye\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rootDir := t.TempDir()
			files := map[string]string{
				"umbrella/Chart.yaml":              "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n" + tc.deps,
				"umbrella/values.yaml":             tc.values,
				"umbrella/templates/umbrella.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-umbrella\n",
			}
			for k, v := range libChart {
				files[k] = v
			}
			writeFiles(t, rootDir, files)
			s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "umbrella"}}})
			s.Source.File = filepath.Join(rootDir, "components.yaml")
			cache := t.TempDir()
			t.Setenv("WAVESMITH_CACHE_DIR", cache)
			if _, err := Fetch(context.Background(), rootDir, []*manifest.Object{s}, FetchOptions{Cache: cache}); err != nil {
				t.Fatal(err)
			}
			res, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
			if err != nil {
				t.Fatal(err)
			}

			home := t.TempDir()
			t.Setenv("HELM_CACHE_HOME", filepath.Join(home, "cache"))
			t.Setenv("HELM_CONFIG_HOME", filepath.Join(home, "config"))
			t.Setenv("HELM_DATA_HOME", filepath.Join(home, "data"))
			copyRoot := t.TempDir()
			if err := os.CopyFS(copyRoot, os.DirFS(rootDir)); err != nil {
				t.Fatal(err)
			}
			umbrella := filepath.Join(copyRoot, "umbrella")
			if out, err := exec.Command(helmBin(t), "dependency", "build", umbrella).CombinedOutput(); err != nil {
				t.Fatalf("helm dependency build: %v\n%s", err, out)
			}
			want, err := decode("helm", helmTemplate(t, "rel", umbrella, "--namespace", "apps"))
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 2 || len(want) != len(res.Objects) {
				t.Fatalf("helm template gives %d objects, wavesmith %d", len(want), len(res.Objects))
			}
			if diff := cmp.Diff(withoutAdditions(runsOnInstall(want)), withoutAdditions(res.Objects)); diff != "" {
				t.Errorf("-helm +wavesmith:\n%s", diff)
			}
		})
	}
}

// TestFileDependencyRefusals: a file:// dependency leaving the root (by
// path or through a symlink), missing, or at a version its constraint
// refuses is an error naming the Chart.yaml and the dependency's index.
func TestFileDependencyRefusals(t *testing.T) {
	cases := map[string]struct {
		repository, version string
		symlink             bool
		want                error
		msg                 string
	}{
		"LeavesRoot":     {repository: "file://../../outside", want: fsroot.ErrOutsideRoot, msg: "dependencies[1].repository"},
		"Absolute":       {repository: "file:///etc", want: fsroot.ErrOutsideRoot, msg: "dependencies[1].repository"},
		"SymlinkOut":     {repository: "file://../link", symlink: true, want: fsroot.ErrOutsideRoot, msg: "link"},
		"Missing":        {repository: "file://../nothing", want: ErrChart, msg: "dependencies[1].repository"},
		"VersionRefused": {repository: "file://../lib", version: "^1", want: ErrChart, msg: "dependencies[1].version"},
		"NoVersion":      {repository: "file://../lib", version: " ", want: ErrChart, msg: "dependencies[1].version"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			rootDir := filepath.Join(base, "root")
			files := map[string]string{
				"umbrella/Chart.yaml": "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n- name: lib\n  version: \"*\"\n  repository: file://../lib\n  alias: first\n- name: other\n  version: \"" + tc.version + "\"\n  repository: " + tc.repository + "\n",
				"outside/Chart.yaml":  "apiVersion: v2\nname: other\nversion: 0.4.0\n",
			}
			if tc.version != "" {
				files["umbrella/Chart.yaml"] = "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n- name: lib\n  version: \"*\"\n  repository: file://../lib\n  alias: first\n- name: lib\n  version: \"" + tc.version + "\"\n  repository: " + tc.repository + "\n"
			}
			for k, v := range libChart {
				files[k] = v
			}
			writeFiles(t, rootDir, files)
			if err := os.Rename(filepath.Join(rootDir, "outside"), filepath.Join(base, "outside")); err != nil {
				t.Fatal(err)
			}
			if tc.symlink {
				if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(rootDir, "link")); err != nil {
					t.Fatal(err)
				}
			}
			s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "umbrella"}}})
			s.Source.File = filepath.Join(rootDir, "components.yaml")
			_, err := Generator{}.Generate(context.Background(), s, generators.Options{Root: rootDir})
			var me *manifest.Error
			if !errors.Is(err, tc.want) || !errors.As(err, &me) || me.Field != chartField || !strings.Contains(err.Error(), filepath.Join("umbrella", "Chart.yaml")) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("want %v at %s naming umbrella/Chart.yaml and %q, got %v", tc.want, chartField, tc.msg, err)
			}
		})
	}
}

// TestReadsFileDependencies: a chart folder's file:// dependencies are
// its sources (generators.Reader), beside the folder itself.
func TestReadsFileDependencies(t *testing.T) {
	rootDir := t.TempDir()
	files := map[string]string{"deploy/umbrella/Chart.yaml": "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n- name: lib\n  version: \"*\"\n  repository: file://../../lib\n- name: web\n  version: \"*\"\n  repository: https://charts.example.com\n"}
	for k, v := range libChart {
		files[k] = v
	}
	writeFiles(t, rootDir, files)
	s := spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "umbrella"}}})
	s.Source.File = filepath.Join(rootDir, "deploy", "components.yaml")
	got := Generator{}.Reads(s, rootDir)
	want := []generators.Read{{Field: chartField, Path: "umbrella"}, {Field: chartField, Path: filepath.Join("..", "lib")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Reads (-want +got):\n%s", diff)
	}
	if got := (Generator{}).Reads(repoSpec(t, "https://charts.example.com", "1.0.0"), rootDir); len(got) != 0 {
		t.Errorf("a repository chart reads no file, got %v", got)
	}
}
