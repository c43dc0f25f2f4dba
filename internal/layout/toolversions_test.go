package layout

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/internal/testtool"
)

// sharedBuilds are the builds of make test whose shared dependencies must
// resolve to one version each, so that a cold make test compiles every such
// package once (issue 20: the cold run is bound by compiling on 2 cores).
// Each is a folder (a module) and the packages built there.
var sharedBuilds = []struct {
	name, dir string
	pkgs      []string
}{
	{"wavesmith", ".", []string{"./..."}},
	{"envtest (kube-apiserver, etcd)", "hack/tools/envtest", []string{"k8s.io/kubernetes/cmd/kube-apiserver", "go.etcd.io/etcd/server/v3"}},
	{"flux CLI, kustomize-controller", "hack/tools/flux", []string{"github.com/fluxcd/flux2/v2/cmd/flux", "github.com/fluxcd/kustomize-controller"}},
	{"test/flux", "test/flux", []string{"./..."}},
	{"test/argocd (argocd-cmp-server)", "test/argocd", []string{"./..."}},
	{"test/gitops-engine", "test/gitops-engine", []string{"./..."}},
}

// sharedPairs are the builds that must agree: envtest with wavesmith (its
// go.mod requires wavesmith's module and pins the k8s.io staging modules
// to wavesmith's versions), the Flux tools with test/flux (test/flux pins
// what the tools resolve), the two Argo CD modules (each compiles Argo CD;
// test/argocd also builds argocd-cmp-server).
var sharedPairs = [][2]int{{0, 1}, {2, 3}, {4, 5}}

// TestToolModulesShareVersions fails when a package two paired builds
// share resolves to different module versions in them: it would compile
// twice on a fresh machine (and, when a module's requirements moved, when
// a tool module's go.mod is no longer tidy under -mod=readonly, as CI
// builds). It lists packages with go list (module cache, no compiling);
// under go test -short it is left out, as it may download the tool
// modules' dependencies.
func TestToolModulesShareVersions(t *testing.T) {
	testtool.Short(t)
	root := filepath.Join("..", "..")
	// hack/tools/flux builds flux2 from the copy make puts in bin/.
	if _, err := os.Stat(filepath.Join(root, "bin", "flux2-src", "go.mod")); err != nil {
		testtool.Missing(t, "bin/flux2-src (make bin/flux2-src), which hack/tools/flux builds from: %v", err)
	}
	versions := make([]map[string]string, len(sharedBuilds))
	for i, b := range sharedBuilds {
		versions[i] = listVersions(t, filepath.Join(root, b.dir), b.pkgs)
	}
	for _, p := range sharedPairs {
		a, b := sharedBuilds[p[0]], sharedBuilds[p[1]]
		var differ []string
		for pkg, va := range versions[p[0]] {
			if vb, ok := versions[p[1]][pkg]; ok && va != vb {
				differ = append(differ, pkg+": "+va+" in "+a.name+", "+vb+" in "+b.name)
			}
		}
		sort.Strings(differ)
		if len(differ) > 0 {
			t.Errorf("%d packages %s and %s share resolve to other versions (each compiles twice; align %s/go.mod, see its comment), the first: %s",
				len(differ), a.name, b.name, b.dir, strings.Join(differ[:min(10, len(differ))], "; "))
		}
	}
}

// listVersions maps each non-standard package a build needs to its
// module's path@version (replacement applied), as go list -deps resolves
// it in dir with CI's -mod=readonly.
func listVersions(t *testing.T, dir string, pkgs []string) map[string]string {
	t.Helper()
	args := append([]string{"list", "-mod=readonly", "-deps", "-test", "-f",
		`{{if not .Standard}}{{.ImportPath}} {{with .Module}}{{if .Replace}}{{.Replace.Path}}@{{.Replace.Version}}{{else}}{{.Path}}@{{.Version}}{{end}}{{end}}{{end}}`}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			m[f[0]] = f[1]
		}
	}
	if len(m) == 0 {
		t.Fatalf("go list in %s listed no package", dir)
	}
	return m
}
