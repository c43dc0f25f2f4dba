package kustomize

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/manifest"
)

// repoRoot is the repository root: sources may not leave it.
var repoRoot, _ = filepath.Abs(filepath.Join("..", ".."))

// fixtures is the shared fixture folder.
var fixtures = filepath.Join(repoRoot, "testdata", "kustomizations")

// plainFixtures are the untemplated kustomizations compared with the
// kustomize binary; templatedFixtures are covered by golden files.
var (
	plainFixtures     = []string{"overlay", "shop", "with-components", "plain", "odd-names"}
	templatedFixtures = []string{"templated", "templated-suffix"}
)

// placement is the namespace of the Components the tests build.
const placement = "apps"

// newSpec returns a Component named demo in namespace apps whose file
// lies in dir, with the kustomization at path (relative to dir).
func newSpec(dir, path string, spec map[string]any) *manifest.Object {
	s := map[string]any{"source": map[string]any{"kustomization": map[string]any{"path": path}}}
	for k, v := range spec {
		s[k] = v
	}
	o := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component",
		"metadata": map[string]any{"name": "demo", "namespace": placement}, "spec": s})
	o.Source.File = filepath.Join(dir, "components.yaml")
	return o
}

// templatedSpec is newSpec with spec.source.kustomization.template set.
func templatedSpec(dir, path string, spec map[string]any) *manifest.Object {
	o := newSpec(dir, path, spec)
	o.Map["spec"].(map[string]any)["source"].(map[string]any)["kustomization"].(map[string]any)["template"] = true
	return o
}

func kustomizeBin(t testing.TB) string {
	t.Helper()
	return testtool.Path(t, "KUSTOMIZE_BIN", "kustomize")
}

