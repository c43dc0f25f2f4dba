package functions

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/render"
)

// wavesmithBin is built from this checkout once per test run, so the real
// tools always run the code under test.
var wavesmithBin string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && !testtool.Required() {
		// Only the tool-driven tests (lookTool) run the binary: they skip.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "wavesmith-fn-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wavesmithBin = filepath.Join(dir, "wavesmith")
	if out, err := exec.Command("go", "build", "-o", wavesmithBin, "../cmd/wavesmith").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building wavesmith: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const resourceList = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: designer.kaoto.io/v1alpha1
  kind: Kaoto
  metadata:
    name: designer
    namespace: demo
    annotations:
      internal.config.kubernetes.io/path: kaoto.yaml
      internal.config.kubernetes.io/index: "0"
  spec:
    ingress: {}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
    namespace: demo
    annotations:
      internal.config.kubernetes.io/path: configmap.yaml
  data:
    theme: dark
`

func process(t *testing.T, in string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), strings.NewReader(in), &out, render.Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()})
	return out.String(), err
}

func TestProcess(t *testing.T) {
	out, err := process(t, resourceList)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, s := range []string{
		"internal.config.kubernetes.io/path: demo/kaoto-designer/service-designer.yaml\n",
		"internal.config.kubernetes.io/path: demo/kaoto-designer/ingress-designer.yaml\n",
		"internal.config.kubernetes.io/path: demo/kaoto-designer/deployment-designer.yaml\n",
		"wavesmith.io/inventory: ",
		"argocd.argoproj.io/sync-wave: \"0\"",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	// The ConfigMap the user wrote is untouched.
	if strings.Count(out, "app.kubernetes.io/managed-by: wavesmith") != 0 {
		t.Errorf("user objects and Kaoto children must not get wavesmith's managed-by:\n%s", out)
	}
	// Running again on the output changes nothing: children are replaced.
	again, err := process(t, out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(out, again); diff != "" {
		t.Errorf("not idempotent: -first +second:\n%s", diff)
	}
}

func TestProcessConfig(t *testing.T) {
	for name, fc := range map[string]string{
		"RenderConfig": "functionConfig:\n  apiVersion: wavesmith.io/v1alpha1\n  kind: RenderConfig\n  metadata: {name: c}\n  spec:\n    platform: openshift\n    wave: 3\n",
		"ConfigMap":    "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    platform: openshift\n    wave: \"3\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, err := process(t, resourceList+fc)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "kind: Route") || strings.Contains(out, "kind: Ingress") {
				t.Errorf("platform openshift must give a Route:\n%s", out)
			}
			if !strings.Contains(out, `argocd.argoproj.io/sync-wave: "3"`) {
				t.Errorf("wave 3 must reach the children:\n%s", out)
			}
		})
	}
}

func TestProcessErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   []string
	}{
		"UnknownField": {
			reason: "a spec error is a result with resource, field and file",
			in:     strings.Replace(resourceList, "ingress: {}", "ingress: {hots: x}", 1),
			want:   []string{"severity: error", "kind: Kaoto", "name: designer", "path: spec.ingress.hots", "path: kaoto.yaml", "unknown field"},
		},
		"BadConfig": {
			reason: "a bad functionConfig is an error result",
			in:     resourceList + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    platfrom: openshift\n",
			want:   []string{"severity: error", "platfrom"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := process(t, tc.in)
			if err == nil {
				t.Fatalf("%s: want an error", tc.reason)
			}
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("%s: results lack %q:\n%s", tc.reason, s, out)
				}
			}
		})
	}
}

// TestProcessReportsEveryError: an item that is no object (it lacks its
// kind) does not hide the errors of the items that are (the Kaoto's
// annotation, its unknown field): one run reports them all, as the CLI
// does for the files that decoded next to one that did not.
func TestProcessReportsEveryError(t *testing.T) {
	in := strings.Replace(resourceList, "ingress: {}", "ingress: {hots: x}", 1)
	in = strings.Replace(in, "      internal.config.kubernetes.io/index: \"0\"\n", "      internal.config.kubernetes.io/index: \"0\"\n      wavesmith.io/update-policy: apply\n", 1)
	in = strings.Replace(in, "- apiVersion: v1\n  kind: ConfigMap\n", "- apiVersion: v1\n", 1)
	out, err := process(t, in)
	if err == nil {
		t.Fatalf("want an error:\n%s", out)
	}
	_, results, _ := strings.Cut(out, "\nresults:\n")
	var rl struct {
		Results []struct {
			Severity string
			File     struct{ Path string }
			Field    struct{ Path string }
		}
	}
	if err := sigsyaml.Unmarshal([]byte("results:\n"+results), &rl); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, r := range rl.Results {
		got = append(got, r.Severity+" "+r.File.Path+" "+r.Field.Path)
	}
	want := []string{
		"error configmap.yaml ",
		"error kaoto.yaml metadata.annotations[wavesmith.io/update-policy]",
		"error kaoto.yaml spec.ingress.hots",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s\n%s", diff, out)
	}
}

func TestWarningsExitZero(t *testing.T) {
	in := strings.Replace(resourceList, "      internal.config.kubernetes.io/index: \"0\"\n", "      internal.config.kubernetes.io/index: \"0\"\n      wavesmith.io/update-policy: replace\n", 1)
	out, err := process(t, in)
	if err != nil {
		t.Fatalf("warnings must not fail the function: %v\n%s", err, out)
	}
	if !strings.Contains(out, "severity: warning") || !strings.Contains(out, "update-policy replace") {
		t.Errorf("want a warning result:\n%s", out)
	}
}

// copyPkg copies testdata/pkg to a temporary folder.
func copyPkg(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "pkg")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("testdata/pkg")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata/pkg", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func lookTool(t *testing.T, env, name string) string {
	t.Helper()
	testtool.Short(t)
	testtool.Inputs(t)
	if wavesmithBin == "" { // Short skipped under -short, when TestMain does not build it
		t.Fatal("wavesmith was not built by TestMain")
	}
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			testtool.Missing(t, "%s=%s: %v", env, p, err)
		}
		return p
	}
	if p, err := filepath.Abs(filepath.Join("..", "bin", name)); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		testtool.Missing(t, "%s was not found in bin/ or PATH (set %s)", name, env)
	}
	return p
}

// run runs a tool (kpt, kustomize, the wavesmith built by TestMain).
func run(t *testing.T, dir string, name string, args ...string) (string, error) {
	t.Helper()
	testtool.Inputs(t)
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func keys(m map[string]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// TestKptFnEval runs the real kpt with the built function, imperatively.
func TestKptFnEval(t *testing.T) {
	kpt := lookTool(t, "KPT_BIN", "kpt")
	pkg := copyPkg(t)
	before := files(t, pkg)
	out, err := run(t, pkg, kpt, "fn", "eval", ".", "--exec", wavesmithBin+" fn", "--", "platform=openshift")
	if err != nil {
		t.Fatalf("kpt fn eval: %v\n%s", err, out)
	}
	after := files(t, pkg)
	want := []string{"configmap.yaml", "demo/kaoto-designer/deployment-designer.yaml", "demo/kaoto-designer/route-designer.yaml",
		"demo/kaoto-designer/service-designer.yaml", "kaoto.yaml"}
	if diff := cmp.Diff(want, keys(after)); diff != "" {
		t.Fatalf("files: -want +got:\n%s", diff)
	}
	if after["configmap.yaml"] != before["configmap.yaml"] {
		t.Errorf("a user object was changed:\n%s", after["configmap.yaml"])
	}
	k := after["kaoto.yaml"]
	if !strings.Contains(k, "# the designer instance") || !strings.Contains(k, "wavesmith.io/inventory") {
		t.Errorf("the spec must keep its comments and gain the inventory:\n%s", k)
	}
	if !strings.Contains(after["demo/kaoto-designer/route-designer.yaml"], "host: kaoto.example.com") {
		t.Errorf("route:\n%s", after["demo/kaoto-designer/route-designer.yaml"])
	}
}

// TestKptFnRender runs a Kptfile pipeline twice: the second run replaces
// the first run's children instead of duplicating them.
func TestKptFnRender(t *testing.T) {
	kpt := lookTool(t, "KPT_BIN", "kpt")
	pkg := copyPkg(t)
	kptfile := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - exec: " + wavesmithBin + " fn\n    configMap:\n      wave: \"2\"\n"
	if err := os.WriteFile(filepath.Join(pkg, "Kptfile"), []byte(kptfile), 0o644); err != nil {
		t.Fatal(err)
	}
	var first map[string]string
	for i := 0; i < 2; i++ {
		out, err := run(t, pkg, kpt, "fn", "render", "--allow-exec", ".")
		if err != nil {
			t.Fatalf("kpt fn render (run %d): %v\n%s", i+1, err, out)
		}
		got := files(t, pkg)
		delete(got, "Kptfile") // kpt records its render status there
		if i == 0 {
			first = got
			if !strings.Contains(got["demo/kaoto-designer/ingress-designer.yaml"], `argocd.argoproj.io/sync-wave: "2"`) {
				t.Errorf("ingress:\n%s", got["demo/kaoto-designer/ingress-designer.yaml"])
			}
			// The spec itself waits in its children's wave, else Argo CD
			// would sync it in wave 0 and wait there forever.
			if !regexp.MustCompile(`argocd.argoproj.io/sync-wave: ['"]2['"]`).MatchString(got["kaoto.yaml"]) {
				t.Errorf("the spec keeps wave 0 while its children are in wave 2:\n%s", got["kaoto.yaml"])
			}
			continue
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("the second render changed the package: -first +second:\n%s", diff)
		}
	}
}

