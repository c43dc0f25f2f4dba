package argocd

import (
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/gitops"
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
