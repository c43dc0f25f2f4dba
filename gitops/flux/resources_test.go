package flux

import (
	"path"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestReadResources: the resources of a kustomization.yaml that
// gitops.KustomizationFile wrote are read without YAML, as YAML reads
// them; any other file is left to YAML.
func TestReadResources(t *testing.T) {
	head := gitops.KustomizationHead
	cases := map[string]struct {
		reason string
		file   string
		ok     bool
	}{
		"Written":      {"a wave's list as written", string(gitops.KustomizationFile([]string{"../../ns/kaoto-a/kaoto-a.yaml", "../../_objects/ns--configmap-b.yaml", "handoff-configmap-ns-c.yaml"})), true},
		"Empty":        {"no resources", head, true},
		"Scalars":      {"words YAML reads as other types are read as the same strings", head + "- true\n- 1e3\n- .inf\n- 012\n- 0x10\n- NO\n- 2001-12-14\n", true},
		"Null":         {"null is no string: left to YAML", head + "- a\n- null\n", false},
		"NullCase":     {"Null neither", head + "- Null\n", false},
		"Dash":         {"a leading dash: left to YAML", head + "- -\n", false},
		"Colon":        {"a colon (an RBAC name in a stub): left to YAML", head + "- handoff-clusterrole.rbac.authorization.k8s.io-system:a.yaml\n", false},
		"Quoted":       {"a quoted item: left to YAML", head + "- \"a b\"\n", false},
		"CRLF":         {"line ends of another system: left to YAML", head + "- a\r\n", false},
		"NoLastEnd":    {"no final line end: left to YAML", head + "- a\n- b", false},
		"MoreKeys":     {"a key after the list: left to YAML", head + "- a\nnamespace: x\n", false},
		"Comment":      {"a comment: left to YAML", head + "- a # edited\n", false},
		"OtherHeader":  {"another header: left to YAML", "resources:\n- a\n", false},
		"Indented":     {"an indented list: left to YAML", head + "  - a\n", false},
		"EmptyItem":    {"an empty item: left to YAML", head + "- \n", false},
		"SpaceInside":  {"a space inside: left to YAML", head + "- a b\n", false},
		"TabAfterDash": {"a tab: left to YAML", head + "-\ta\n", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := readResources([]byte(tc.file))
			if ok != tc.ok {
				t.Fatalf("%s: read without YAML %v, want %v", tc.reason, ok, tc.ok)
			}
			if !ok {
				return
			}
			var k struct {
				Resources []string `yaml:"resources"`
			}
			if err := yaml.Unmarshal([]byte(tc.file), &k); err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if len(got) != len(k.Resources) || len(got) > 0 && !cmp.Equal(k.Resources, got) {
				t.Errorf("%s: -yaml +read:\n%s", tc.reason, cmp.Diff(k.Resources, got))
			}
		})
	}
}

// TestJoinUp: joinUp is path.Join.
func TestJoinUp(t *testing.T) {
	for _, dir := range []string{"_flux/wave-0", "flux/wave-m3", "_flux/wave-..", "x/wave-1", "_flux/..", "_flux/wave-1/a", "_flux", "../wave-1", "./wave-0", "/wave-0", "_flux/wave-1/.."} {
		for _, r := range []string{"../../ns/k/a.yaml", "../../../a", "../..//a", "../../a/../b", "../../.", "../../", "../..", "../../..",
			"handoff-x.yaml", "../../a//b", "../../a/", "./x", "../../_objects/a.yaml", "../../../../x", "../../a/./b"} {
			if got, want := joinUp(dir, r), path.Join(dir, r); got != want {
				t.Errorf("joinUp(%q, %q) = %q, want %q", dir, r, got, want)
			}
		}
	}
}

// TestPreviousWaves: an object listed by two waves of the previous tree
// is held by both, and no other object gains a wave by it; a path the new
// tree no longer has is read for its objects; a stub's object is held by
// its wave.
func TestPreviousWaves(t *testing.T) {
	key := func(name string) manifest.Key { return manifest.Key{Kind: "ConfigMap", Namespace: "ns", Name: name} }
	obj := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: ns\n"
	}
	prev := fstest.MapFS{
		"_flux/wave-0/kustomization.yaml":          {Data: gitops.KustomizationFile([]string{"../../ns/k/configmap-a.yaml", "../../ns/k/configmap-b.yaml", "../../ns/k/configmap-gone.yaml"})},
		"_flux/wave-1/kustomization.yaml":          {Data: gitops.KustomizationFile([]string{"../../ns/k/configmap-a.yaml", "handoff-configmap-ns-c.yaml"})},
		"_flux/wave-1/handoff-configmap-ns-c.yaml": {Data: []byte(obj("c"))},
		"ns/k/configmap-gone.yaml":                 {Data: []byte(obj("d"))},
		"ns/k/configmap-a.yaml":                    {Data: []byte("not read: the new tree has this path")},
	}
	objects := []gitops.Object{{Key: key("a"), Path: "ns/k/configmap-a.yaml"}, {Key: key("b"), Path: "ns/k/configmap-b.yaml"}}
	got, err := previousWaves(prev, objects)
	if err != nil {
		t.Fatal(err)
	}
	want := map[manifest.Key][]int{key("a"): {0, 1}, key("b"): {0}, key("d"): {0}, key("c"): {1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}
