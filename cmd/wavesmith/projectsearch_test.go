package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readmeLayout is the README's layout: the project file at the
// repository root with inputs: [deploy] and platform: openshift, the spec
// in deploy/, a sibling folder other/ with its own spec.
func readmeLayout(t *testing.T, git bool) string {
	t.Helper()
	repo := t.TempDir()
	files := map[string]string{
		".wavesmith.yaml":   "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: platform}\nspec:\n  inputs: [deploy]\n  platform: openshift\n",
		"deploy/kaoto.yaml": kaotoSpec,
		"other/kaoto.yaml":  strings.Replace(kaotoSpec, "name: designer", "name: other", 1),
	}
	if git {
		files[".git/HEAD"] = "ref: refs/heads/main\n"
	}
	for name, body := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// TestProjectFileFromSubfolder: the project file is found from the
// working folder up to the root, as git finds .git: under the Argo CD
// plugin (Application path: deploy, the README's layout) and with render
// started in a subfolder, platform: openshift gives a Route, and its
// inputs stay relative to its own folder.
func TestProjectFileFromSubfolder(t *testing.T) {
	for _, tc := range []struct {
		name string
		git  bool
		dir  string
		env  map[string]string
		args []string
		want rendered
	}{
		{name: "PluginApplicationPath", dir: "deploy",
			env:  map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "deploy", "ARGOCD_APP_NAMESPACE": "demo"},
			want: rendered{Code: exitOK, Kinds: routeKinds}},
		{name: "PluginParameterOverProjectFile", dir: "deploy",
			env:  map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "deploy", "ARGOCD_ENV_PLATFORM": "kubernetes"},
			want: rendered{Code: exitOK, Kinds: ingressKinds}},
		{name: "PluginAtTheRoot", dir: ".",
			env:  map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "."},
			want: rendered{Code: exitOK, Kinds: routeKinds}},
		{name: "PluginOtherApplication", dir: "other",
			env: map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "other"},
			want: rendered{Code: exitUsage, Stderr: "wavesmith (argocd app shop): error: ../.wavesmith.yaml: spec.inputs ../deploy: none is the application folder (ARGOCD_APP_SOURCE_PATH=other) or lies in it, or holds it: add it to the inputs, or give the application its own project file\n" +
				"wavesmith (argocd app shop): Run 'wavesmith render --help' for usage.\n"}},
		{name: "CLISubfolderInGit", git: true, dir: "other",
			want: rendered{Code: exitOK, Kinds: routeKinds}},
		{name: "CLISubfolderPathGiven", git: true, dir: "deploy", args: []string{"."},
			want: rendered{Code: exitOK, Kinds: ingressKinds}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := readmeLayout(t, tc.git)
			setEnv(t, tc.env)
			t.Chdir(filepath.Join(repo, tc.dir))
			code, out, stderr := wavesmith(t, "", append([]string{"render"}, tc.args...)...)
			got := readRender(t, code, out, stderr, nil)
			if tc.want.Stderr == "" {
				got.Stderr = ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestProjectFileNotSilent: a project file found but not read (PATH
// given) is said under -v; one read is named too.
func TestProjectFileNotSilent(t *testing.T) {
	repo := readmeLayout(t, true)
	setEnv(t, nil)
	t.Chdir(filepath.Join(repo, "deploy"))
	_, _, stderr := wavesmith(t, "", "render", ".", "-v")
	if want := "not reading the project file ../.wavesmith.yaml: PATH given (--config ../.wavesmith.yaml reads it)\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	_, _, stderr = wavesmith(t, "", "render", "-v")
	if want := "read the project file ../.wavesmith.yaml\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if err := os.WriteFile("../other.yaml", []byte("apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, stderr = wavesmith(t, "", "render", "--config", "../other.yaml", "-v")
	if want := "not reading the project file ../.wavesmith.yaml: --config ../other.yaml given\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	// --config reads it from anywhere, its paths relative to it.
	code, out, stderr := wavesmith(t, "", "render", "--config", "../.wavesmith.yaml")
	if got := readRender(t, code, out, stderr, nil); !cmp.Equal(got.Kinds, routeKinds) {
		t.Errorf("--config ../.wavesmith.yaml: %+v", got)
	}
}

// TestProjectFileStopsAtRoot: the search never goes above the root: a
// project file above the git repository is not read.
func TestProjectFileStopsAtRoot(t *testing.T) {
	outer := readmeLayout(t, false)
	inner := filepath.Join(outer, "other")
	if err := os.Mkdir(filepath.Join(inner, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	setEnv(t, nil)
	t.Chdir(inner)
	code, out, stderr := wavesmith(t, "", "render")
	if got := readRender(t, code, out, stderr, nil); !cmp.Equal(got.Kinds, ingressKinds) {
		t.Errorf("a project file above the repository was read: %+v", got)
	}
}

// TestWholeFolderRefused: without PATH nor project file, render refuses
// to walk the file system's root or the home folder.
func TestWholeFolderRefused(t *testing.T) {
	setEnv(t, nil)
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, dir := range []string{"/", home} {
		t.Chdir(dir)
		var out, errb strings.Builder
		code := run([]string{"render"}, strings.NewReader(""), &out, &errb)
		if code != exitUsage || out.Len() != 0 || !strings.Contains(errb.String(), "refusing to read the whole folder: no PATH and no project file") {
			t.Errorf("render in %s: exit %d, stdout %d bytes, stderr %q", dir, code, out.Len(), errb.String())
		}
	}
	// Named, the home folder renders.
	if err := os.WriteFile(filepath.Join(home, "kaoto.yaml"), []byte(kaotoSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wavesmith(t, "", "render", "."); code != exitOK {
		t.Errorf("render . in the home folder: exit %d: %s", code, stderr)
	}
	t.Chdir("/")
	if err := wholeFolder(); !errors.Is(err, errWholeFolder) {
		t.Errorf("wholeFolder in /: %v, want errWholeFolder", err)
	}
}

// TestDocumentedProjectFileUnderArgoCD runs the documentation's examples
// exactly as written: the project file of docs/configuration.md (at the
// repository root: inputs [deploy], an output tree for Flux and Argo CD,
// platform: openshift) and the Application of docs/argocd.md (path:
// deploy, parameter update-policy: ssa-merge, destination namespace
// demo). Under the plugin the project file is found above the
// application folder; its tree settings are said unused; the Kaoto gets
// a Route and the parameter's policy.
func TestDocumentedProjectFileUnderArgoCD(t *testing.T) {
	read := func(file string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	project := fenced(t, read("../../docs/configuration.md"), "```yaml\n# .wavesmith.yaml\n")
	app := fenced(t, read("../../docs/argocd.md"), "```yaml\napiVersion: argoproj.io/v1alpha1\nkind: Application\n")
	for _, s := range []string{"path: deploy", "{name: update-policy, string: ssa-merge}", "namespace: demo}"} {
		if !strings.Contains(app, s) {
			t.Fatalf("docs/argocd.md's Application no longer says %q: update this test", s)
		}
	}
	repo := readmeLayout(t, false)
	if err := os.WriteFile(filepath.Join(repo, ".wavesmith.yaml"), []byte(project), 0o644); err != nil {
		t.Fatal(err)
	}
	setEnv(t, map[string]string{"ARGOCD_APP_NAME": "designers", "ARGOCD_APP_SOURCE_PATH": "deploy", "ARGOCD_APP_NAMESPACE": "demo",
		"ARGOCD_APP_PARAMETERS": `[{"name":"update-policy","string":"ssa-merge"}]`})
	t.Chdir(filepath.Join(repo, "deploy"))
	code, out, stderr := wavesmith(t, "", "render")
	got := readRender(t, code, out, stderr, []string{"wavesmith.io/update-policy"})
	want := rendered{Code: exitOK, Kinds: routeKinds, Annotations: map[string]string{"wavesmith.io/update-policy": "ssa-merge"},
		Stderr: "wavesmith (argocd app designers): ../.wavesmith.yaml: spec.output, spec.flux, spec.argocd: not used under Argo CD (objects go to standard output)\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
