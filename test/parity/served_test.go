package parity

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"sigs.k8s.io/yaml"
)

// Credentials of the served chart repository (basic auth).
const (
	repoUser     = "parity"
	repoPassword = "s3cret-parity"
)

// checkServed renders a variation whose chart is served rather than
// copied: src "repository" packages the chart (helm package), indexes it
// (helm repo index) and serves the folder with httptest behind basic
// auth; "oci" pushes the package (helm push) to an in-process OCI
// registry (go-containerregistry's pkg/registry). wavesmith fetch fills
// the lock and the cache (credentials from Helm's repositories.yaml in
// the tools' HOME), wavesmith render reads them offline, and the output
// is compared with helm template --repo URL --version V (or
// oci://HOST/charts/NAME --version V) as checkVariation compares.
func checkServed(t *testing.T, tl tools, modDir string, cs caseSpec, v variation, src string) {
	r := newRepo(t, modDir, cs, v)
	home := t.TempDir()
	var md struct{ Name, Version string }
	b, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(cs.srcDir()), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &md); err != nil || md.Name == "" || md.Version == "" {
		t.Fatalf("Chart.yaml: want a name and a version (%v)", err)
	}
	pkgDir := t.TempDir()
	if _, _, err := run(r.dir, home, tl.helm, "package", cs.srcDir(), "--destination", pkgDir); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(pkgDir, md.Name+"-"+md.Version+".tgz")

	var repoURL string
	var toolChart []string
	var fetchArgs []string
	switch src {
	case "repository":
		files := http.FileServer(http.Dir(pkgDir))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if u, p, ok := req.BasicAuth(); !ok || u != repoUser || p != repoPassword {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			files.ServeHTTP(w, req)
		}))
		t.Cleanup(srv.Close)
		if _, _, err := run(r.dir, home, tl.helm, "repo", "index", pkgDir, "--url", srv.URL); err != nil {
			t.Fatal(err)
		}
		// As helm repo add writes it: wavesmith fetch reads the
		// credentials from there.
		writeFile(t, filepath.Join(home, "config", "repositories.yaml"), fmt.Sprintf("apiVersion: v1\nrepositories:\n- name: parity\n  url: %s\n  username: %s\n  password: %s\n", srv.URL, repoUser, repoPassword))
		repoURL = srv.URL
		toolChart = []string{md.Name, "--repo", srv.URL, "--username", repoUser, "--password", repoPassword}
	case "oci":
		srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
		t.Cleanup(srv.Close)
		repoURL = "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/charts"
		if _, _, err := run(r.dir, home, tl.helm, "push", archive, repoURL, "--plain-http"); err != nil {
			t.Fatal(err)
		}
		toolChart = []string{repoURL + "/" + md.Name, "--plain-http"}
		fetchArgs = []string{"--plain-http"}
	}
	writeFile(t, filepath.Join(r.dir, r.component), servedComponentSpec(cs, v, repoURL, md.Name, md.Version))

	// helm template gets the credentials as flags, in a HOME of its own
	// (a repositories.yaml entry would make it look for a cached index).
	toolOut, toolErr := tl.renderServedTool(t, r, v, t.TempDir(), append(toolChart, "--version", md.Version))
	if toolErr != nil {
		t.Fatalf("the reference tool fails on the served chart: %v", toolErr)
	}
	if _, stderr, err := run(r.dir, home, tl.wavesmith, append(append([]string{"fetch"}, fetchArgs...), r.component)...); err != nil {
		t.Fatalf("wavesmith fetch: %v\n%s", err, stderr)
	}
	render := func() ([]byte, string, error) {
		args := []string{"render", r.component, "--api-resources", apiResourcesFile(t, r.dir)}
		if v.KubeVersion != "" {
			args = append(args, "--kube-version", v.KubeVersion)
		}
		if len(v.APIVersions) > 0 {
			args = append(args, "--api-versions", strings.Join(v.APIVersions, ","))
		}
		return run(r.dir, home, tl.wavesmith, args...)
	}
	wsOut, wsStderr, wsErr := render()
	rerender := func() ([]byte, error) {
		out, _, err := render()
		return out, err
	}
	compareOutputs(t, cs.Name+"/"+v.Name+"/"+src, "helm template", cs, v, toolOut, toolErr, wsOut, wsStderr, wsErr, rerender)
}

// servedComponentSpec is componentSpec with the chart named by repo,
// name and version instead of its path.
func servedComponentSpec(cs caseSpec, v variation, repoURL, name, version string) string {
	s := componentSpec(cs, v)
	path := fmt.Sprintf("    %s:\n      path: %s\n", cs.Kind, cs.srcDir())
	return strings.Replace(s, path, fmt.Sprintf("    chart:\n      repo: %s\n      name: %s\n      version: %q\n", repoURL, name, version), 1)
}

// renderServedTool renders the variation with helm template of the
// served chart (chart: the chart reference and its flags).
func (tl tools) renderServedTool(t *testing.T, r repo, v variation, home string, chart []string) ([]byte, error) {
	t.Helper()
	args := append([]string{"template", "rel"}, chart...)
	args = append(args, "--namespace", v.namespace(), "--include-crds", "--skip-tests")
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