// TestKptBadInput: a broken spec fails the pipeline and leaves files as
// they were.
func TestKptBadInput(t *testing.T) {
	kpt := lookTool(t, "KPT_BIN", "kpt")
	pkg := copyPkg(t)
	bad := strings.Replace(files(t, pkg)["kaoto.yaml"], "host:", "hots:", 1)
	if err := os.WriteFile(filepath.Join(pkg, "kaoto.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	before := files(t, pkg)
	out, err := run(t, pkg, kpt, "fn", "eval", ".", "--exec", wavesmithBin+" fn")
	if err == nil {
		t.Fatalf("kpt must fail on a broken spec:\n%s", out)
	}
	if !strings.Contains(out, "spec.ingress.hots") {
		t.Errorf("kpt output does not name the field:\n%s", out)
	}
	if diff := cmp.Diff(before, files(t, pkg)); diff != "" {
		t.Errorf("files changed: %s", diff)
	}
}

// TestKustomizeExec runs the real kustomize with the function as a
// transformer and as a generator.
func TestKustomizeExec(t *testing.T) {
	kustomize := lookTool(t, "KUSTOMIZE_BIN", "kustomize")
	fnAnnotation := "  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + wavesmithBin + "\n        args: [fn]\n"
	cases := map[string]map[string]string{
		"Transformer": {
			"kustomization.yaml": "resources: [kaoto.yaml, configmap.yaml]\ntransformers: [fn.yaml]\n",
			"fn.yaml":            "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata:\n  name: render\n" + fnAnnotation + "spec:\n  wave: 1\n",
		},
		"Generator": {
			"kustomization.yaml": "resources: [configmap.yaml]\ngenerators: [kaoto-gen.yaml]\n",
			"kaoto-gen.yaml":     "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: designer\n  namespace: demo\n" + strings.Replace(fnAnnotation, "[fn]", "[fn, --wave, \"1\"]", 1) + "spec:\n  ingress:\n    host: kaoto.example.com\n",
		},
	}
	for name, extra := range cases {
		t.Run(name, func(t *testing.T) {
			pkg := copyPkg(t)
			for f, s := range extra {
				if err := os.WriteFile(filepath.Join(pkg, f), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, err := run(t, pkg, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
			if err != nil {
				t.Fatalf("kustomize build: %v\n%s", err, out)
			}
			for _, s := range []string{"kind: Service", "kind: Ingress", "kind: Deployment", "kind: Kaoto", "kind: ConfigMap", `argocd.argoproj.io/sync-wave: "1"`, "wavesmith.io/inventory"} {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			if strings.Contains(out, "config.kubernetes.io/function") || strings.Contains(out, "kind: RenderConfig") {
				t.Errorf("function configuration leaked into the output:\n%s", out)
			}
		})
	}
}

// TestKptComponent renders a Component whose kustomization lives in the
// package: its files stay as they are and are not rendered twice.
func TestKptComponent(t *testing.T) {
	kpt := lookTool(t, "KPT_BIN", "kpt")
	pkg := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(pkg, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  a: b\n")
	write("app/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: web\nresources: [cm.yaml]\n")
	write("component.yaml", "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: app\n  namespace: web\nspec:\n  source:\n    kustomization:\n      path: app\n")
	if out, err := run(t, pkg, kpt, "fn", "eval", ".", "--exec", wavesmithBin+" fn"); err != nil {
		t.Fatalf("kpt fn eval: %v\n%s", err, out)
	}
	got := files(t, pkg)
	want := []string{"app/cm.yaml", "app/kustomization.yaml", "component.yaml", "web/component-app/configmap-app-config.yaml"}
	if diff := cmp.Diff(want, keys(got)); diff != "" {
		t.Fatalf("files: -want +got:\n%s", diff)
	}
	cm := got["web/component-app/configmap-app-config.yaml"]
	for _, s := range []string{"namespace: web", "wavesmith.io/apply-order", "app.kubernetes.io/managed-by: wavesmith"} {
		if !strings.Contains(cm, s) {
			t.Errorf("rendered ConfigMap lacks %q:\n%s", s, cm)
		}
	}
}

// TestKptFromParent: kpt runs the function in the folder it was started
// in, with item paths relative to the package: a Component's chart beside
// its file must be found when kpt is started above the package too.
func TestKptFromParent(t *testing.T) {
	kpt := lookTool(t, "KPT_BIN", "kpt")
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	mkpkg := func(name, component string) string {
		pkg := filepath.Join(repo, name)
		copyTree(t, filepath.Join("..", "testdata", "charts", "webapp"), filepath.Join(pkg, "chart"))
		for f, c := range map[string]string{
			"Kptfile":    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\npipeline:\n  mutators:\n  - exec: " + wavesmithBin + " fn\n",
			".krmignore": "chart/\n",
			"c.yaml":     "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: " + component + ", namespace: apps}\nspec:\n  source: {chart: {path: chart}}\n",
		} {
			if err := os.WriteFile(filepath.Join(pkg, f), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return pkg
	}
	pkg := mkpkg("pkg", "web")
	if out, err := run(t, repo, kpt, "fn", "render", "--allow-exec", "pkg"); err != nil {
		t.Fatalf("kpt fn render pkg from the parent: %v\n%s", err, out)
	}
	found := false
	for f := range files(t, pkg) {
		found = found || strings.HasPrefix(f, "apps/")
	}
	if !found {
		t.Errorf("no rendered children in the package: %v", keys(files(t, pkg)))
	}
	// Two packages holding a spec of that name: say what to do.
	mkpkg("other", "web")
	out, err := run(t, repo, kpt, "fn", "render", "--allow-exec", "pkg")
	if err == nil || !strings.Contains(string(out), "run kpt from the package folder") {
		t.Errorf("an ambiguous package: want an error saying what to do, got %v\n%s", err, out)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
