package argocd

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

func TestUniqueNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	cs := []child{
		{folder: "a-b/kaoto-c", name: "w-a-b-kaoto-c"},
		{folder: "a/kaoto-b-kaoto-c", name: "w-a-b-kaoto-c"},
		{folder: "ns/kaoto-" + long, name: "w-ns-kaoto-" + long},
		{folder: "ns/kaoto-x", name: "w-ns-kaoto-x"},
	}
	uniqueNames(cs)
	seen := map[string]bool{}
	for _, c := range cs {
		if len(c.name) > maxName || seen[c.name] {
			t.Errorf("%s: name %q too long or not unique", c.folder, c.name)
		}
		seen[c.name] = true
	}
	if cs[3].name != "w-ns-kaoto-x" {
		t.Errorf("a short unique name changed: %q", cs[3].name)
	}
}

func TestClash(t *testing.T) {
	// A spec in namespace argocd has its folder beside the Applications; a
	// name that is a file of that folder clashes.
	plan := &gitops.Plan{Objects: []gitops.Object{{Path: "_objects/ns--configmap-a.yaml"}, {Path: "argocd/kaoto-x/kaoto-x.yaml"}}}
	p := plan.Objects[1].Path
	if err := checkClashes(plan, map[string][]byte{p: nil}); !errors.Is(err, ErrTree) {
		t.Errorf("a file of the tree: want ErrTree, got %v", err)
	}
	if err := checkClashes(plan, map[string][]byte{path.Dir(p): nil}); !errors.Is(err, ErrTree) {
		t.Errorf("a folder of the tree: want ErrTree, got %v", err)
	}
	if err := checkClashes(plan, map[string][]byte{p + "/x.yaml": nil}); !errors.Is(err, ErrTree) {
		t.Errorf("below a file of the tree: want ErrTree, got %v", err)
	}
	if err := checkClashes(plan, map[string][]byte{"argocd/wavesmith.yaml": nil}); err != nil {
		t.Errorf("no clash: %v", err)
	}
}

// TestClashUnderDir: the check that lists only the objects whose path
// holds Dir (every Application file is under Dir) finds what the check
// over every object finds, also for unclean paths that reach Dir.
func TestClashUnderDir(t *testing.T) {
	files := map[string][]byte{Dir + "/wavesmith.yaml": nil, AppsDir + "/wavesmith-ns-kaoto-a.yaml": nil, AppsDir + "/x.yaml": nil, AppsDir + "/kustomization.yaml": nil}
	cases := map[string]struct {
		reason string
		paths  []string
		clash  bool
	}{
		"Rendered":      {"a rendered tree has no path under Dir", []string{"ns/kaoto-a/kaoto-a.yaml", "_objects/ns--configmap-a.yaml", "argocd/kaoto-x/kaoto-x.yaml"}, false},
		"SameFile":      {"an object at an Application's path", []string{"ns/kaoto-a/kaoto-a.yaml", Dir + "/wavesmith.yaml"}, true},
		"FileAsFolder":  {"an object where the Applications need a folder", []string{AppsDir}, true},
		"FolderAsFile":  {"an object below an Application's path", []string{AppsDir + "/x.yaml/y.yaml"}, true},
		"Kustomization": {"an object whose folder's kustomization.yaml (cleaned) is a file", []string{"b/../" + AppsDir + "/k.yaml"}, true},
		"Unclean":       {"an unclean path whose folder (cleaned) is a file", []string{"a/../" + Dir + "/wavesmith.yaml/y.yaml"}, true},
		"UncleanFile":   {"an object's own path is compared as written", []string{"a/../" + Dir + "/wavesmith.yaml"}, false},
		"Elsewhere":     {"Dir inside another folder meets nothing", []string{"ns/" + Dir + "/wavesmith.yaml", Dir + "x/wavesmith.yaml"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan := &gitops.Plan{}
			for _, p := range tc.paths {
				plan.Objects = append(plan.Objects, gitops.Object{Path: p})
			}
			got, want := checkClashes(plan, files), clashes(plan, files, false)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: got %v, want %v", tc.reason, got, want)
			}
			if (got != nil) != tc.clash || (got != nil && !errors.Is(got, ErrTree)) {
				t.Errorf("%s: clash %v, want %v", tc.reason, got, tc.clash)
			}
		})
	}
	// A file whose path is not clean can reach any folder: every object
	// is listed then.
	plan := &gitops.Plan{Objects: []gitops.Object{{Path: "ns/kaoto-a"}}}
	unclean := map[string][]byte{Dir + "/../ns/kaoto-a/x.yaml": nil}
	if err := checkClashes(plan, unclean); !errors.Is(err, ErrTree) {
		t.Errorf("a file below an object's path through ..: want ErrTree, got %v", err)
	}
}

// TestChildApplications: the child Applications, written from one shape
// whose fields are set per child, are those built one by one, whatever
// the order of shapes (pass-through objects, specs without a namespace)
// and with a destination namespace or without.
func TestChildApplications(t *testing.T) {
	plan := &gitops.Plan{}
	for i, ns := range []string{"0a", "b", "", "c", "b"} {
		key := manifest.Key{Group: "designer.kaoto.io", Kind: "Kaoto", Namespace: ns, Name: fmt.Sprintf("k%d", i)}
		folder := ns + "/kaoto-" + key.Name
		if ns == "" {
			folder = "x-" + h(key.Name) + "/kaoto-" + key.Name
		}
		plan.Specs = append(plan.Specs, gitops.Spec{Key: key, Folder: folder, First: i - 2, Wave: i, Last: i, DependsOn: []int{max(i-1, 0)}})
		plan.Objects = append(plan.Objects, gitops.Object{Key: key, Spec: i, IsSpec: true, Wave: i, Path: folder + "/kaoto-" + key.Name + ".yaml"})
	}
	plan.Objects = append(plan.Objects, gitops.Object{Key: manifest.Key{Kind: "ConfigMap", Namespace: "b", Name: "c"}, Spec: -1, Wave: -3, Path: "_objects/b--configmap-c.yaml"})
	for _, dest := range []string{"", "elsewhere"} {
		opts, err := Options{RepoURL: "https://git.example.com/r.git", Path: "deploy", DestinationNamespace: dest}.normalize()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]byte{}
		childApplications(plan, opts, got)
		want := map[string][]byte{}
		for _, c := range children(plan, opts) {
			ns := opts.DestinationNamespace
			if ns == "" {
				ns = c.namespace
			}
			app := application(opts, c.name, map[string]any{SyncWave: strconv.Itoa(c.wave)}, source(opts, path.Join(opts.Path, c.folder)), destination(opts.DestinationServer, ns), c.createNamespace)
			app["metadata"].(map[string]any)["finalizers"] = []any{ResourcesFinalizer}
			want[AppsDir+"/"+c.name+".yaml"] = encode(app)
		}
		if len(want) != len(plan.Specs)+1 {
			t.Fatalf("want %d children, got %d", len(plan.Specs)+1, len(want))
		}
		if diff := cmp.Diff(want, got, cmp.Transformer("string", func(b []byte) string { return string(b) })); diff != "" {
			t.Errorf("destination namespace %q: -one by one +from one shape:\n%s", dest, diff)
		}
	}
}

func h(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
