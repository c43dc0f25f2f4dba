package status

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/wavesmith/wavesmith/manifest"
)

// TestInstallManifestsAgree renders kustomize/status-controller with
// kustomize and charts/wavesmith with Helm (createNamespace, which the
// kustomization always has) and requires the same objects.
func TestInstallManifestsAgree(t *testing.T) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("..", "..", "kustomize", "status-controller"))
	if err != nil {
		t.Fatalf("kustomize: %v", err)
	}
	kyaml, err := rm.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	fromKustomize := objectsOf(t, "kustomize", string(kyaml))
	fromHelm := renderChart(t, "wavesmith-system", map[string]any{"createNamespace": true})

	if len(fromKustomize) < 8 {
		t.Fatalf("kustomize gave only %d objects", len(fromKustomize))
	}
	if diff := cmp.Diff(fromKustomize, fromHelm); diff != "" {
		t.Errorf("-kustomize +helm:\n%s", diff)
	}
}

// TestChartValues checks what the chart's values change: the release
// namespace, the Namespace object only when asked, the image.
func TestChartValues(t *testing.T) {
	type want struct {
		namespaceObject bool
		image, policy   string
		pullSecrets     any
	}
	cases := map[string]struct {
		reason string
		values map[string]any
		want   want
	}{
		"Defaults": {
			reason: "helm install -n NS --create-namespace owns the namespace; the image is the chart's appVersion",
			want:   want{image: "ghcr.io/wavesmith/wavesmith-status:0.1.0", policy: "IfNotPresent"},
		},
		"CreateNamespace": {
			reason: "createNamespace adds the release namespace as an object",
			values: map[string]any{"createNamespace": true},
			want:   want{namespaceObject: true, image: "ghcr.io/wavesmith/wavesmith-status:0.1.0", policy: "IfNotPresent"},
		},
		"TagAndRegistry": {
			reason: "repository and tag replace the defaults",
			values: map[string]any{"image": map[string]any{"repository": "registry.example.com/ws", "tag": "1.2.3", "pullPolicy": "Always"}},
			want:   want{image: "registry.example.com/ws:1.2.3", policy: "Always"},
		},
		"Digest": {
			reason: "a digest wins over the tag",
			values: map[string]any{"image": map[string]any{"tag": "1.2.3", "digest": "sha256:" + strings.Repeat("ab", 32)}},
			want:   want{image: "ghcr.io/wavesmith/wavesmith-status@sha256:" + strings.Repeat("ab", 32), policy: "IfNotPresent"},
		},
		"PullSecrets": {
			reason: "imagePullSecrets reach the pod",
			values: map[string]any{"imagePullSecrets": []any{map[string]any{"name": "regcred"}}},
			want:   want{image: "ghcr.io/wavesmith/wavesmith-status:0.1.0", policy: "IfNotPresent", pullSecrets: []any{map[string]any{"name": "regcred"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := renderChart(t, "ops", tc.values)
			deploy, ok := objs["Deployment.apps/ops/wavesmith-status"].(map[string]any)
			if !ok {
				t.Fatalf("%s: no Deployment ops/wavesmith-status in %v", tc.reason, keys(objs))
			}
			pod := dig(deploy, "spec", "template", "spec").(map[string]any)
			container := pod["containers"].([]any)[0].(map[string]any)
			_, ns := objs["Namespace/ops"]
			got := want{namespaceObject: ns, image: container["image"].(string), policy: container["imagePullPolicy"].(string), pullSecrets: pod["imagePullSecrets"]}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
			for key, o := range objs {
				if ns, _ := dig(o.(map[string]any), "metadata", "namespace").(string); ns != "" && ns != "ops" {
					t.Errorf("%s is in namespace %q, not the release's", key, ns)
				}
			}
		})
	}
}

// renderChart renders charts/wavesmith as helm install -n namespace does,
// CRDs included, and returns its objects by key.
func renderChart(t *testing.T, namespace string, values map[string]any) map[string]any {
	t.Helper()
	chart, err := loader.Load(filepath.Join("..", "..", "charts", "wavesmith"))
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	if values == nil {
		values = map[string]any{}
	}
	vals, err := chartutil.ToRenderValues(chart, values, chartutil.ReleaseOptions{Name: "wavesmith", Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := engine.Render(chart, vals)
	if err != nil {
		t.Fatalf("helm: %v", err)
	}
	var docs []string
	for name, s := range rendered {
		if strings.HasSuffix(name, ".yaml") && strings.TrimSpace(s) != "" {
			docs = append(docs, s)
		}
	}
	sort.Strings(docs)
	for _, crd := range chart.CRDObjects() {
		docs = append(docs, string(crd.File.Data))
	}
	return objectsOf(t, "helm", strings.Join(docs, "\n---\n"))
}

func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func objectsOf(t *testing.T, name, stream string) map[string]any {
	t.Helper()
	objs, err := manifest.Decode(name, []byte(stream))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m := map[string]any{}
	for _, o := range objs {
		m[o.Key().String()] = manifest.DeepCopyValue(o.Map)
	}
	return m
}

// TestShardedInstall renders kustomize/status-controller-sharded, the
// install example of docs/status-controller.md: the base's objects, plus a
// second Deployment; each Deployment has one --watch-label-selector, the
// main instance's and shard1's, and their selectors name distinct Leases
// and distinct pods.
func TestShardedInstall(t *testing.T) {
	build := func(dir string) map[string]any {
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		rm, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("..", "..", "kustomize", dir))
		if err != nil {
			t.Fatalf("kustomize %s: %v", dir, err)
		}
		y, err := rm.AsYaml()
		if err != nil {
			t.Fatal(err)
		}
		return objectsOf(t, dir, string(y))
	}
	base, sharded := build("status-controller"), build("status-controller-sharded")
	type deployment struct{ Selector, Lease, Pods string }
	got := map[string]deployment{}
	for key, o := range sharded {
		m := o.(map[string]any)
		if m["kind"] != "Deployment" {
			if diff := cmp.Diff(base[key], o); diff != "" {
				t.Errorf("%s differs from the base's: %s", key, diff)
			}
			continue
		}
		var d deployment
		containers, _ := dig(m, "spec", "template", "spec", "containers").([]any)
		for _, a := range dig(containers[0].(map[string]any), "args").([]any) {
			if v, ok := strings.CutPrefix(a.(string), "--watch-label-selector="); ok {
				if d.Selector != "" {
					t.Errorf("%s: --watch-label-selector given twice", key)
				}
				d.Selector = v
			}
		}
		sel, err := labels.Parse(d.Selector)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		d.Lease = LeaseName(sel)
		d.Pods = fmt.Sprint(dig(m, "spec", "selector", "matchLabels", "app.kubernetes.io/name"))
		if tl := fmt.Sprint(dig(m, "spec", "template", "metadata", "labels", "app.kubernetes.io/name")); tl != d.Pods {
			t.Errorf("%s: template label %s, selector %s", key, tl, d.Pods)
		}
		got[fmt.Sprint(dig(m, "metadata", "name"))] = d
	}
	want := map[string]deployment{
		"wavesmith-status":        {"!" + ShardKey, DefaultLeaderElectionID, "wavesmith-status"},
		"wavesmith-status-shard1": {ShardKey + "=shard1", "wavesmith-status-shard1.wavesmith.io", "wavesmith-status-shard1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Deployments -want +got:\n%s", diff)
	}
	if len(sharded) != len(base)+1 {
		t.Errorf("%d objects, want the base's %d and one Deployment", len(sharded), len(base))
	}
}

// TestChartShardsAgree: the chart's shards value gives what the sharded
// kustomize install gives (the main instance's selector, one Deployment
// per shard with its own selector and pods), and refuses a shard name
// that cannot name a Deployment.
func TestChartShardsAgree(t *testing.T) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("..", "..", "kustomize", "status-controller-sharded"))
	if err != nil {
		t.Fatalf("kustomize: %v", err)
	}
	y, err := rm.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	fromKustomize := objectsOf(t, "kustomize", string(y))
	fromHelm := renderChart(t, "wavesmith-system", map[string]any{"createNamespace": true, "shards": []any{"shard1"}})
	if diff := cmp.Diff(fromKustomize, fromHelm); diff != "" {
		t.Errorf("-kustomize +helm:\n%s", diff)
	}
	// A control: without shards the chart is the unsharded install.
	if plain := renderChart(t, "wavesmith-system", map[string]any{"createNamespace": true}); cmp.Equal(fromKustomize, plain) {
		t.Error("the chart without shards equals the sharded install: the comparison proves nothing")
	}

	chart, err := loader.Load(filepath.Join("..", "..", "charts", "wavesmith"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"Shard1", "-a", "a_b", strings.Repeat("a", 47)} {
		vals, err := chartutil.ToRenderValues(chart, map[string]any{"shards": []any{bad}}, chartutil.ReleaseOptions{Name: "wavesmith", Namespace: "ops", IsInstall: true}, chartutil.DefaultCapabilities)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := engine.Render(chart, vals); err == nil || !strings.Contains(err.Error(), "is not a shard name") {
			t.Errorf("shards: [%q]: want a refusal naming the shard, got %v", bad, err)
		}
	}
}

// TestBenchUsesInstalledLimit: the status benchmark runs under the memory
// limit the install ships (its GOMEMLIMIT is 90% of it), so that what it
// measures is what the install allows.
func TestBenchUsesInstalledLimit(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "kustomize", "status-controller", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Decode("deployment.yaml", b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("deployment.yaml: %d objects, %v", len(objs), err)
	}
	containers, _, _ := unstructured.NestedSlice(objs[0].Map, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%d containers, want 1", len(containers))
	}
	limit, _, _ := unstructured.NestedString(containers[0].(map[string]any), "resources", "limits", "memory")
	q, err := resource.ParseQuantity(limit)
	if err != nil {
		t.Fatalf("limits.memory %q: %v", limit, err)
	}
	if q.Value() != benchLimit {
		t.Errorf("the install's memory limit is %s (%d bytes); the benchmark's benchLimit is %d: make them equal", limit, q.Value(), benchLimit)
	}
}
