package helm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/manifest"
)

var root, _ = filepath.Abs(filepath.Join("..", ".."))

// spec returns a Component read from <root>/testdata/components.yaml (the
// file need not exist: relative paths resolve from its folder).
func spec(t testing.TB, s map[string]any) *manifest.Object {
	if t != nil {
		t.Helper()
	}
	o := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component",
		"metadata": map[string]any{"name": "rel", "namespace": "apps"}, "spec": s})
	o.Source.File = filepath.Join(root, "testdata", "components.yaml")
	return o
}

func generate(t testing.TB, s map[string]any) (generators.Result, error) {
	t.Helper()
	return Generator{}.Generate(context.Background(), spec(t, s), generators.Options{Root: root})
}

func helmBin(t *testing.T) string {
	t.Helper()
	return testtool.Path(t, "HELM_BIN", "helm")
}

// withoutAdditions removes what wavesmith adds to a chart's objects: its
// own and Argo CD's annotations, and the namespace it gives objects that
// helm template leaves without one.
func withoutAdditions(objs []*manifest.Object) map[string]any {
	out := map[string]any{}
	for _, o := range objs {
		for k := range o.Annotations() {
			if strings.HasPrefix(k, inventory.Prefix) || strings.HasPrefix(k, "argocd.argoproj.io/") {
				o.DeleteAnnotation(k)
			}
		}
		meta := o.Map["metadata"].(map[string]any)
		delete(meta, "namespace")
		out[o.Key().String()] = o.Map
	}
	return out
}

// runsOnInstall drops the hooks that no GitOps engine runs (neither on
// install nor on delete), which wavesmith leaves out.
func runsOnInstall(objs []*manifest.Object) []*manifest.Object {
	var out []*manifest.Object
	for _, o := range objs {
		if h, ok := o.Annotation("helm.sh/hook"); ok && !strings.Contains(h, "-install") && !strings.Contains(h, "-delete") {
			continue
		}
		out = append(out, o)
	}
	return out
}

