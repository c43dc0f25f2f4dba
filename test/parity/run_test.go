package parity

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/wavesmith/wavesmith/internal/testtool"
)

// Versions of the reference tools the corpus is checked against.
const (
	helmVersion      = "v3.22.0"
	kustomizeVersion = "v5.8.2"
	helmModule       = "helm.sh/helm/v3@" + helmVersion
)

// tools are the binaries the suite runs.
type tools struct {
	wavesmith, helm, kustomize string
}

// tool returns the absolute path of the binary named by env; build says
// how to build it. A missing tool skips the test, or fails it under make
// (testtool.Tool).
func tool(t *testing.T, env, build string) string {
	t.Helper()
	return testtool.Tool(t, env, build)
}

func lookTools(t *testing.T) tools {
	t.Helper()
	tl := tools{
		wavesmith: tool(t, "WAVESMITH_BIN", "make build"),
		helm:      tool(t, "PARITY_HELM_BIN", "make parity-helm"),
		kustomize: tool(t, "KUSTOMIZE_BIN", "make tools"),
	}
	out, err := exec.Command(tl.kustomize, "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != kustomizeVersion {
		t.Fatalf("KUSTOMIZE_BIN=%s: 'kustomize version' says %q (%v), want %s", tl.kustomize, bytes.TrimSpace(out), err, kustomizeVersion)
	}
	out, err = exec.Command(tl.helm, "version", "--template", "{{.Version}}").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != helmVersion {
		t.Fatalf("PARITY_HELM_BIN=%s: 'helm version' says %q (%v), want %s as released (built with helm's release ldflags: 'make parity-helm')", tl.helm, bytes.TrimSpace(out), err, helmVersion)
	}
	return tl
}

var clientGo = regexp.MustCompile(`(?m)^\s*k8s\.io/client-go v0\.(\d+)\.\d+`)

