package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repoCopy makes a git repository (a .git folder) holding the bundled
// examples and the charts and kustomizations they read.
func repoCopy(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"examples", "charts", "kustomizations", "values"} {
		src := filepath.Join("..", "..", "testdata", d)
		err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			dst := filepath.Join(repo, "testdata", d, rel)
			if e.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// snapshot reads every file below dir (hidden ones included).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckRemembersRender: check needs no render flag again: the tree's
// record holds the inputs and settings (Flux and Argo CD ones included);
// a stale tree prints the exact command that re-renders it.
func TestCheckRemembersRender(t *testing.T) {
	repo := repoCopy(t)
	t.Chdir(repo)
	render := []string{"render", "testdata/examples", "-o", "deploy/rendered", "--flux", "--flux-timeout", "3m", "--argocd",
		"--argocd-repo", "https://git.example.com/p.git", "--platform", "openshift", "--wave", "1"}
	if code, _, stderr := wavesmith(t, "", render...); code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	if code, out, stderr := wavesmith(t, "", "check", "-o", "deploy/rendered"); code != exitOK {
		t.Fatalf("check with no flags must reuse the record: exit %d\n%s\n%s", code, stderr, out)
	}
	// A flag given to check wins over the record: the tree is then stale.
	if code, _, _ := wavesmith(t, "", "check", "-o", "deploy/rendered", "--platform", "kubernetes"); code != exitError {
		t.Errorf("check --platform kubernetes of an OpenShift tree: exit %d, want %d", code, exitError)
	}
	// A spec change: stale, with the command to re-render.
	f := filepath.Join("testdata", "examples", "my-kaoto.yaml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(strings.Replace(string(b), "name: my-kaoto", "name: my-kaoto2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := wavesmith(t, "", "check", "-o", "deploy/rendered")
	want := "re-render with 'wavesmith render testdata/examples -o deploy/rendered --platform openshift --wave 1 --flux --flux-timeout 3m --argocd --argocd-repo https://git.example.com/p.git'"
	if code != exitError || !strings.Contains(stderr, want) {
		t.Errorf("stale tree: exit %d, stderr %q; want %q", code, stderr, want)
	}
	// The printed command does re-render it.
	args := strings.Fields(strings.TrimSuffix(strings.SplitN(stderr, "re-render with '", 2)[1], "' and commit the result\n"))
	if code, _, stderr := wavesmith(t, "", args[1:]...); code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	if code, out, stderr := wavesmith(t, "", "check", "-o", "deploy/rendered"); code != exitOK {
		t.Fatalf("after the printed command, check: exit %d\n%s\n%s", code, stderr, out)
	}
	// The record is the same from another folder.
	rec := snapshot(t, "deploy/rendered")[".wavesmith-tree.yaml"]
	t.Chdir(filepath.Join(repo, "deploy"))
	if code, _, stderr := wavesmith(t, "", "render", "../testdata/examples", "-o", "rendered", "--flux", "--flux-timeout", "3m", "--argocd",
		"--argocd-repo", "https://git.example.com/p.git", "--platform", "openshift", "--wave", "1"); code != exitOK {
		t.Fatalf("render from deploy/: exit %d: %s", code, stderr)
	}
	if got := snapshot(t, "rendered")[".wavesmith-tree.yaml"]; got != rec {
		t.Errorf("the record depends on the current folder:\n%s", cmp.Diff(rec, got))
	}
}

func TestCheckMissingTree(t *testing.T) {
	code, _, stderr := wavesmith(t, "", "check", examples, "-o", filepath.Join(t.TempDir(), "nowhere"))
	if code != exitError || !strings.Contains(stderr, "nowhere does not exist") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestRenderedTreeIsNotInput: render . -o rendered, run twice, does not
// read its own output back; a rendered tree named as input is refused,
// naming the record; discovery skips it.
func TestRenderedTreeIsNotInput(t *testing.T) {
	repo := repoCopy(t)
	t.Chdir(filepath.Join(repo, "testdata", "examples"))
	for i := 0; i < 2; i++ {
		if code, _, stderr := wavesmith(t, "", "render", ".", "-o", "rendered", "--argocd", "--argocd-repo", "https://x.example/r.git"); code != exitOK {
			t.Fatalf("render %d: exit %d: %s", i+1, code, stderr)
		}
	}
	code, out, stderr := wavesmith(t, "", "render", "rendered")
	if code != exitError || out != "" || !strings.Contains(stderr, "rendered/.wavesmith-tree.yaml") || !strings.Contains(stderr, "a rendered tree is not an input") {
		t.Errorf("a rendered tree as input: exit %d, stdout %d bytes, stderr %q", code, len(out), stderr)
	}
	code, _, stderr = wavesmith(t, "", "render", filepath.Join("rendered", "operators", "component-widgets"))
	if code != exitError || !strings.Contains(stderr, "a rendered tree is not an input") {
		t.Errorf("a folder inside a rendered tree as input: exit %d, stderr %q", code, stderr)
	}
	for _, dir := range []string{"rendered", filepath.Join("rendered", "operators", "component-widgets"), filepath.Join("rendered", "argocd")} {
		if code, out, stderr := wavesmith(t, "", "discover", dir); code != exitOK || out != "" {
			t.Errorf("discover %s: exit %d, stdout %q, stderr %q: a rendered tree is never wavesmith's input", dir, code, out, stderr)
		}
	}
	if code, out, _ := wavesmith(t, "", "discover", "."); code != exitOK || !strings.Contains(out, "components.yaml") || strings.Contains(out, "rendered") {
		t.Errorf("discover of the examples: exit %d, %q", code, out)
	}
}

// TestProjectFile: with no PATH, render and check use .wavesmith.yaml:
// inputs, output and settings, relative to the file.
func TestProjectFile(t *testing.T) {
	repo := repoCopy(t)
	t.Chdir(repo)
	project := `apiVersion: wavesmith.io/v1alpha1
kind: RenderConfig
metadata: {name: project}
spec:
  inputs: [testdata/examples]
  output: out/tree
  platform: OpenShift
  flux: {timeout: 2m}
`
	if err := os.WriteFile(".wavesmith.yaml", []byte(project), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := wavesmith(t, "", "render"); code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	files := snapshot(t, "out/tree")
	if !strings.Contains(files["demo/kaoto-my-kaoto/kaoto-my-kaoto.yaml"], "name: my-kaoto") {
		t.Errorf("the project's inputs were not rendered into its output: %d files", len(files))
	}
	if _, ok := files["demo/kaoto-my-kaoto/route-my-kaoto.yaml"]; !ok {
		t.Error("platform OpenShift (CamelCase, as policy values) from the project file: want Routes")
	}
	if !strings.Contains(files["_flux/wave-0.yaml"], "timeout: 2m") {
		t.Error("the project's Flux settings were not used")
	}
	if code, out, stderr := wavesmith(t, "", "check"); code != exitOK {
		t.Errorf("check with the project file: exit %d\n%s\n%s", code, stderr, out)
	}
	// A flag wins over the project file, and mistakes name the file's field.
	if err := os.WriteFile(".wavesmith.yaml", []byte(strings.Replace(project, "OpenShift", "mars", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := wavesmith(t, "", "render")
	if code != exitUsage || !strings.Contains(stderr, ".wavesmith.yaml: spec.platform: platform \"mars\"") {
		t.Errorf("a bad project setting: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := wavesmith(t, "", "render", "--platform", "kubernetes", "-o", "out/k8s"); code != exitOK {
		t.Errorf("a flag wins over the project file: exit %d, %s", code, stderr)
	}
}

// TestIgnoreFile: .wavesmithignore keeps files out of the render.
func TestIgnoreFile(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kaoto.yaml", "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\n")
	write("values/dev.yaml", "replicas: 2\n")
	if code, _, stderr := wavesmith(t, "", "render", dir); code != exitError || !strings.Contains(stderr, "dev.yaml") {
		t.Fatalf("without an ignore file, a values file is an error: exit %d, %s", code, stderr)
	}
	write(".wavesmithignore", "# values are not objects\nvalues/\n")
	code, out, stderr := wavesmith(t, "", "render", dir)
	if code != exitOK || !strings.Contains(out, "kind: Kaoto") {
		t.Errorf("with values/ ignored: exit %d, %s", code, stderr)
	}
}

func TestOutputTypos(t *testing.T) {
	for _, o := range []string{"yaml", "json", "YAML"} {
		code, out, stderr := wavesmith(t, "", "render", examples, "-o", o)
		if code != exitUsage || out != "" || !strings.Contains(stderr, "--format json") {
			t.Errorf("-o %s: exit %d, stderr %q", o, code, stderr)
		}
		if _, err := os.Stat(o); !os.IsNotExist(err) {
			t.Errorf("-o %s created a folder", o)
		}
	}
}

func TestJSONStream(t *testing.T) {
	code, out, stderr := wavesmith(t, "", "render", examples, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	_, yamlOut, _ := wavesmith(t, "", "render", examples)
	if list.Kind != "List" || len(list.Items) != strings.Count(yamlOut, "\n---\n")+1 {
		t.Errorf("kind %q, %d items; the YAML stream has %d documents", list.Kind, len(list.Items), strings.Count(yamlOut, "\n---\n")+1)
	}
}

func TestVersion(t *testing.T) {
	code, out, stderr := wavesmith(t, "", "version", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"wavesmith", "helm", "kustomize", "kyaml", "kubernetes", "defaultKubeVersion"} {
		if v[k] == "" {
			t.Errorf("version lacks %s: %v", k, v)
		}
	}
	if !strings.HasPrefix(v["defaultKubeVersion"], "v1.") {
		t.Errorf("default kube version %q", v["defaultKubeVersion"])
	}
}

// TestFailedRenderKeepsTree: bad input leaves the previous tree, with its
// Flux and Argo CD files, exactly as it was.
func TestFailedRenderKeepsTree(t *testing.T) {
	repo := repoCopy(t)
	t.Chdir(repo)
	args := []string{"render", "testdata/examples", "-o", "rendered", "--flux", "--argocd", "--argocd-repo", "https://x.example/r.git"}
	if code, _, stderr := wavesmith(t, "", args...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before := snapshot(t, repo)
	if err := os.WriteFile(filepath.Join("testdata", "examples", "broken.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := wavesmith(t, "", args...)
	if code != exitError || out != "" || !strings.Contains(stderr, "broken.yaml") {
		t.Fatalf("bad input: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	after := snapshot(t, repo)
	delete(after, "testdata/examples/broken.yaml")
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("a failed render changed the repository (-before +after):\n%s", diff)
	}
}

func TestPlatformCase(t *testing.T) {
	code, out, stderr := wavesmith(t, "", "render", examples, "--platform", "OpenShift")
	if code != exitOK || !strings.Contains(out, "kind: Route") {
		t.Errorf("--platform OpenShift: exit %d, %s", code, stderr)
	}
}
