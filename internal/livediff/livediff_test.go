package livediff

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

func TestOverlay(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"name": "j", "labels": map[string]any{"controller-uid": "u", "app": "a"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"restartPolicy": "Never",
			"containers": []any{
				map[string]any{"name": "main", "image": "busybox:1", "terminationMessagePath": "/dev/termination-log"},
				map[string]any{"name": "side", "image": "side:1"},
			},
		}}},
	}
	for name, tc := range map[string]struct {
		reason string
		over   map[string]any
		want   map[string]any
	}{
		"named list": {
			reason: "containers merge by name: defaults of the live item stay, the rendered image wins, a dropped container goes",
			over: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "main", "image": "busybox:2"}},
			}}}},
			want: map[string]any{
				"metadata": map[string]any{"name": "j", "labels": map[string]any{"controller-uid": "u", "app": "a"}},
				"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
					"restartPolicy": "Never",
					"containers":    []any{map[string]any{"name": "main", "image": "busybox:2", "terminationMessagePath": "/dev/termination-log"}},
				}}},
			},
		},
		"scalars and lists": {
			reason: "a scalar and an unnamed list of another length are the rendered ones",
			over:   map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "b"}}, "args": []any{"x"}},
			want: map[string]any{
				"metadata": map[string]any{"name": "j", "labels": map[string]any{"controller-uid": "u", "app": "b"}},
				"spec":     live["spec"],
				"args":     []any{"x"},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := deepCopy(live)
			got := overlay(live, tc.over)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(before, live); diff != "" {
				t.Errorf("overlay modified its base:\n%s", diff)
			}
		})
	}
}

func TestKeptBy(t *testing.T) {
	for name, tc := range map[string]struct {
		ann  map[string]string
		want string
	}{
		"orphan":            {map[string]string{"wavesmith.io/delete-policy": "orphan"}, "wavesmith.io/delete-policy: orphan"},
		"orphan-on-apply":   {map[string]string{"wavesmith.io/delete-policy": "orphan-on-apply"}, "wavesmith.io/delete-policy: orphan-on-apply"},
		"orphan-on-delete":  {map[string]string{"wavesmith.io/delete-policy": "orphan-on-delete"}, ""},
		"argocd":            {map[string]string{"argocd.argoproj.io/sync-options": "ServerSideApply=true, Prune=false"}, "argocd.argoproj.io/sync-options: ServerSideApply=true, Prune=false"},
		"argocd delete":     {map[string]string{"argocd.argoproj.io/sync-options": "Delete=false"}, ""},
		"flux as rendered":  {map[string]string{"kustomize.toolkit.fluxcd.io/prune": "Disabled"}, "kustomize.toolkit.fluxcd.io/prune: Disabled"},
		"flux as in docs":   {map[string]string{"kustomize.toolkit.fluxcd.io/prune": "disabled"}, "kustomize.toolkit.fluxcd.io/prune: disabled"},
		"helm":              {map[string]string{"helm.sh/resource-policy": "keep"}, "helm.sh/resource-policy: keep"},
		"nothing (control)": {map[string]string{"wavesmith.io/delete-policy": "delete"}, ""},
	} {
		if got := keptBy(tc.ann); got != tc.want {
			t.Errorf("%s: keptBy = %q, want %q", name, got, tc.want)
		}
	}
}

func TestRecreates(t *testing.T) {
	for name, tc := range map[string]struct {
		ann  map[string]string
		want bool
	}{
		"wavesmith": {map[string]string{"wavesmith.io/update-policy": "recreate"}, true},
		"argocd":    {map[string]string{"argocd.argoproj.io/sync-options": "Replace=true,Force=true"}, true},
		"flux":      {map[string]string{"kustomize.toolkit.fluxcd.io/force": "Enabled"}, true},
		"replace":   {map[string]string{"argocd.argoproj.io/sync-options": "Replace=true"}, false},
		"none":      {nil, false},
	} {
		if got := recreates(tc.ann); got != tc.want {
			t.Errorf("%s: recreates = %v, want %v", name, got, tc.want)
		}
	}
}

func TestImmutableFields(t *testing.T) {
	gk := schema.GroupKind{Group: "batch", Kind: "Job"}
	immutable := apierrors.NewInvalid(gk, "j", field.ErrorList{
		field.Invalid(field.NewPath("spec", "template"), "a long Go struct", validation.FieldImmutableErrorMsg),
	})
	other := apierrors.NewInvalid(gk, "j", field.ErrorList{field.Required(field.NewPath("spec", "template"), "")})
	if got := immutableFields(fmt.Errorf("wrapped: %w", immutable)); !cmp.Equal(got, []string{"spec.template"}) {
		t.Errorf("immutable: %v", got)
	}
	if got := immutableFields(other); got != nil {
		t.Errorf("another invalid field (control): %v", got)
	}
}

func TestMark(t *testing.T) {
	err := fmt.Errorf("outer: %w", mark(ErrNoKind, fmt.Errorf("inner: %w", context.Canceled)))
	if !errors.Is(err, ErrNoKind) || !errors.Is(err, context.Canceled) || errors.Is(err, ErrCluster) {
		t.Errorf("errors.Is on %v", err)
	}
	if err.Error() != "outer: inner: context canceled" {
		t.Errorf("the sentinel shows in the message: %v", err)
	}
}
