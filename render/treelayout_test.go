package render

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/manifest"
)

// result builds a Result of pass-through objects and one spec with
// children, as Render would, without Render's name checks: Paths must be
// safe on its own.
func result(passThrough []manifest.Key, spec manifest.Key, children []manifest.Key) *Result {
	r := &Result{}
	for _, k := range passThrough {
		r.Items = append(r.Items, &Item{Key: k, Spec: -1, YAML: []byte(k.String() + "\n")})
	}
	s := &Item{Key: spec, Role: Spec, Spec: 0, YAML: []byte(spec.String() + "\n")}
	r.Specs = append(r.Specs, s)
	r.Items = append(r.Items, s)
	for _, k := range children {
		r.Items = append(r.Items, &Item{Key: k, Role: Child, Spec: 0, YAML: []byte(k.String() + "\n")})
	}
	return r
}

// h is the hash suffix of a name that is not a safe file name: 12 hex
// digits of its SHA-256.
func h(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}

func TestPaths(t *testing.T) {
	cm := func(ns, name string) manifest.Key { return manifest.Key{Kind: "ConfigMap", Namespace: ns, Name: name} }
	kaoto := func(ns, name string) manifest.Key {
		return manifest.Key{Group: "designer.kaoto.io", Kind: "Kaoto", Namespace: ns, Name: name}
	}
	cases := map[string]struct {
		reason   string
		pass     []manifest.Key
		spec     manifest.Key
		children []manifest.Key
		want     []string
	}{
		"Plain": {
			reason: "valid names are kept as they are",
			pass:   []manifest.Key{cm("demo", "settings"), {Kind: "Namespace", Name: "demo"}},
			spec:   kaoto("demo", "designer"), children: []manifest.Key{{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "designer"}},
			want: []string{"_objects/demo--configmap-settings.yaml", "_objects/namespace-demo.yaml",
				"demo/kaoto-designer/kaoto-designer.yaml", "demo/kaoto-designer/deployment-designer.yaml"},
		},
		"NameClimbsOut": {
			reason: "a ConfigMap named ../../../../x/pwned stays one file in _objects",
			pass:   []manifest.Key{cm("", "../../../../x/pwned"), cm("demo", "../../../../x/pwned")},
			spec:   kaoto("demo", "a"),
			want: []string{"_objects/configmap-..-..-..-..-x-pwned-" + h("configmap-../../../../x/pwned") + ".yaml", "_objects/demo--configmap-..-..-..-..-x-pwned-" + h("demo--configmap-../../../../x/pwned") + ".yaml",
				"demo/kaoto-a/kaoto-a.yaml"},
		},
		"NamespaceClimbsOut": {
			reason: "a spec namespace with ../ is one folder",
			spec:   kaoto("../../etc", "a"), children: []manifest.Key{cm("../../etc", "a")},
			want: []string{"etc-" + h("../../etc") + "/kaoto-a/kaoto-a.yaml", "etc-" + h("../../etc") + "/kaoto-a/configmap-a.yaml"},
		},
		"SlashOverwrites": {
			reason: "a child named so that its file would be another child's (deployment-x) gets its own file",
			spec:   kaoto("demo", "x"),
			children: []manifest.Key{{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "x"},
				{Kind: "ConfigMap", Namespace: "demo", Name: "../kaoto-x/deployment-x"}},
			want: []string{"demo/kaoto-x/kaoto-x.yaml", "demo/kaoto-x/deployment-x.yaml", "demo/kaoto-x/configmap-..-kaoto-x-deployment-x-" + h("configmap-../kaoto-x/deployment-x") + ".yaml"},
		},
		"CaseOnly": {
			reason: "names differing in case only get different files",
			pass:   []manifest.Key{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "Admin"}, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"}},
			spec:   kaoto("demo", "a"),
			want:   []string{"_objects/clusterrole-admin-" + h("clusterrole-Admin") + ".yaml", "_objects/clusterrole-admin.yaml", "demo/kaoto-a/kaoto-a.yaml"},
		},
		"Colon": {
			reason: "a colon (RBAC names) is not kept",
			pass:   []manifest.Key{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:metrics"}},
			spec:   kaoto("demo", "a"),
			want:   []string{"_objects/clusterrole-system-metrics-" + h("clusterrole-system:metrics") + ".yaml", "demo/kaoto-a/kaoto-a.yaml"},
		},
		"Duplicate": {
			reason: "two objects of one name in different groups: the group tells them apart",
			pass:   []manifest.Key{cm("demo", "a"), {Group: "example.com", Kind: "ConfigMap", Namespace: "demo", Name: "a"}},
			spec:   kaoto("demo", "a"),
			want:   []string{"_objects/demo--configmap-a.yaml", "_objects/demo--configmap-a.example.com.yaml", "demo/kaoto-a/kaoto-a.yaml"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := result(tc.pass, tc.spec, tc.children)
			got := r.Paths()
			if diff := cmp.Diff(got, r.Paths()); diff != "" {
				t.Fatalf("%s: not deterministic:\n%s", tc.reason, diff)
			}
			for _, p := range got {
				if err := outtree.CheckPath(p); err != nil {
					t.Errorf("%s: %v", tc.reason, err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			// Written, the tree stays in its folder.
			parent := t.TempDir()
			if err := outtree.Write(filepath.Join(parent, "out"), r.Tree()); err != nil {
				t.Fatal(err)
			}
			es, _ := os.ReadDir(parent)
			if len(es) != 1 {
				t.Errorf("%s: wrote beside the tree: %v", tc.reason, es)
			}
		})
	}
}

// TestSafeSegment: every string becomes one safe file name, at most
// maxSegment bytes.
func TestSafeSegment(t *testing.T) {
	for _, s := range []string{"", ".", "..", "a/b", "/", "\x00", "_objects", ".hidden", "-x", strings.Repeat("a", 300), strings.Repeat("é", 200), "A", "a:b", "a\\b"} {
		got := safeSegment(s)
		if !isSafeSegment(got) || len(got) > maxSegment {
			t.Errorf("safeSegment(%q) = %q: not a safe segment", s, got)
		}
		if got == s && !isSafeSegment(s) {
			t.Errorf("safeSegment(%q) kept an unsafe name", s)
		}
	}
	if safeSegment("a/b") == safeSegment("a:b") {
		t.Error("two names meet in one segment")
	}
}
