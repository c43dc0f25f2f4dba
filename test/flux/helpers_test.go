package flux

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	ssautils "github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/test/testkit"
)

// repoRoot is the wavesmith checkout holding this module.
func repoRoot(t testing.TB) string {
	t.Helper()
	testkit.Inputs(t)
	return testkit.RepoRoot(t)
}

// tool returns the file or folder an environment variable names (make
// test builds them all and exports their paths); a missing one skips the
// test, or fails it under make (testkit.Tool).
func tool(t testing.TB, env string) string {
	t.Helper()
	testkit.Short(t)
	testkit.Inputs(t)
	p := os.Getenv(env)
	if p == "" {
		testkit.Missing(t, "%s is not set", env)
	}
	if _, err := os.Stat(p); err != nil {
		testkit.Missing(t, "%s=%s: %v", env, p, err)
	}
	return p
}

// run runs a command in dir and returns its stdout; a failure fails t.
func run(t testing.TB, dir string, name string, args ...string) []byte {
	t.Helper()
	out, stderr, err := runErr(dir, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr)
	}
	return out
}

func runErr(dir string, name string, args ...string) ([]byte, []byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	return out.Bytes(), stderr.Bytes(), err
}

// copyDir copies the regular files under src to dst.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
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

// ksFile is the part of a generated Flux Kustomization the tests read.
type ksFile struct {
	File     string
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Path      string `json:"path"`
		DependsOn []struct {
			Name string `json:"name"`
		} `json:"dependsOn"`
		Wait  bool `json:"wait"`
		Prune bool `json:"prune"`
	} `json:"spec"`
}

// wave is the wave a generated Kustomization applies, from its file name
// _flux/wave-<n>.yaml (wave-m<n>.yaml for -n).
func (k ksFile) wave(t testing.TB) int {
	t.Helper()
	label, ok := strings.CutPrefix(strings.TrimSuffix(filepath.Base(k.File), ".yaml"), "wave-")
	digits, neg := strings.CutPrefix(label, "m")
	n, err := strconv.Atoi(digits)
	if !ok || err != nil || n < 0 {
		t.Fatalf("%s: want a file named wave-<n>.yaml or wave-m<n>.yaml", k.File)
	}
	if neg {
		n = -n
	}
	return n
}

// waveFolder is the folder of a tree (deploy) that Kustomization k
// applies: _flux/wave-<n>, named like its file.
func waveFolder(deploy string, k ksFile) string {
	return filepath.Join(deploy, "_flux", strings.TrimSuffix(filepath.Base(k.File), ".yaml"))
}

// kustomizations reads DIR/_flux/wave-*.yaml and returns them in an order
// that respects dependsOn (failing on a dependency that does not exist
// or a cycle), the order kustomize-controller reconciles them in.
func kustomizations(t testing.TB, dir string) []ksFile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "_flux", "wave-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Kustomizations in %s/_flux: %v", dir, err)
	}
	byName := map[string]ksFile{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var k ksFile
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		k.File = f
		byName[k.Metadata.Name] = k
	}
	var order []ksFile
	done := map[string]bool{}
	var visit func(name string, stack []string)
	visit = func(name string, stack []string) {
		if done[name] {
			return
		}
		for _, s := range stack {
			if s == name {
				t.Fatalf("dependency cycle: %v", append(stack, name))
			}
		}
		k, ok := byName[name]
		if !ok {
			t.Fatalf("%s depends on Kustomization %s, which is not generated", stack[len(stack)-1], name)
		}
		for _, d := range k.Spec.DependsOn {
			visit(d.Name, append(stack, name))
		}
		done[name] = true
		order = append(order, k)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		visit(n, nil)
	}
	return order
}

// build runs kustomize over a wave folder as kustomize-controller does:
// plugins disabled, load restrictions none.
func build(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	k := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: kustypes.LoadRestrictionsNone, PluginConfig: kustypes.DisabledPluginConfig()})
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	b, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ssautils.ReadObjects(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// ids formats objects as Kind/namespace/name, sorted.
func ids(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(out)
	return out
}

// waitFor polls check until it reports nothing; on timeout the test fails
// with the last report.
func waitFor(t *testing.T, ctx context.Context, timeout time.Duration, what string, check func() string) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		p := check()
		if p == "" {
			t.Logf("%s: after %s", what, time.Since(start).Round(10*time.Millisecond))
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting %s for %s: still:\n%s", timeout, what, p)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func writeFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
