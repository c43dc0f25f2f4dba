package kustomize

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestTreeFS: kustomize's view of a plain folder reads from disk only
// inside it, resolves symlinks as kustomize's disk filesystem does,
// records a read outside as a refusal and writes nothing.
func TestTreeFS(t *testing.T) {
	root := t.TempDir()
	for p, s := range map[string]string{"app/kustomization.yaml": "resources: [real]\n", "app/real/a b+.yaml": "x: 1\n", "secret": "s"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("real", filepath.Join(root, "app", "linked")); err != nil {
		t.Fatal(err)
	}
	j := &job{spec: newSpec(root, "app", nil), dir: filepath.Join(root, "app")}
	tr, _, templated, err := j.open()
	if err != nil || templated {
		t.Fatalf("open: %v %v", templated, err)
	}
	f := treeFS{tr}
	app := tr.root

	dir, file, err := f.CleanedAbs(filepath.Join(app, "linked", "a b+.yaml"))
	if err != nil || dir != filesys.ConfirmedDir(filepath.Join(app, "real")) || file != "a b+.yaml" {
		t.Errorf("CleanedAbs through a link: %q %q %v, want the real folder", dir, file, err)
	}
	b, err := f.ReadFile(filepath.Join(app, "linked", "a b+.yaml"))
	if err != nil || string(b) != "x: 1\n" {
		t.Errorf("ReadFile: %q %v", b, err)
	}
	names, err := f.ReadDir(app)
	if diff := cmp.Diff([]string{"kustomization.yaml", "linked", "real"}, names); diff != "" || err != nil {
		t.Errorf("ReadDir: %v\n%s", err, diff)
	}
	if f.Exists(filepath.Join(root, "secret")) {
		t.Errorf("a file outside the folder exists for kustomize")
	}
	if tr.firstRefusal() != nil {
		t.Errorf("a probe outside the folder is not a refusal: %v", tr.firstRefusal())
	}
	if _, err := f.ReadFile(filepath.Join(root, "secret")); err == nil {
		t.Errorf("read a file outside the folder")
	}
	if err := tr.firstRefusal(); !errors.Is(err, ErrKustomization) {
		t.Errorf("a read outside the folder is refused: got %v", err)
	}
	if err := f.WriteFile(filepath.Join(app, "new"), nil); !errors.Is(err, errReadOnly) {
		t.Errorf("WriteFile: %v", err)
	}
	var walked []string
	err = f.Walk(app, func(p string, _ os.FileInfo, err error) error {
		rel, _ := filepath.Rel(app, p)
		walked = append(walked, filepath.ToSlash(rel))
		return err
	})
	if diff := cmp.Diff([]string{".", "kustomization.yaml", "linked", "linked/a b+.yaml", "real", "real/a b+.yaml"}, walked); diff != "" || err != nil {
		t.Errorf("Walk: %v\n%s", err, diff)
	}
	glob, err := f.Glob(filepath.Join(app, "*", "*.yaml"))
	if diff := cmp.Diff([]string{filepath.Join(app, "linked", "a b+.yaml"), filepath.Join(app, "real", "a b+.yaml")}, glob); diff != "" || err != nil {
		t.Errorf("Glob: %v\n%s", err, diff)
	}
}
