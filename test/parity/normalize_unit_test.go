package parity

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNormalisations checks that the normalisations undo only what they
// name: wavesmith's documented additions disappear, any other difference
// stays visible.
func TestNormalisations(t *testing.T) {
	type args struct {
		kind      string // chart or kustomization
		tool, ws  string // YAML streams
		namespace string
	}
	type want struct {
		equal bool
		// report holds lines the report must contain when not equal.
		report []string
		err    string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"AdditionsDropped": {
			reason: "recommended labels, wavesmith.io/*, Argo CD and Flux annotations and the Component are what wavesmith adds",
			args: args{kind: "chart", namespace: "apps",
				tool: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
				ws: `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: apps
  labels: {app.kubernetes.io/name: c, app.kubernetes.io/instance: rel, app.kubernetes.io/component: configmap, app.kubernetes.io/part-of: rel, app.kubernetes.io/managed-by: wavesmith}
  annotations: {wavesmith.io/apply-order: "0", argocd.argoproj.io/sync-wave: "0", kustomize.toolkit.fluxcd.io/ssa: Merge}
---
apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata: {name: rel, namespace: apps}
`},
			want: want{equal: true},
		},
		"ToolLabelCompared": {
			reason: "a recommended label the tool's object has must be equal",
			args: args{kind: "chart", namespace: "apps",
				tool: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {app.kubernetes.io/managed-by: Helm}}\n",
				ws:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: apps, labels: {app.kubernetes.io/managed-by: wavesmith}}\n"},
			want: want{report: []string{`metadata.labels.app.kubernetes.io/managed-by: "Helm", wavesmith "wavesmith"`}},
		},
		"OtherLabelKept": {
			reason: "labels outside the five recommended ones are never dropped",
			args: args{kind: "chart", namespace: "apps",
				tool: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
				ws:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: apps, labels: {app.kubernetes.io/version: \"1\"}}\n"},
			want: want{report: []string{"metadata.labels: only wavesmith has it"}},
		},
		"SyncOptionsMerged": {
			reason: "wavesmith appends its sync options after the object's own",
			args: args{kind: "kustomization", namespace: "apps",
				tool: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {argocd.argoproj.io/sync-options: Prune=false}}\n",
				ws:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: apps, annotations: {argocd.argoproj.io/sync-options: \"Prune=false,ServerSideApply=true\"}}\n"},
			want: want{equal: true},
		},
		"SyncOptionsChanged": {
			reason: "options put before the object's own are a difference",
			args: args{kind: "kustomization", namespace: "apps",
				tool: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {argocd.argoproj.io/sync-options: Prune=false}}\n",
				ws:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: apps, annotations: {argocd.argoproj.io/sync-options: \"Replace=true,Prune=false\"}}\n"},
			want: want{report: []string{"argocd.argoproj.io/sync-options"}},
		},
		"NullAnnotations": {
			reason: "annotations: null in the tool's object, wavesmith's own annotations on the other side",
			args: args{kind: "chart", namespace: "apps",
				tool: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: null}\n",
				ws:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: apps, annotations: {wavesmith.io/apply-order: \"0\"}}\n"},
			want: want{equal: true},
		},
		"ReleaseNamespace": {
			reason: "namespaced objects get the release namespace, cluster-scoped ones (built in, or by a CRD of the output) none",
			args: args{kind: "kustomization", namespace: "apps",
				tool: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec: {group: example.com, scope: Cluster, names: {kind: Widget}}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`,
				ws: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: apps}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec: {group: example.com, scope: Cluster, names: {kind: Widget}}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: apps}
`},
			want: want{report: []string{"missing from wavesmith: example.com/Widget//w", "only in wavesmith: example.com/Widget/apps/w"}},
		},
		"UnknownScope": {
			reason: "a kind whose scope nothing tells fails loudly",
			args: args{kind: "kustomization", namespace: "apps",
				tool: "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n",
				ws:   "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: apps}\n"},
			want: want{err: "the scope of Gadget (example.com/v1) is unknown"},
		},
		"HooksNotOnInstall": {
			reason: "a chart's upgrade-only hook is left out, an install hook stays",
			args: args{kind: "chart", namespace: "apps",
				tool: `apiVersion: batch/v1
kind: Job
metadata: {name: up, annotations: {helm.sh/hook: post-upgrade}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: in, annotations: {helm.sh/hook: "pre-install,pre-upgrade"}}
`,
				ws: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: in, namespace: apps, annotations: {helm.sh/hook: \"pre-install,pre-upgrade\", argocd.argoproj.io/hook: PreSync}}\n"},
			want: want{equal: true},
		},
		"ApplierMarkers": {
			reason: "wavesmith removes the markers appliers set",
			args: args{kind: "kustomization", namespace: "apps",
				tool: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {argocd.argoproj.io/tracking-id: x, kustomize.toolkit.fluxcd.io/name: y}}\n",
				ws:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: apps}\n"},
			want: want{equal: true},
		},
		"ValuesCompared": {
			reason: "YAML 1.1 booleans as kubectl reads them differ from strings",
			args: args{kind: "chart", namespace: "apps",
				tool: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {a: yes}}\n",
				ws:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: apps, annotations: {a: \"yes\"}}\n"},
			want: want{report: []string{`metadata.annotations.a: true, wavesmith "yes"`}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			toolObjs, err := decodeStream([]byte(tc.args.tool))
			if err != nil {
				t.Fatal(err)
			}
			wsObjs, err := decodeStream([]byte(tc.args.ws))
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := normaliseTool(toolObjs, tc.args.kind, tc.args.namespace)
			if tc.want.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want.err) {
					t.Fatalf("%s: error %v, want one containing %q", tc.reason, err, tc.want.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			got := normaliseWavesmith(wsObjs, want, "wavesmith.io/Component/apps/rel")
			report := compare(want, got)
			if diff := cmp.Diff(tc.want.equal, report == ""); diff != "" {
				t.Fatalf("%s: equal (-want +got):\n%s\nreport:\n%s", tc.reason, diff, report)
			}
			for _, line := range tc.want.report {
				if !strings.Contains(report, line) {
					t.Errorf("%s: the report lacks %q:\n%s", tc.reason, line, report)
				}
			}
		})
	}
}

// TestREADMEListsNormalisations keeps README.md in step with the
// normalisation table and the allow-list.
func TestREADMEListsNormalisations(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	for _, n := range normalisations {
		if !strings.Contains(readme, "`"+n.name+"`") {
			t.Errorf("README.md does not describe the normalisation %q", n.name)
		}
	}
	for id := range allowList {
		if !strings.Contains(readme, "`"+id+"`") {
			t.Errorf("README.md does not list the allowed difference %q", id)
		}
	}
}

// TestCorpus checks the corpus' breadth: enough cases, every feature the
// suite promises exercised, no allow-list entry without its variation.
func TestCorpus(t *testing.T) {
	c := loadCorpus(t)
	if len(c.Cases) < 40 {
		t.Errorf("the corpus has %d cases, want at least 40", len(c.Cases))
	}
	kinds := map[string]int{}
	seen := map[string]bool{}
	ids := map[string]bool{}
	served := 0
	for _, cs := range c.Cases {
		kinds[cs.Kind]++
		for _, e := range cs.Exercises {
			seen[e] = true
		}
		for _, v := range cs.variations() {
			ids[cs.Name+"/"+v.Name] = true
			if v.Served {
				served++
			}
		}
	}
	if served < 3 {
		t.Errorf("%d variations are served from a chart repository and an OCI registry, want at least 3", served)
	}
	if kinds["chart"] < 15 || kinds["kustomization"] < 15 {
		t.Errorf("the corpus has %d charts and %d kustomizations, want at least 15 of each", kinds["chart"], kinds["kustomization"])
	}
	for _, e := range []string{
		"conditions", "tags", "alias", "import-values", "library", "crds", "hooks", "hook-weights",
		"hook-delete-policy", "values-schema", "kube-version", "api-versions", "tpl", "files",
		"inline-values", "values-files", "yaml-1.1-values", "negative", "random-values",
		"components", "patches", "configmap-generator", "leaves-folder", "unreached-files",
		"template-like-text", "spaces-in-path", "custom-resources-without-crd",
	} {
		if !seen[e] {
			t.Errorf("no case exercises %q", e)
		}
	}
	for id := range allowList {
		if !ids[id] {
			t.Errorf("the allow-list names %q, which is no variation of the corpus", id)
		}
	}
}
