package kindscope

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/wavesmith/wavesmith/internal/golden"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/manifest"
)

// kubectl api-resources output, as kubectl prints it: SHORTNAMES empty on
// some lines, so columns are found by the header.
const kubectlOutput = `NAME                 SHORTNAMES   APIVERSION                 NAMESPACED   KIND
bindings                          v1                         true         Binding
namespaces           ns           v1                         false        Namespace
clusterpolicies      cpol         kyverno.io/v1              false        ClusterPolicy
validatingpolicies   vpol         policies.kyverno.io/v1     false        ValidatingPolicy
certificates         cert,certs   cert-manager.io/v1         true         Certificate
`

const kubectlWide = `NAME         SHORTNAMES   APIVERSION              NAMESPACED   KIND            VERBS                          CATEGORIES
issuers                   cert-manager.io/v1      true         Issuer          delete,get,list,patch,update   cert-manager
clusterissuers            cert-manager.io/v1      false        ClusterIssuer   delete,get,list,patch,update   cert-manager
`

func TestParseAPIResources(t *testing.T) {
	type want struct {
		kinds map[GroupKind]bool
		err   string
	}
	cases := map[string]struct {
		reason string
		input  string
		want   want
	}{
		"Default": {
			reason: "the default output, empty SHORTNAMES included",
			input:  kubectlOutput,
			want: want{kinds: map[GroupKind]bool{
				{"", "Binding"}: true, {"", "Namespace"}: false, {"kyverno.io", "ClusterPolicy"}: false,
				{"policies.kyverno.io", "ValidatingPolicy"}: false, {"cert-manager.io", "Certificate"}: true,
			}},
		},
		"Wide": {
			reason: "-o wide adds VERBS and CATEGORIES",
			input:  kubectlWide,
			want:   want{kinds: map[GroupKind]bool{{"cert-manager.io", "Issuer"}: true, {"cert-manager.io", "ClusterIssuer"}: false}},
		},
		"ByHand": {
			reason: "a file written by hand, one word per column, need not be aligned",
			input:  "APIVERSION NAMESPACED KIND\nkyverno.io/v1 false ClusterPolicy\nv1 true ConfigMap\n",
			want:   want{kinds: map[GroupKind]bool{{"kyverno.io", "ClusterPolicy"}: false, {"", "ConfigMap"}: true}},
		},
		"NoHeader": {
			reason: "--no-headers output cannot be split into columns",
			input:  "issuers   cert-manager.io/v1   true   Issuer\n",
			want:   want{err: "api.txt:1: not in the format of kubectl api-resources: the header has no APIVERSION column (run kubectl api-resources without --no-headers)"},
		},
		"BadNamespaced": {
			reason: "NAMESPACED is a boolean",
			input:  "APIVERSION   NAMESPACED   KIND\nv1           maybe        Pod\n",
			want:   want{err: `api.txt:2: not in the format of kubectl api-resources: NAMESPACED is "maybe", want true or false`},
		},
		"Empty": {
			reason: "an empty file declares nothing and is likely a mistake",
			input:  "\n",
			want:   want{err: "api.txt: not in the format of kubectl api-resources: the file is empty"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tbl, err := ParseAPIResources("api.txt", []byte(tc.input))
			var got want
			if err != nil {
				if !errors.Is(err, ErrAPIResources) {
					t.Errorf("%s: error %v does not wrap ErrAPIResources", tc.reason, err)
				}
				got.err = err.Error()
			} else {
				got.kinds = tbl.namespaced
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestFormatParses: the table's own format reads back the same.
func TestFormatParses(t *testing.T) {
	back, err := ParseAPIResources("builtin.txt", Builtin().Format())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Builtin().namespaced, back.namespaced); diff != "" {
		t.Errorf("(-builtin +reparsed):\n%s", diff)
	}
}

// TestRemovedKindsAreRemoved: removed.txt lists only kinds the current API
// server does not serve, so it never overrides what discovery says.
func TestRemovedKindsAreRemoved(t *testing.T) {
	served, err := ParseAPIResources("builtin.txt", builtinText)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := ParseAPIResources("removed.txt", removedText)
	if err != nil {
		t.Fatal(err)
	}
	if removed.Len() == 0 {
		t.Fatal("removed.txt lists nothing")
	}
	for gk := range removed.namespaced {
		if _, ok := served.namespaced[gk]; ok {
			t.Errorf("%s is in removed.txt, but the API server serves it (builtin.txt)", gk)
		}
		if _, known := Builtin().Namespaced(gk.Group, gk.Kind); !known {
			t.Errorf("%s: not in Builtin()", gk)
		}
	}
}

func TestLearnCRDs(t *testing.T) {
	objs, err := manifest.Decode("crds.yaml", []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusterissuers.cert-manager.io}
spec: {group: cert-manager.io, scope: Cluster, names: {kind: ClusterIssuer, plural: clusterissuers}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: certificates.cert-manager.io}
spec: {group: cert-manager.io, scope: Namespaced, names: {kind: Certificate, plural: certificates}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tbl := Builtin().Clone()
	tbl.LearnCRDs(objs)
	for gk, want := range map[GroupKind]bool{{"cert-manager.io", "ClusterIssuer"}: false, {"cert-manager.io", "Certificate"}: true} {
		if got, known := tbl.Namespaced(gk.Group, gk.Kind); !known || got != want {
			t.Errorf("%s: namespaced %v known %v, want namespaced %v", gk, got, known, want)
		}
	}
	if _, known := Builtin().Namespaced("cert-manager.io", "ClusterIssuer"); known {
		t.Error("LearnCRDs on a clone changed the built-in table")
	}
}

// TestBuiltinMatchesAPIServer asks a real kube-apiserver (envtest, every
// API group and version enabled, alpha ones included) for its kinds and
// their scope: builtin.txt must be exactly that. With -update it is
// rewritten from the server: read the diff before committing.
func TestBuiltinMatchesAPIServer(t *testing.T) {
	assets := testtool.EnvtestAssets(t, filepath.Join("..", "bin"))
	env := &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStopTimeout: time.Minute}
	env.ControlPlane.GetAPIServer().Configure().Set("runtime-config", "api/all=true")
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	server := &Table{}
	for _, l := range lists {
		group := ""
		if i := strings.LastIndex(l.GroupVersion, "/"); i >= 0 {
			group = l.GroupVersion[:i]
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			server.Set(GroupKind{group, r.Kind}, r.Namespaced)
		}
	}
	if server.Len() < 60 {
		t.Fatalf("the server lists only %d kinds", server.Len())
	}
	golden.Assert(t, "builtin.txt", server.Format())
	for _, gk := range []GroupKind{{"", "Pod"}, {"networking.k8s.io", "ServiceCIDR"}, {"resource.k8s.io", "DeviceClass"}} {
		if _, known := Builtin().Namespaced(gk.Group, gk.Kind); !known {
			t.Errorf("%s: the embedded table does not know it", gk)
		}
	}
}