// kustomizeBuild runs kustomize build on dir. A folder without a
// kustomization is copied with one listing its YAML files (what wavesmith
// does for such folders), so that kustomize can build it.
func kustomizeBuild(t *testing.T, dir string) []*manifest.Object {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); os.IsNotExist(err) {
		dir = withKustomization(t, dir)
	}
	objs, err := manifest.Decode("kustomize build", kustomizeBuildBytes(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// kustomizeBuildBytes returns the output of kustomize build dir.
func kustomizeBuildBytes(t *testing.T, dir string) []byte {
	t.Helper()
	cmd := exec.Command(kustomizeBin(t), "build", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	return out
}

// withKustomization copies the YAML files of dir, except hidden files and
// folders, into a temporary folder and adds a kustomization.yaml listing
// them.
func withKustomization(t *testing.T, dir string) string {
	t.Helper()
	tmp := t.TempDir()
	var res []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir // hidden folders are not listed
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if ext := filepath.Ext(p); strings.HasPrefix(d.Name(), ".") || (ext != ".yaml" && ext != ".yml") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, rel)), 0o755); err != nil {
			return err
		}
		res = append(res, filepath.ToSlash(rel))
		return os.WriteFile(filepath.Join(tmp, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(res)
	k := "resources:\n- " + strings.Join(res, "\n- ") + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp
}

func generate(t testing.TB, spec *manifest.Object, opts generators.Options) generators.Result {
	t.Helper()
	if opts.Root == "" {
		opts.Root = repoRoot
	}
	res, err := Generator{}.Generate(t.Context(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// keyed returns the objects by Kind.group/namespace/name, and the keys in
// output order.
func keyed(objs []*manifest.Object) (map[string]map[string]any, []string) {
	m := map[string]map[string]any{}
	var order []string
	for _, o := range objs {
		k := o.Key().String()
		m[k] = o.Map
		order = append(order, k)
	}
	return m, order
}

// TestEqualsKustomizeBuild builds every plain fixture with the kustomize
// binary and with the generator: the objects and their order must be the
// same, except for the namespace wavesmith gives namespaced objects that
// have none.
func TestEqualsKustomizeBuild(t *testing.T) {
	entries, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, n := range append(append([]string(nil), plainFixtures...), templatedFixtures...) {
		known[n] = true
	}
	for _, e := range entries {
		if e.IsDir() && !known[e.Name()] {
			t.Errorf("testdata/kustomizations/%s is in neither plainFixtures nor templatedFixtures: add it to one", e.Name())
		}
	}
	for _, name := range plainFixtures {
		t.Run(name, func(t *testing.T) {
			want, wantOrder := keyed(kustomizeBuild(t, filepath.Join(fixtures, name)))
			res := generate(t, newSpec(fixtures, name, nil), generators.Options{})
			got := map[string]map[string]any{}
			var gotOrder []string
			for _, o := range res.Objects {
				if o.Source.File != filepath.Join(fixtures, name) {
					t.Errorf("%s: Source.File = %q, want the folder", o.Key(), o.Source.File)
				}
				k := o.Key().String()
				if _, ok := want[k]; !ok && o.Namespace() == placement {
					// Namespace defaulting: kustomize left it empty.
					bare := o.DeepCopy()
					delete(bare.Map["metadata"].(map[string]any), "namespace")
					if bk := bare.Key().String(); want[bk] != nil {
						k = bk
						got[k] = bare.Map
						gotOrder = append(gotOrder, k)
						continue
					}
				}
				got[k] = o.Map
				gotOrder = append(gotOrder, k)
			}
			if len(want) < 2 {
				t.Fatalf("kustomize built only %d objects: the fixture is too small", len(want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("-kustomize build +wavesmith:\n%s", diff)
			}
			if diff := cmp.Diff(wantOrder, gotOrder); diff != "" {
				t.Errorf("order: -kustomize build +wavesmith:\n%s", diff)
			}
		})
	}
}

// TestBytesEqualKustomizeBuild: for every plain fixture with a
// kustomization, kustomize's output from the folder as wavesmith reads it
// (no templating, only what is reached) is byte for byte kustomize
// build's, before wavesmith decodes it.
func TestBytesEqualKustomizeBuild(t *testing.T) {
	for _, name := range plainFixtures {
		dir := filepath.Join(fixtures, name)
		if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err != nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			want := kustomizeBuildBytes(t, dir)
			j := &job{spec: newSpec(fixtures, name, nil), dir: dir}
			tr, _, templated, err := j.open()
			if err != nil || templated {
				t.Fatalf("open: templated %v, %v", templated, err)
			}
			if ok, err := j.ensureKustomization(tr); !ok || err != nil {
				t.Fatalf("ensureKustomization: %v, %v", ok, err)
			}
			if err := j.check(tr); err != nil {
				t.Fatal(err)
			}
			got, err := kustomize(t.Context(), treeFS{tr}, filepath.Join(tr.root, filepath.FromSlash(tr.top)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("-kustomize build +wavesmith:\n%s", diff)
			}
		})
	}
}

// TestFolderWithoutKustomization checks what the comparison above
// ignores: objects without a namespace get the placement namespace,
// cluster-scoped ones stay without, hidden and non-YAML files are left
// out.
func TestFolderWithoutKustomization(t *testing.T) {
	res := generate(t, newSpec(fixtures, "plain", nil), generators.Options{})
	var got []string
	for _, o := range res.Objects {
		got = append(got, o.Key().String())
	}
	sort.Strings(got)
	want := []string{
		"ClusterRole.rbac.authorization.k8s.io/reporter-nodes",
		"ConfigMap/apps/plain-settings",
		"Role.rbac.authorization.k8s.io/apps/reporter",
		"RoleBinding.rbac.authorization.k8s.io/apps/reporter",
		"ServiceAccount/reporting/reporter",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestPlacementNamespace: spec.namespace is the placement namespace.
func TestPlacementNamespace(t *testing.T) {
	res := generate(t, newSpec(fixtures, "plain", map[string]any{"namespace": "reports"}), generators.Options{})
	for _, o := range res.Objects {
		if o.Kind() == "ConfigMap" && o.Namespace() != "reports" {
			t.Errorf("%s: want namespace reports", o.Key())
		}
	}
}

// TestDeprecatedFieldsWarn: kustomize's deprecation notices become
// warnings naming the kustomization file and the Component.
func TestDeprecatedFieldsWarn(t *testing.T) {
	res := generate(t, newSpec(fixtures, "overlay", nil), generators.Options{})
	if len(res.Warnings) != 1 {
		t.Fatalf("want one warning (commonLabels), got %v", res.Warnings)
	}
	w := res.Warnings[0]
	if w.File != filepath.Join(fixtures, "overlay", "kustomization.yaml") || w.Object != "Component.wavesmith.io/apps/demo" || !strings.Contains(w.Message, "commonLabels") {
		t.Errorf("warning %+v", w)
	}
}

// TestConcurrentGenerate runs builds in parallel (kustomize's global state
// is behind a mutex; run with -race) and expects identical results.
func TestConcurrentGenerate(t *testing.T) {
	opts := generators.Options{Root: repoRoot, KubeVersion: "v1.33.2"}
	specs := []*manifest.Object{newSpec(fixtures, "overlay", nil), newSpec(fixtures, "with-components", nil), newSpec(fixtures, "plain", nil)}
	want := make([][]byte, len(specs))
	for i, s := range specs {
		want[i] = encode(generate(t, s, opts).Objects)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(specs))
	for range 4 {
		for i, s := range specs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := Generator{}.Generate(context.Background(), s, opts)
				switch {
				case err != nil:
					errs <- err.Error()
				case string(encode(res.Objects)) != string(want[i]):
					errs <- "concurrent build of " + s.Map["spec"].(map[string]any)["source"].(map[string]any)["kustomization"].(map[string]any)["path"].(string) + " differs"
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func BenchmarkGenerate(b *testing.B) {
	spec := newSpec(fixtures, "overlay", nil)
	opts := generators.Options{Root: repoRoot}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (Generator{}).Generate(context.Background(), spec, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCustomSchemaDoesNotLeak: a kustomization with its own OpenAPI
// schema leaves kustomize's global schema as it found it.
func TestCustomSchemaDoesNotLeak(t *testing.T) {
	before := encode(generate(t, newSpec(fixtures, "overlay", nil), generators.Options{}).Objects)
	root := t.TempDir()
	for p, s := range map[string]string{
		"custom/kustomization.yaml": "openapi:\n  path: schema.json\nresources: [cm.yaml]\n",
		"custom/schema.json":        `{"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}, "definitions": {}}`,
		"custom/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	generate(t, newSpec(root, "custom", nil), generators.Options{Root: root})
	if schemaDirty() {
		t.Errorf("the custom schema is still set after the build")
	}
	if after := encode(generate(t, newSpec(fixtures, "overlay", nil), generators.Options{}).Objects); string(after) != string(before) {
		t.Errorf("a build after the custom schema differs")
	}
}
