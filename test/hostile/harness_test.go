package hostile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The harness's own readers, on the shapes kyaml and the CLI print.

func TestReadFnOutput(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string // text(), or "error"
	}{
		"AliasesInItems": {
			reason: "items are echoed with their aliases: they must not be expanded to read the results",
			in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  spec:\n    a: &a [x]\n    b: [*a, *a]\n" +
				"results:\n- message: 'document too complex'\n  severity: error\n  resourceRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: d\n    namespace: demo\n  field:\n    path: spec.replicas\n  file:\n    path: d.yaml\n",
			want: "error: d.yaml: Deployment.apps/demo/d: spec.replicas: document too complex\n",
		},
		"NoResults": {
			reason: "a successful run may have no results",
			in:     "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
			want:   "",
		},
		"NotAResourceList": {
			reason: "a stream of objects is no ResourceList",
			in:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
			want:   "error",
		},
		"NoItems": {
			reason: "a ResourceList always has items",
			in:     "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n",
			want:   "error",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := readFnOutput([]byte(tc.in))
			got := "error"
			if err == nil {
				got = out.text()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFnExpectation(t *testing.T) {
	for in, want := range map[string]string{
		"bad.yaml:7":     "bad.yaml",
		"chart/a.json:1": "chart/a.json",
		"bad.yaml:":      "bad.yaml:",
		"metadata.name":  "metadata.name",
		"x.yaml:7:8":     "x.yaml:7:8",
	} {
		if got := fnExpectation(in); got != want {
			t.Errorf("fnExpectation(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitDocuments(t *testing.T) {
	got := splitDocuments([]byte("a: 1\n---\nb: 2\n--- # comment\n\n---\nc: 3\n"))
	want := []string{"a: 1\n", "\nb: 2\n", "\nc: 3\n"}
	var gs []string
	for _, d := range got {
		gs = append(gs, string(d))
	}
	if diff := cmp.Diff(want, gs); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}
