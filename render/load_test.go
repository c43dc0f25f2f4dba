package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
