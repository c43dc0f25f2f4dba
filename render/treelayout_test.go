package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
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

// entry is an item of a layout test: its key and the index of its spec
// (-1: no spec); the first item of each spec index is the spec itself.
type entry struct {
	spec int
	key  manifest.Key
}

// resultOf builds a Result of the entries, in their order.
func resultOf(entries []entry) *Result {
	r := &Result{}
	for _, e := range entries {
		it := &Item{Key: e.key, Spec: e.spec, Role: Child, YAML: []byte(e.key.String() + "\n")}
		if e.spec >= len(r.Specs) {
			it.Role = Spec
			r.Specs = append(r.Specs, it)
		}
		r.Items = append(r.Items, it)
	}
	return r
}

// TestLayoutCollisions: names that meet in a folder keep their files
// apart the same way whatever the size of the folder: the group, then
// -2, -3, ...; spec folders that meet get -2, -3, ...
func TestLayoutCollisions(t *testing.T) {
	kaoto := func(group, ns, name string) manifest.Key {
		return manifest.Key{Group: group, Kind: "Kaoto", Namespace: ns, Name: name}
	}
	cm := func(group, ns, name string) manifest.Key {
		return manifest.Key{Group: group, Kind: "ConfigMap", Namespace: ns, Name: name}
	}
	many := func(spec int, n int) []entry {
		var out []entry
		for i := range n {
			out = append(out, entry{spec, cm("", "demo", fmt.Sprintf("c%d", i))})
		}
		return out
	}
	manyNames := func(dir string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s/configmap-c%d.yaml", dir, i))
		}
		return out
	}
	cat := func(parts ...[]entry) []entry { return slices.Concat(parts...) }
	cats := func(parts ...[]string) []string { return slices.Concat(parts...) }
	cases := map[string]struct {
		reason  string
		entries []entry
		want    []string
	}{
		"SpecFolders": {
			reason: "specs whose folders meet (one kind in two groups; a name with the counter) get -2, then -2-2",
			entries: []entry{{0, kaoto("a.example.com", "demo", "x")}, {1, kaoto("b.example.com", "demo", "x")},
				{2, kaoto("a.example.com", "demo", "x-2")}, {2, cm("", "demo", "x")}},
			want: []string{"demo/kaoto-x/kaoto-x.yaml", "demo/kaoto-x-2/kaoto-x.yaml", "demo/kaoto-x-2-2/kaoto-x-2.yaml", "demo/kaoto-x-2-2/configmap-x.yaml"},
		},
		"SpecFolderYAML": {
			reason:  "a spec folder ending in .yaml gets its counter before .yaml",
			entries: []entry{{0, kaoto("a.example.com", "demo", "x.yaml")}, {1, kaoto("b.example.com", "demo", "x.yaml")}},
			want:    []string{"demo/kaoto-x.yaml/kaoto-x.yaml.yaml", "demo/kaoto-x-2.yaml/kaoto-x.yaml.yaml"},
		},
		"GroupThenCounter": {
			reason: "in a spec folder, a second name takes its group, a third the counter; no group: the counter",
			entries: []entry{{0, kaoto("k", "demo", "s")}, {0, cm("", "demo", "a")}, {0, cm("example.com", "demo", "a")},
				{0, cm("example.com", "demo", "a")}, {0, cm("", "demo", "a")}, {0, cm("", "demo", "a-2")}},
			want: []string{"demo/kaoto-s/kaoto-s.yaml", "demo/kaoto-s/configmap-a.yaml", "demo/kaoto-s/configmap-a.example.com.yaml",
				"demo/kaoto-s/configmap-a.example.com-2.yaml", "demo/kaoto-s/configmap-a-2.yaml", "demo/kaoto-s/configmap-a-2-2.yaml"},
		},
		"GroupUnsafe": {
			reason:  "a group that makes the name unsafe gives a hashed name",
			entries: []entry{{0, kaoto("k", "demo", "s")}, {0, cm("", "demo", "a")}, {0, cm("Example.COM", "demo", "a")}},
			want:    []string{"demo/kaoto-s/kaoto-s.yaml", "demo/kaoto-s/configmap-a.yaml", "demo/kaoto-s/configmap-a.example.com-" + h("configmap-a.Example.COM") + ".yaml"},
		},
		"CaseInSpecFolder": {
			reason:  "children differing in case only get different files",
			entries: []entry{{0, kaoto("k", "demo", "s")}, {0, cm("", "demo", "A")}, {0, cm("", "demo", "a")}},
			want:    []string{"demo/kaoto-s/kaoto-s.yaml", "demo/kaoto-s/configmap-a-" + h("configmap-A") + ".yaml", "demo/kaoto-s/configmap-a.yaml"},
		},
		"NonASCIIKind": {
			reason:  "a kind outside ASCII is lowered as strings.ToLower does, then hashed",
			entries: []entry{{0, kaoto("k", "demo", "s")}, {0, manifest.Key{Kind: "ÀB", Namespace: "demo", Name: "x"}}},
			want:    []string{"demo/kaoto-s/kaoto-s.yaml", "demo/kaoto-s/b-x-" + h("àb-x") + ".yaml"},
		},
		"PassThrough": {
			reason: "in _objects, a namespaced name and a cluster one that spell the same file meet; objects of no spec never meet a spec's",
			entries: []entry{{-1, cm("", "demo", "x")}, {-1, manifest.Key{Kind: "Demo", Name: "-configmap-x"}},
				{-1, cm("", "", "x")}, {0, kaoto("k", "demo", "s")}, {0, cm("", "demo", "x")}},
			want: []string{"_objects/demo--configmap-x.yaml", "_objects/demo--configmap-x-2.yaml", "_objects/configmap-x.yaml",
				"demo/kaoto-s/kaoto-s.yaml", "demo/kaoto-s/configmap-x.yaml"},
		},
		"BigSpecFolder": {
			reason: "a spec folder of more files than smallFolder sets its names apart the same way",
			entries: cat([]entry{{0, kaoto("k", "demo", "s")}}, many(0, smallFolder+8),
				[]entry{{0, cm("", "demo", "c3")}, {0, cm("example.com", "demo", "c5")}, {0, cm("example.com", "demo", "c5")}, {1, kaoto("k", "demo", "t")}, {1, cm("", "demo", "c3")}}),
			want: cats([]string{"demo/kaoto-s/kaoto-s.yaml"}, manyNames("demo/kaoto-s", smallFolder+8),
				[]string{"demo/kaoto-s/configmap-c3-2.yaml", "demo/kaoto-s/configmap-c5.example.com.yaml", "demo/kaoto-s/configmap-c5.example.com-2.yaml",
					"demo/kaoto-t/kaoto-t.yaml", "demo/kaoto-t/configmap-c3.yaml"}),
		},
		"BigPassThrough": {
			reason:  "a pass-through folder of more files than smallFolder sets its names apart the same way",
			entries: cat(many(-1, smallFolder+8), []entry{{-1, cm("", "demo", "c7")}, {-1, cm("example.com", "demo", "c7")}}, []entry{{0, kaoto("k", "demo", "s")}}),
			want: cats(func() []string {
				var out []string
				for i := range smallFolder + 8 {
					out = append(out, fmt.Sprintf("_objects/demo--configmap-c%d.yaml", i))
				}
				return out
			}(), []string{"_objects/demo--configmap-c7-2.yaml", "_objects/demo--configmap-c7.example.com.yaml", "demo/kaoto-s/kaoto-s.yaml"}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := resultOf(tc.entries)
			got := r.Paths()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(referenceTree(r), r.Tree()); diff != "" {
				t.Errorf("%s: tree differs from the reference: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestLayoutAgreesWithReference: on random results whose names often
// meet (few names, kinds, groups and namespaces, some unsafe, some in
// upper case, folders large and small), Paths and Tree are those of the
// reference layout (the one global map of every folder and name).
func TestLayoutAgreesWithReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	key := func() manifest.Key {
		return manifest.Key{
			Group:     pick("", "", "apps", "example.com", "Example.com"),
			Kind:      pick("ConfigMap", "configmap", "Deployment", "Kaoto", "ÀB", "Demo"),
			Namespace: pick("", "demo", "demo", "team-01", "../x", "Demo"),
			Name:      pick("a", "a-2", "a.yaml", "A", "x/y", "-configmap-a", "b", "a.example.com", strings.Repeat("n", 210)),
		}
	}
	for round := range 300 {
		var entries []entry
		specs := rng.IntN(6)
		for s := range specs {
			entries = append(entries, entry{s, key()})
		}
		for range rng.IntN(3 * smallFolder) {
			s := rng.IntN(specs+1) - 1
			if s >= 0 && rng.IntN(4) > 0 {
				s = 0 // most in one folder, to make it big
			}
			e := entry{s, key()}
			// Children come after their spec, anywhere among the others.
			i := rng.IntN(len(entries) + 1)
			if s >= 0 {
				for j, x := range entries {
					if x.spec == s && j >= i {
						i = j + 1
						break
					}
				}
			}
			entries = slices.Insert(entries, i, e)
		}
		if len(entries) == 0 {
			continue
		}
		r := resultOf(entries)
		if want, got := referencePaths(r), r.Paths(); !slices.Equal(want, got) {
			t.Fatalf("round %d: paths differ from the reference: -want +got:\n%s", round, cmp.Diff(want, got))
		}
		if want, got := referenceTree(r), r.Tree(); !maps.EqualFunc(want, got, bytes.Equal) {
			t.Fatalf("round %d: tree differs from the reference: -want +got:\n%s", round, cmp.Diff(want, got))
		}
	}
}

// The reference layout: how Tree and Paths placed files before they
// compared names per folder (one map of every folder and name), kept to
// hold the faster layout to the same output.

type refName struct{ dir, name string }

func referencePaths(r *Result) []string {
	dirs, names := referenceLayout(r)
	paths := make([]string, len(dirs))
	for i := range paths {
		paths[i] = dirs[i] + "/" + names[i]
	}
	return paths
}

func referenceTree(r *Result) map[string][]byte {
	dirs, names := referenceLayout(r)
	files := map[string][]byte{}
	folders := map[string][]string{}
	for i, it := range r.Items {
		files[dirs[i]+"/"+names[i]] = it.YAML
		folders[dirs[i]] = append(folders[dirs[i]], names[i])
	}
	var dirList []string
	for d, names := range folders {
		dirList = append(dirList, d)
		files[d+"/kustomization.yaml"] = referenceKustomization(names)
	}
	sort.Strings(dirList)
	files["kustomization.yaml"] = referenceKustomization(dirList)
	return files
}

func referenceKustomization(resources []string) []byte {
	var b bytes.Buffer
	b.WriteString(TreeHeader)
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for _, r := range resources {
		b.WriteString("- " + r + "\n")
	}
	return b.Bytes()
}

func referenceLayout(r *Result) (dirs, names []string) {
	specDirs := make([]string, len(r.Specs))
	usedDirs := map[refName]bool{{name: PassThroughDir}: true}
	for i, s := range r.Specs {
		k := s.Key
		specDirs[i] = referenceUnique(safeSegment(k.Namespace)+"/"+safeSegment(strings.ToLower(k.Kind)+"-"+k.Name), "", usedDirs)
	}
	used := map[refName]bool{}
	for _, it := range r.Items {
		dir := PassThroughDir
		if it.Spec >= 0 {
			dir = specDirs[it.Spec]
		}
		k := it.Key
		kind := strings.ToLower(k.Kind)
		var base, name string
		if dir != PassThroughDir || k.Namespace == "" {
			name = kind + "-" + k.Name + ".yaml"
			if base = name[:len(name)-len(".yaml")]; !isSafeSegment(base) {
				base = safeSegment(base)
				name = base + ".yaml"
			}
		} else {
			base = safeSegment(k.Namespace + "--" + kind + "-" + k.Name)
			name = base + ".yaml"
		}
		if used[refName{dir, name}] && k.Group != "" {
			name = safeSegment(base+"."+k.Group) + ".yaml"
		}
		dirs, names = append(dirs, dir), append(names, referenceUnique(name, dir, used))
	}
	return dirs, names
}

func referenceUnique(name, dir string, used map[refName]bool) string {
	stem, ext := name, ""
	if strings.HasSuffix(name, ".yaml") {
		stem, ext = strings.TrimSuffix(name, ".yaml"), ".yaml"
	}
	for i := 2; used[refName{dir, name}]; i++ {
		name = fmt.Sprintf("%s-%d%s", stem, i, ext)
	}
	used[refName{dir, name}] = true
	return name
}