// checkHelmDefaults checks that the reference helm offers charts the
// default Kubernetes version the v3.22.0 release does. helm's Makefile
// derives it at release time from the k8s.io/client-go version of its
// go.mod (v0.N.x gives v1.N.0); a helm built without those ldflags
// offers v1.20.0.
func checkHelmDefaults(t *testing.T, helm, helmModuleDir string) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(helmModuleDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := clientGo.FindSubmatch(gomod)
	if m == nil {
		t.Fatalf("%s/go.mod: no k8s.io/client-go requirement", helmModule)
	}
	want := "v1." + string(m[1]) + ".0"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "Chart.yaml"), "apiVersion: v2\nname: probe\nversion: 0.1.0\n")
	writeFile(t, filepath.Join(dir, "templates", "cm.yaml"), "kube: {{ .Capabilities.KubeVersion.Version }}\n")
	out, err := exec.Command(helm, "template", "probe", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("helm template of a probe chart: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("kube: "+want+"\n")) {
		t.Fatalf("PARITY_HELM_BIN=%s offers charts a default Kubernetes version other than the %s release's %s (built without helm's release ldflags?):\n%s", helm, helmVersion, want, out)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files and folders under src to dst, making
// them writable (the module cache is read-only). Symlinks are copied as
// symlinks.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case !d.Type().IsRegular():
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// repo is one variation's test repository: a folder with a .git marker
// (wavesmith's repository root) holding src/ (the copied module folder),
// values/ (testdata/values) and component.yaml.
type repo struct {
	dir       string
	component string // file name of the Component spec
	inline    string // the inline values as a file for helm, outside dir
}

func newRepo(t *testing.T, modDir string, cs caseSpec, v variation) repo {
	t.Helper()
	r := repo{dir: filepath.Join(t.TempDir(), "repo"), component: "component.yaml"}
	if err := os.MkdirAll(filepath.Join(r.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(filepath.Join(modDir, filepath.FromSlash(cs.copyDir())), filepath.Join(r.dir, "src")); err != nil {
		t.Fatalf("copying %s of the module: %v", cs.copyDir(), err)
	}
	if err := copyTree("testdata/values", filepath.Join(r.dir, "values")); err != nil {
		t.Fatalf("copying testdata/values: %v", err)
	}
	writeFile(t, filepath.Join(r.dir, r.component), componentSpec(cs, v))
	if v.ComponentConfig != "" {
		writeFile(t, filepath.Join(r.dir, filepath.FromSlash(cs.srcDir()), ".component-config.yaml"), v.ComponentConfig)
	}
	if v.Values != "" {
		r.inline = filepath.Join(t.TempDir(), "inline-values.yaml")
		writeFile(t, r.inline, v.Values)
	}
	return r
}

// componentSpec is the Component that renders the case: named rel like
// the helm release, in the release namespace, with the variation's
// values text written verbatim under spec.values.
func componentSpec(cs caseSpec, v variation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: rel\n  namespace: %s\nspec:\n  source:\n    %s:\n      path: %s\n", v.namespace(), cs.Kind, cs.srcDir())
	if len(v.ValuesFiles) > 0 {
		b.WriteString("  valuesFiles:\n")
		for _, f := range v.ValuesFiles {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	if v.Values != "" {
		b.WriteString("  values:\n")
		for _, line := range strings.Split(strings.TrimRight(v.Values, "\n"), "\n") {
			if line == "" {
				b.WriteString("\n")
				continue
			}
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

// componentKey is the key of the rendered Component in wavesmith's output.
func componentKey(v variation) string {
	return "wavesmith.io/Component/" + v.namespace() + "/rel"
}

// env is the environment of the tools: the test's, less what would change
// a render (wavesmith's and Argo CD's variables, helm's and kustomize's
// settings), with helm's folders in a fresh place.
func env(home string) []string {
	var out []string
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(name, "KUBE") || strings.HasPrefix(name, "ARGOCD_") || strings.HasPrefix(name, "HELM_") || strings.HasPrefix(name, "KUSTOMIZE_") || strings.HasPrefix(name, "XDG_") || name == "HOME" {
			continue
		}
		out = append(out, e)
	}
	return append(out, "HOME="+home, "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
}

// run runs a binary in dir and returns its standard output, and an error
// holding its standard error when it fails.
func run(dir, home, bin string, args ...string) ([]byte, string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env(home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), stderr.String(), err
}

// renderTool renders the variation with helm template or kustomize build.
func (tl tools) renderTool(t *testing.T, r repo, cs caseSpec, v variation) ([]byte, error) {
	t.Helper()
	home := t.TempDir()
	if cs.Kind == "kustomization" {
		out, _, err := run(r.dir, home, tl.kustomize, "build", cs.srcDir())
		return out, err
	}
	args := []string{"template", "rel", cs.srcDir(), "--namespace", v.namespace(), "--include-crds", "--skip-tests"}
	for _, f := range v.ValuesFiles {
		args = append(args, "--values", f)
	}
	if r.inline != "" {
		args = append(args, "--values", r.inline)
	}
	if v.KubeVersion != "" {
		args = append(args, "--kube-version", v.KubeVersion)
	}
	for _, a := range v.APIVersions {
		args = append(args, "--api-versions", a)
	}
	out, _, err := run(r.dir, home, tl.helm, args...)
	return out, err
}

// renderWavesmith renders the variation's Component with wavesmith.
func (tl tools) renderWavesmith(t *testing.T, r repo, v variation) ([]byte, string, error) {
	t.Helper()
	args := []string{"render", r.component, "--api-resources", apiResourcesFile(t, r.dir)}
	if v.KubeVersion != "" {
		args = append(args, "--kube-version", v.KubeVersion)
	}
	if len(v.APIVersions) > 0 {
		args = append(args, "--api-versions", strings.Join(v.APIVersions, ","))
	}
	return run(r.dir, t.TempDir(), tl.wavesmith, args...)
}

// apiResourcesFile writes knownScopes as kubectl api-resources prints them:
// what a user gives wavesmith (--api-resources) from a cluster where those
// CRDs are installed. The tools' side gets the same table (normalize_test.go,
// release-namespace), so that scope is no difference and the rest is. The
// file lies in the repository (dir), as wavesmith reads nothing outside
// its root, flags included.
func apiResourcesFile(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND")
	kinds := make([]string, 0, len(knownScopes))
	for gk := range knownScopes {
		kinds = append(kinds, gk)
	}
	sort.Strings(kinds)
	for _, gk := range kinds {
		group, kind, _ := strings.Cut(gk, "/")
		fmt.Fprintf(w, "%ss\t\t%s/v1\t%t\t%s\n", strings.ToLower(kind), group, knownScopes[gk], kind)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "api-resources.txt")
	writeFile(t, p, b.String())
	return p
}
