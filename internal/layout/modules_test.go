package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEveryModuleIsTested: `go test ./...` and `go vet ./...` at the root
// do not enter the nested modules (test/*, with their own dependency
// versions, which a go.work would unify away). Each nested module with
// tests must be listed in MODULE_TESTS (Makefile, mk/*.mk), which make test
// runs; tool modules under hack/tools are built by make, not tested.
func TestEveryModuleIsTested(t *testing.T) {
	root := filepath.Join("..", "..")
	var modules []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == "out" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" && filepath.Dir(p) != root {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			if !strings.HasPrefix(rel, filepath.Join("hack", "tools")) {
				modules = append(modules, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	files, _ := filepath.Glob(filepath.Join(root, "mk", "*.mk"))
	files = append(files, filepath.Join(root, "Makefile"))
	re := regexp.MustCompile(`(?m)^MODULE_TESTS\s*[:+]?=\s*(.*)$`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			listed = append(listed, strings.Fields(m[1])...)
		}
	}
	sort.Strings(modules)
	sort.Strings(listed)
	if len(modules) == 0 {
		t.Fatal("no nested module found: is the test run from its package folder?")
	}
	if diff := cmp.Diff(modules, listed); diff != "" {
		t.Errorf("nested modules (-found +listed in MODULE_TESTS):\n%s", diff)
	}
}
