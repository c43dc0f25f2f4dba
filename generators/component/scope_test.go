package component

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/kindscope"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestSetNamespaces: objects without a namespace get the Component's only
// when their kind is namespaced; the scope comes from spec.scopes, the
// CRDs among the objects, the table, the built-in kinds; an unknown kind
// is placed with a warning that says how to declare it.
func TestSetNamespaces(t *testing.T) {
	declared, err := kindscope.ParseAPIResources("api.txt", []byte("APIVERSION          NAMESPACED   KIND\nkyverno.io/v1       false        ClusterPolicy\n"))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		namespace string
		warning   string // a part of the one warning; "" for none
	}
	cases := map[string]struct {
		reason string
		obj    string
		crd    string
		scopes []any
		table  *kindscope.Table
		want   want
	}{
		"BuiltinNamespaced": {reason: "a ConfigMap is namespaced", obj: "v1/ConfigMap", want: want{namespace: "apps"}},
		"BuiltinCluster":    {reason: "a ClusterRole is not", obj: "rbac.authorization.k8s.io/v1/ClusterRole"},
		"RecentBuiltin":     {reason: "recent built-ins are known (from the API server's discovery)", obj: "networking.k8s.io/v1/ServiceCIDR"},
		"DeviceClass":       {reason: "resource.k8s.io is known", obj: "resource.k8s.io/v1/DeviceClass"},
		"VolumeAttrs":       {reason: "storage.k8s.io VolumeAttributesClass is cluster-scoped", obj: "storage.k8s.io/v1/VolumeAttributesClass"},
		"CRDInRender":       {reason: "a cluster-scoped CRD among the objects", obj: "cert-manager.io/v1/ClusterIssuer", crd: "Cluster"},
		"NamespacedCRD":     {reason: "a namespaced CRD among the objects", obj: "cert-manager.io/v1/ClusterIssuer", crd: "Namespaced", want: want{namespace: "apps"}},
		"Unknown": {reason: "no CRD, not declared: placed, with a warning", obj: "cert-manager.io/v1/ClusterIssuer",
			want: want{namespace: "apps", warning: `the scope of ClusterIssuer.cert-manager.io (ClusterIssuer.cert-manager.io/issuer) is unknown`}},
		"Declared":  {reason: "spec.scopes declares it", obj: "cert-manager.io/v1/ClusterIssuer", scopes: []any{map[string]any{"group": "cert-manager.io", "kind": "ClusterIssuer", "scope": "Cluster"}}},
		"FromTable": {reason: "--api-resources declares it", obj: "kyverno.io/v1/ClusterPolicy", table: declared},
		"SpecWins": {reason: "spec.scopes wins over a CRD", obj: "cert-manager.io/v1/ClusterIssuer", crd: "Cluster",
			scopes: []any{map[string]any{"group": "cert-manager.io", "kind": "ClusterIssuer", "scope": "Namespaced"}}, want: want{namespace: "apps"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			i := strings.LastIndex(tc.obj, "/")
			kind := tc.obj[i+1:]
			o := manifest.New(map[string]any{"apiVersion": tc.obj[:i], "kind": kind, "metadata": map[string]any{"name": "issuer"}})
			objs := []*manifest.Object{o}
			if tc.crd != "" {
				objs = append(objs, manifest.New(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
					"metadata": map[string]any{"name": "x.cert-manager.io"},
					"spec":     map[string]any{"group": "cert-manager.io", "scope": tc.crd, "names": map[string]any{"kind": kind}}}))
			}
			specMap := map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}}
			if tc.scopes != nil {
				specMap["scopes"] = tc.scopes
			}
			spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c", "namespace": "apps"}, "spec": specMap})
			c, err := Decode(spec)
			if err != nil {
				t.Fatal(err)
			}
			warns := SetNamespaces(spec, c, objs, "apps", tc.table)
			got := want{namespace: o.Namespace()}
			if len(warns) > 1 {
				t.Errorf("%d warnings, want at most one: %v", len(warns), warns)
			}
			for _, w := range warns {
				got.warning = w.Message
				if w.Field != "spec.scopes" {
					t.Errorf("warning on %s, want spec.scopes", w.Field)
				}
			}
			if tc.want.warning != "" && strings.Contains(got.warning, tc.want.warning) {
				got.warning = tc.want.warning
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
