package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteTreeSwapsWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	first := map[string][]byte{"kustomization.yaml": []byte(TreeHeader + "x\n"), "a/old.yaml": []byte("old\n")}
	if err := WriteTree(dir, first); err != nil {
		t.Fatal(err)
	}
	second := map[string][]byte{"kustomization.yaml": []byte(TreeHeader + "y\n"), "b/new.yaml": []byte("new\n")}
	if err := WriteTree(dir, second); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(second, got); diff != "" {
		t.Errorf("files that no longer belong must disappear: -want +got:\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("temporary folders left behind: %v", entries)
	}
}

func TestWriteTreeRefusesForeignFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteTree(dir, map[string][]byte{"kustomization.yaml": []byte(TreeHeader)})
	if !errors.Is(err, ErrTree) {
		t.Fatalf("want ErrTree, got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "precious.txt")); string(b) != "keep" {
		t.Error("a folder wavesmith did not write was touched")
	}
}

func TestWriteTreeFailureKeepsOldTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	old := map[string][]byte{"kustomization.yaml": []byte(TreeHeader + "old\n")}
	if err := WriteTree(dir, old); err != nil {
		t.Fatal(err)
	}
	// A path that cannot be written: a file where a folder must go.
	bad := map[string][]byte{"kustomization.yaml": []byte(TreeHeader), "a": []byte("x"), "a/b.yaml": []byte("y")}
	if err := WriteTree(dir, bad); err == nil {
		t.Fatal("want an error")
	}
	got, _ := ReadTree(dir)
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("a failed write changed the old tree: -want +got:\n%s", diff)
	}
}

func TestLoadSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "a", "loop")); err != nil {
		t.Fatal(err)
	}
	_, err := Load([]string{dir}, nil)
	if !errors.Is(err, ErrSymlinkLoop) {
		t.Fatalf("want ErrSymlinkLoop, got %v", err)
	}
}

func TestLoadSkipsSources(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
	write("b.yaml", strings.Replace(cm, "%s", "b", 1))
	write("a/a.yml", strings.Replace(cm, "%s", "a", 1))
	write("c.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	write("kustomization.yaml", "resources: [b.yaml]\n")
	write("chart/Chart.yaml", "name: x\n")
	write("chart/templates/t.yaml", "{{ .Values.x }}\n")
	write(".git/x.yaml", "not: an object\n")
	write("README.md", "# hi\n")
	objs, err := Load([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name())
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, names); diff != "" {
		t.Errorf("objects in lexical file order, sources skipped: -want +got:\n%s", diff)
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"
	want := "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
	if diff := cmp.Diff(want, UnifiedDiff("a", "b", a, b)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if UnifiedDiff("a", "b", a, a) != "" {
		t.Error("equal inputs must give no diff")
	}
	got := DiffTrees(map[string][]byte{"new.yaml": []byte("x\n")}, map[string][]byte{"gone.yaml": []byte("y\n")})
	for _, s := range []string{"--- /dev/null\n+++ b/new.yaml", "--- a/gone.yaml\n+++ /dev/null", "+x", "-y"} {
		if !strings.Contains(got, s) {
			t.Errorf("tree diff lacks %q:\n%s", s, got)
		}
	}
}