// helmTemplate runs the real helm template.
func helmTemplate(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(helmBin(t), append([]string{"template"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

func chartSpec(t testing.TB, name string) *manifest.Object {
	return spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/" + name}}})
}

// TestEqualsHelmTemplate compares the generator with the real helm CLI
// (same version as the SDK) on every test chart, object by object.
func TestEqualsHelmTemplate(t *testing.T) {
	charts, _ := filepath.Glob(filepath.Join(root, "testdata", "charts", "*"))
	if len(charts) < 9 {
		t.Fatalf("want at least 9 test charts, found %d", len(charts))
	}
	for _, dir := range charts {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			want, err := manifest.Decode("helm", helmTemplate(t, "rel", dir, "-n", "apps", "--include-crds", "--skip-tests", "--kube-version", "v1.33.0"))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range want { // as helm install reads its output
				v, err := o.YAML11()
				if err != nil {
					t.Fatal(err)
				}
				o.Map = v.(map[string]any)
			}
			res, err := Generator{}.Generate(context.Background(), chartSpec(t, name), generators.Options{Root: root, KubeVersion: "v1.33.0"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Objects) == 0 {
				t.Fatal("no objects")
			}
			if diff := cmp.Diff(withoutAdditions(runsOnInstall(want)), withoutAdditions(res.Objects)); diff != "" {
				t.Errorf("-helm template +wavesmith:\n%s", diff)
			}
		})
	}
}

// TestTextEqualsHelmTemplate compares, byte for byte, what the rendering
// stage gives (CRDs, manifests, hooks, in order) with helm template's
// output, on every test chart.
func TestTextEqualsHelmTemplate(t *testing.T) {
	charts, _ := filepath.Glob(filepath.Join(root, "testdata", "charts", "*"))
	caps, err := capabilities(generators.Options{KubeVersion: "v1.33.0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range charts {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := helmTemplate(t, "rel", dir, "-n", "apps", "--include-crds", "--kube-version", "v1.33.0")
			r, err := renderChart(dir, nil, map[string]any{}, chartutil.ReleaseOptions{Name: "rel", Namespace: "apps", Revision: 1, IsInstall: true}, caps, newProbe(t.Context()))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, crd := range r.chart.CRDObjects() {
				fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", crd.Filename, crd.File.Data)
			}
			for _, m := range r.manifests {
				fmt.Fprintf(&b, "---\n# Source: %s\n%s", m.Name, m.Content)
			}
			got := strings.TrimSpace(b.String()) + "\n"
			for _, h := range r.hooks {
				got += fmt.Sprintf("---\n# Source: %s\n%s", h.Path, h.Manifest)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("-helm template +wavesmith:\n%s", diff)
			}
		})
	}
}

func TestHooksAndCRDs(t *testing.T) {
	// Hooks and CRDs are placed relative to the Component's wave, which
	// the engine's wave plan decides: offsets, never wave annotations.
	res, err := Generator{}.Generate(context.Background(), spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/operator"}}}), generators.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Apply, Purge, Reconcile, Update, Delete, Hook, Namespace string }
	got := map[string]row{}
	for _, o := range res.Objects {
		a := func(k string) string { v, _ := o.Annotation(k); return v }
		apply, purge := offsetText(res, o)
		got[o.Key().String()] = row{apply, purge, a(inventory.ReconcilePolicy), a(inventory.UpdatePolicy), a(inventory.DeletePolicy), a(inventory.Hook), o.Namespace()}
		for k := range o.Annotations() {
			if strings.HasPrefix(k, "argocd.argoproj.io/") {
				t.Errorf("%s: the generator writes no engine annotation (%s); dialects do", o.Key(), k)
			}
		}
	}
	want := map[string]row{
		// crds/: the earliest wave of the Component, never deleted
		"CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com": {Apply: "-106", Delete: "orphan"},
		// pre-install, weight -5, hook-succeeded: before everything, purged
		// after the wave before the Component's
		"Job.batch/apps/rel-migrate": {Apply: "-106", Purge: "-1", Reconcile: "once", Hook: "pre-install", Namespace: "apps"},
		// post-install, default delete policy before-hook-creation: recreated
		"Job.batch/apps/rel-smoke": {Apply: "101", Reconcile: "once", Update: "recreate", Hook: "post-install", Namespace: "apps"},
		// resource-policy keep: orphaned
		"Widget.example.com/apps/first":                      {Delete: "orphan", Namespace: "apps"},
		"Deployment.apps/apps/rel-operator":                  {Namespace: "apps"},
		"ServiceAccount/apps/rel-operator":                   {Namespace: "apps"},
		"ClusterRole.rbac.authorization.k8s.io/rel-operator": {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "Pod/rel-test ([test])") {
		t.Errorf("the test hook is left out with a warning: %v", res.Warnings)
	}
}

func TestValuesAndCapabilities(t *testing.T) {
	res, err := Generator{}.Generate(context.Background(), spec(t, map[string]any{
		"source":      map[string]any{"chart": map[string]any{"path": "charts/webapp"}},
		"valuesFiles": []any{"values/webapp-prod.yaml"},
		"values":      map[string]any{"image": map[string]any{"tag": "9.9.9"}},
		"name":        "shop", "namespace": "prod",
	}), generators.Options{Root: root, KubeVersion: "v1.20.0", APIVersions: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]*manifest.Object{}
	for _, o := range res.Objects {
		byKind[o.Kind()] = o
		if o.Namespace() != "prod" {
			t.Errorf("%s in namespace %q, want the placement namespace prod", o.Key(), o.Namespace())
		}
	}
	dep := byKind["Deployment"]
	if dep == nil || dep.Name() != "shop-webapp" {
		t.Fatalf("release name = placement name: %v", dep)
	}
	img := dep.Map["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]
	if img != "nginx:9.9.9" {
		t.Errorf("spec.values over values files over chart values: image %v", img)
	}
	if _, ok := byKind["Ingress"]; ok {
		t.Errorf("the values file disables the Ingress")
	}
}

func TestErrors(t *testing.T) {
	src := func(p string) map[string]any {
		return map[string]any{"source": map[string]any{"chart": map[string]any{"path": p}}}
	}
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   error
		text   []string
	}{
		"MissingChart": {"a chart that does not exist", src("charts/nope"), manifest.ErrInvalid, []string{"spec.source.chart.path", "does not exist"}},
		"OutsideRoot":  {"a chart path leaving the root", src("../../../etc"), fsroot.ErrOutsideRoot, []string{"spec.source.chart.path"}},
		"BrokenTemplate": {"a template that fails names the template file and line",
			src("bad-charts/broken"), ErrChart, []string{"broken/templates/cm.yaml:4"}},
		"Schema": {"values failing the schema name the field",
			map[string]any{"source": src("charts/schema")["source"], "values": map[string]any{"database": map[string]any{"port": "x"}}}, ErrChart, []string{"/database/port", "spec.values"}},
		"InvalidYAML":      {"a chart rendering invalid YAML", src("bad-charts/invalid-yaml"), ErrChart, []string{"YAML parse error", "invalid-yaml/templates/cm.yaml"}},
		"NativeAnnotation": {"a chart setting wavesmith.io annotations", src("bad-charts/native"), manifest.ErrInvalid, []string{"wavesmith.io/apply-order", "native/templates/cm.yaml"}},
		"StrictLeftOut": {"with strictHooks, a hook no engine runs is an error naming the first",
			map[string]any{"source": src("charts/upgrade-hooks")["source"], "strictHooks": true}, ErrHook, []string{"upgrade-hooks/templates/hooks.yaml", "Job.batch/rel-post-upgrade", "metadata.annotations.helm.sh/hook", "[post-upgrade]", "no GitOps engine runs it"}},
		"StrictHookFailed": {"with strictHooks, the hook-failed delete policy is an error",
			map[string]any{"source": src("charts/delete-hooks")["source"], "strictHooks": true}, ErrHook, []string{"delete-hooks/templates/job.yaml", "ConfigMap/rel-marker", "metadata.annotations.helm.sh/hook-delete-policy", "hook-failed"}},
		"ValuesOutside": {"a values file outside the root",
			map[string]any{"source": src("charts/webapp")["source"], "valuesFiles": []any{"../../../../etc/passwd"}}, fsroot.ErrOutsideRoot, []string{"spec.valuesFiles[0]"}},
		"UnknownField": {"unknown spec fields", map[string]any{"source": src("charts/webapp")["source"], "valuez": map[string]any{}}, manifest.ErrInvalid, []string{"spec.valuez"}},
		"TwoSources":   {"both sources", map[string]any{"source": map[string]any{"chart": map[string]any{"path": "a"}, "kustomization": map[string]any{"path": "b"}}}, manifest.ErrInvalid, []string{"exactly one"}},
		"LibraryChart": {"a library chart is not installable, as in helm template",
			src("charts/deps/charts/common"), ErrChart, []string{"spec.source.chart.path", "library charts are not installable"}},
		"MissingDependency": {"a repository dependency missing from charts/ and from the lock names the command that fetches it",
			src("bad-charts/missing-dep"), ErrNotFetched, []string{"spec.source.chart.path", "dependency redis of Chart.yaml", "run wavesmith fetch"}},
		"ReleaseName": {"a release name Helm refuses names spec.name",
			map[string]any{"source": src("charts/webapp")["source"], "name": "Bad_Name"}, ErrChart, []string{"spec.name", `release name "Bad_Name"`}},
		"KubeVersion": {"a chart requiring a newer Kubernetes than --kube-version",
			src("charts/kube-version"), ErrChart, []string{"spec.source.chart.path", "requires kubeVersion >=1.23.0-0, not v1.20.0"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Generator{}.Generate(context.Background(), spec(t, tc.spec), generators.Options{Root: root, KubeVersion: "v1.20.0"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.want, err)
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("%s: want a *manifest.Error, got %T", tc.reason, err)
			}
			for _, s := range tc.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: %q lacks %q", tc.reason, err, s)
				}
			}
		})
	}
}

func BenchmarkGenerateWebapp(b *testing.B) {
	s := spec(b, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/webapp"}}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (Generator{}).Generate(context.Background(), s, generators.Options{Root: root}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDependencies checks, beyond the comparison with helm template, what
// the deps chart is there to show.
func TestDependencies(t *testing.T) {
	res, err := generate(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/deps"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	var app *manifest.Object
	for _, o := range res.Objects {
		got[o.Key().String()] = true
		if o.Name() == "rel-app" {
			app = o
		}
	}
	want := map[string]bool{
		// crds/ and the CRD template behind crds.install
		"CustomResourceDefinition.apiextensions.k8s.io/gadgets.example.com":   true,
		"CustomResourceDefinition.apiextensions.k8s.io/sprockets.example.com": true,
		// crds/ of an enabled subchart (not those of the disabled cache)
		"CustomResourceDefinition.apiextensions.k8s.io/monitors.example.com": true,
		"ConfigMap/apps/rel-app": true,
		// enabled by the monitoring tag
		"ConfigMap/apps/rel-monitor": true,
		// the packaged subchart
		"Service/apps/rel-db": true,
		// one subchart under two aliases, each with its own values
		"Deployment.apps/apps/rel-worker-a": true,
		"Deployment.apps/apps/rel-worker-b": true,
		// not rel-cache (its condition is false, over its true tag), not
		// rel-extras (its only tag is false), not the library chart's
		// template
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	data, _ := app.Map["data"].(map[string]any)
	wantData := map[string]any{
		"dbPort": "5432", "dbName": "shop", // import-values: data (exports.data)
		"dbService": `{"name":"from-parent","port":5432,"protocol":"TCP"}`, // child/parent form; the parent's own value wins
		"subcharts": "common,db,monitor,worker-a,worker-b",
		"queues":    "fast,slow",
	}
	if diff := cmp.Diff(wantData, data); diff != "" {
		t.Errorf("imported values: -want +got:\n%s", diff)
	}
}

// TestFinalNewline: a template ending inside a block scalar keeps the
// final line break helm template prints.
func TestFinalNewline(t *testing.T) {
	res, err := generate(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/blocks"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, o := range res.Objects {
		for _, f := range []string{"data", "stringData"} {
			if d, ok := o.Map[f].(map[string]any); ok {
				for k, v := range d {
					got[o.Name()+"/"+k] = v
				}
			}
		}
	}
	want := map[string]any{
		"rel-script/run.sh":   "#!/bin/sh\necho hello\n",
		"rel-tls/tls.key":     "-----BEGIN TEST KEY-----\nbm90IGEgcmVhbCBrZXksIG9ubHkgdGV4dCBzaGFwZWQgbGlrZSBvbmU=\n-----END TEST KEY-----\n",
		"rel-chomping/strip":  "stripped",
		"rel-chomping/folded": "folded text\n",
		"rel-chomping/keep":   "kept\n",
		"rel-hook/message":    "installed\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestUpgradeOnlyHooks: hooks that do not run on install are left out
// with a warning before their weight or delete policy is looked at.
func TestUpgradeOnlyHooks(t *testing.T) {
	res, err := generate(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/upgrade-hooks"}}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range res.Objects {
		keys = append(keys, o.Key().String())
	}
	if diff := cmp.Diff([]string{"ConfigMap/apps/rel-app"}, keys); diff != "" {
		t.Errorf("objects: -want +got:\n%s", diff)
	}
	// One warning for the chart, naming each hook left out in file order.
	dir := filepath.Join(root, "testdata", "charts", "upgrade-hooks", "templates", "hooks.yaml")
	var warned []string
	for _, w := range res.Warnings {
		warned = append(warned, w.Object+" "+w.Field+": "+w.Message)
	}
	want := []string{"Component.wavesmith.io/apps/rel spec.source.chart.path: left out, since no GitOps engine runs them (spec.strictHooks: true makes this an error): " +
		dir + " Job.batch/rel-post-upgrade ([post-upgrade]); " +
		dir + " Job.batch/rel-pre-upgrade ([pre-upgrade]); " +
		dir + " Pod/rel-rollback ([pre-rollback post-rollback]); " +
		dir + " Pod/rel-test ([test])"}
	if diff := cmp.Diff(want, warned); diff != "" {
		t.Errorf("warnings: -want +got:\n%s", diff)
	}
}

// TestChartSymlinkLeak: a chart file that is a symlink out of the
// repository would put a host file into a ConfigMap through .Files.Get;
// the render refuses the chart, naming the file.
func TestChartSymlinkLeak(t *testing.T) {
	repo := t.TempDir()
	chart := filepath.Join(repo, "chart")
	for p, c := range map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: leak\nversion: 0.1.0\n",
		"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leak\ndata:\n  host: {{ .Files.Get \"files/leak\" | quote }}\n",
		"files/.placeholder": "",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(chart, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(chart, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(chart, "files", "leak")); err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Decode(filepath.Join(repo, "c.yaml"), []byte("apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: c, namespace: ns}\nspec:\n  source: {chart: {path: chart}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Generator{}.Generate(context.Background(), objs[0], generators.Options{Root: repo})
	if err == nil {
		t.Fatalf("a symlink out of the repository was read: %v", res.Objects[0].Map)
	}
	if !errors.Is(err, fsroot.ErrOutsideRoot) || !strings.Contains(err.Error(), "leak") {
		t.Errorf("want ErrOutsideRoot naming the file, got %v", err)
	}
}

// TestOutputReadAsYAML11: a chart's output is read as helm install reads
// it (sigs.k8s.io/yaml): "suspend: off" unquoted is the boolean false,
// which the API server needs; a quoted "on" stays a string. Compared with
// the real helm template's output read the same way.
func TestOutputReadAsYAML11(t *testing.T) {
	res, err := generate(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/yaml11-output"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 1 {
		t.Fatalf("%d objects, want the CronJob", len(res.Objects))
	}
	o := res.Objects[0]
	spec, _ := o.Map["spec"].(map[string]any)
	if diff := cmp.Diff(false, spec["suspend"]); diff != "" {
		t.Errorf("spec.suspend (-want +got):\n%s", diff)
	}
	if got := o.Labels()["quoted"]; got != "on" {
		t.Errorf("the quoted label is %#v, want the string on", got)
	}
	out := helmTemplate(t, "rel", filepath.Join(root, "testdata", "charts", "yaml11-output"))
	var fromHelm map[string]any
	if err := sigsyaml.Unmarshal(out, &fromHelm); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromHelm["spec"].(map[string]any)["suspend"], spec["suspend"]); diff != "" {
		t.Errorf("spec.suspend differs from helm template's as sigs.k8s.io/yaml reads it (-helm +wavesmith):\n%s", diff)
	}
}

// TestDeleteHooks: pre-delete and post-delete hooks are kept with the
// native marker, in the Component's wave whatever their weight (no sync
// applies them); a hook running on install and on delete is placed as an
// install hook; the hook-failed delete policy is left out with the
// chart's one warning.
func TestDeleteHooks(t *testing.T) {
	res, err := Generator{}.Generate(context.Background(), spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/delete-hooks"}}}), generators.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Apply, Purge, Reconcile, Update, Hook string }
	got := map[string]row{}
	for _, o := range res.Objects {
		a := func(k string) string { v, _ := o.Annotation(k); return v }
		apply, purge := offsetText(res, o)
		got[o.Key().String()] = row{apply, purge, a(inventory.ReconcilePolicy), a(inventory.UpdatePolicy), a(inventory.Hook)}
	}
	want := map[string]row{
		"Job.batch/apps/rel-cleanup":  {Apply: "0", Purge: "201", Reconcile: "once", Hook: "pre-delete"},
		"Job.batch/apps/rel-farewell": {Apply: "0", Reconcile: "once", Update: "recreate", Hook: "post-delete"},
		"ConfigMap/apps/rel-marker":   {Apply: "-101", Reconcile: "once", Hook: "pre-delete,pre-install"},
		"ConfigMap/apps/rel-app":      {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "ConfigMap/rel-marker (hook-delete-policy hook-failed)") {
		t.Errorf("want one warning naming the hook-failed policy, got %v", res.Warnings)
	}
}

// offsetText returns an object's offsets from its Component's wave as
// text ("" when it has none), and fails on a wave annotation: the
// generator knows no wave, the engine's plan makes offsets absolute.
func offsetText(res generators.Result, o *manifest.Object) (apply, purge string) {
	for _, k := range []string{inventory.ApplyOrder, inventory.PurgeOrder} {
		if v, ok := o.Annotation(k); ok {
			return "annotation " + k + "=" + v, ""
		}
	}
	off, ok := res.Offsets[o]
	if !ok {
		return "", ""
	}
	apply = strconv.Itoa(off.Apply)
	if off.Purge != nil {
		purge = strconv.Itoa(*off.Purge)
	}
	return apply, purge
}
