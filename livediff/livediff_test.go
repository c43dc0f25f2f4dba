package livediff

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/manifest"
)

func TestClean(t *testing.T) {
	for name, tc := range map[string]struct {
		reason string
		obj    map[string]any
		want   map[string]any
	}{
		"noise": {
			reason: "what the server maintains goes; what the user wrote stays",
			obj: map[string]any{"kind": "ConfigMap", "status": map[string]any{"x": 1}, "data": map[string]any{"a": "b"},
				"metadata": map[string]any{"name": "n", "uid": "u", "resourceVersion": "1", "generation": int64(2),
					"creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": []any{map[string]any{"manager": "m"}},
					"labels":      map[string]any{"l": "v"},
					"annotations": map[string]any{lastApplied: "{}", "keep": "me"}}},
			want: map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "b"},
				"metadata": map[string]any{"name": "n", "labels": map[string]any{"l": "v"}, "annotations": map[string]any{"keep": "me"}}},
		},
		"empty annotations": {
			reason: "annotations emptied by removing last-applied disappear, not show as {}",
			obj:    map[string]any{"metadata": map[string]any{"name": "n", "annotations": map[string]any{lastApplied: "{}"}}},
			want:   map[string]any{"metadata": map[string]any{"name": "n"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := deepCopy(tc.obj)
			got := Clean(tc.obj)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(before, tc.obj); diff != "" {
				t.Errorf("Clean modified its argument:\n%s", diff)
			}
		})
	}
}

func secret(data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "data": data}
}

func TestMaskSecret(t *testing.T) {
	for name, tc := range map[string]struct {
		reason                string
		before, after         map[string]any
		wantBefore, wantAfter map[string]any
	}{
		"new": {
			reason:    "a new Secret shows its keys, no value",
			after:     secret(map[string]any{"a": "c2VjcmV0"}),
			wantAfter: secret(map[string]any{"a": Sensitive}),
		},
		"changed and kept": {
			reason:     "equal values mask equally (no diff line); a changed one is marked; removed and added keys show",
			before:     secret(map[string]any{"same": "eA==", "changed": "eA==", "gone": "eA=="}),
			after:      secret(map[string]any{"same": "eA==", "changed": "eQ==", "added": "eQ=="}),
			wantBefore: secret(map[string]any{"same": Sensitive, "changed": Sensitive, "gone": Sensitive}),
			wantAfter:  secret(map[string]any{"same": Sensitive, "changed": SensitiveChanged, "added": Sensitive}),
		},
		"stringData": {
			reason:    "stringData is masked too",
			after:     map[string]any{"apiVersion": "v1", "kind": "Secret", "stringData": map[string]any{"p": "plain"}},
			wantAfter: map[string]any{"apiVersion": "v1", "kind": "Secret", "stringData": map[string]any{"p": Sensitive}},
		},
		"not a Secret": {
			reason:    "a ConfigMap's data is shown (control: masking is for Secrets only)",
			after:     map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "b"}},
			wantAfter: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "b"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			MaskSecret(tc.before, tc.after)
			if diff := cmp.Diff(tc.wantBefore, tc.before); diff != "" {
				t.Errorf("%s: before (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantAfter, tc.after); diff != "" {
				t.Errorf("%s: after (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestChange(t *testing.T) {
	key := manifest.Key{Kind: "ConfigMap", Namespace: "ns", Name: "cm"}
	cm := func(v string, rv string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": v},
			"metadata": map[string]any{"name": "cm", "namespace": "ns", "resourceVersion": rv}}
	}
	for name, tc := range map[string]struct {
		reason        string
		before, after map[string]any
		unchecked     string
		want          string
	}{
		"equal": {
			reason: "only noise differs: no change (control for the others)",
			before: cm("v", "1"), after: cm("v", "2"),
		},
		"changed": {
			reason: "a changed value is one hunk headed by the object",
			before: cm("old", "1"), after: cm("new", "2"),
			want: "--- ConfigMap/ns/cm (live)\n+++ ConfigMap/ns/cm (after apply)\n@@ -1,6 +1,6 @@\n apiVersion: v1\n data:\n-  k: old\n+  k: new\n kind: ConfigMap\n metadata:\n   name: cm\n",
		},
		"new unchecked": {
			reason: "a new object the server could not check says why",
			after:  cm("v", ""), unchecked: "its Namespace is created by this render",
			want: "--- /dev/null\n+++ ConfigMap/ns/cm (new; not checked by the API server: its Namespace is created by this render)\n@@ -0,0 +1,7 @@\n+apiVersion: v1\n+data:\n+  k: v\n+kind: ConfigMap\n+metadata:\n+  name: cm\n+  namespace: ns\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			action := Update
			if tc.before == nil {
				action = Create
			}
			ch, err := change(key, action, tc.unchecked, tc.before, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if ch != nil {
				got = ch.Diff
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
