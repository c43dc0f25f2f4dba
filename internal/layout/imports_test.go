package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wavesmith/wavesmith"

// Tiers of the root module's packages, lowest first: a package imports
// (outside its tests) packages of its own tier or of a lower one, never
// of a higher one, so that no arrow runs back up. ARCHITECTURE.md
// ("Layout") explains them; a new package gets a row here and there.
var tiers = []struct {
	name     string
	packages []string // a path ending in "/..." is every package below it too
}{
	{"foundations: types, objects, reading and writing files", []string{
		"api/...", "manifest", "kindscope",
		"internal/fsroot", "internal/outtree", "internal/treecache", "internal/textdiff", "internal/parallel", "internal/keyhash",
		"internal/schemagen", "internal/ociimage", // release tooling: api and the standard library only
	}},
	{"contracts", []string{"generators", "gitops"}},
	{"generators and GitOps engines", []string{"generators/...", "gitops/...", "internal/tmplsandbox"}}, // the sandbox: the template guard both generators share
	{"the engine and its loading", []string{"render", "internal/load"}},
	{"what the doors share", []string{"config", "internal/livediff", "internal/review", "internal/status"}},
	{"doors", []string{"functions", "internal/argocdplugin"}},
	{"commands", []string{"cmd/...", "hack/...", "test/..."}}, // test/*: suites that drive the binaries, should one join the root module
}

// testHelpers are imported by _test.go files only.
var testHelpers = []string{"internal/golden", "internal/testobj", "internal/kubetest", "internal/testtool", "internal/layout"}

func matches(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

// tierOf returns the tier of pkg (module-relative), the most specific
// pattern winning ("generators" over "generators/..."), or -1.
func tierOf(pkg string) int {
	tier, best := -1, -1
	for i, t := range tiers {
		for _, p := range t.packages {
			if matches(p, pkg) && len(p) > best {
				tier, best = i, len(p)
			}
		}
	}
	return tier
}

func isTestHelper(pkg string) bool {
	for _, h := range testHelpers {
		if pkg == h {
			return true
		}
	}
	return false
}

// walkGoFiles calls fn with each non-test Go file of the root module
// (its package folder relative and slash-separated, and its path). The
// nested modules (test/*, hack/tools/*) are other modules: they reach
// wavesmith through its binaries.
func walkGoFiles(t *testing.T, root string, fn func(pkg, path string) error) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "bin", "out", "dist", ".git", "node_modules":
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		return fn(filepath.ToSlash(rel), p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// rootPackages maps each package folder of the root module (relative,
// slash-separated) to the module packages its non-test files import.
func rootPackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	walkGoFiles(t, root, func(rel, p string) error {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		imports := pkgs[rel]
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(path, module+"/"); ok {
				imports = append(imports, dep)
			}
		}
		pkgs[rel] = imports
		return nil
	})
	if len(pkgs) == 0 {
		t.Fatal("no package found: is the test run from its package folder?")
	}
	return pkgs
}

// TestImportsRunDown: the import graph of the root module runs down the
// tiers; doors are imported by commands only; test helpers by tests only;
// every package has a tier.
func TestImportsRunDown(t *testing.T) {
	pkgs := rootPackages(t, filepath.Join("..", ".."))
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	doors := len(tiers) - 2
	for _, p := range names {
		from := tierOf(p)
		if from < 0 && !isTestHelper(p) {
			t.Errorf("%s has no tier: place it in internal/layout's tiers and in ARCHITECTURE.md", p)
			continue
		}
		for _, dep := range pkgs[p] {
			to := tierOf(dep)
			switch {
			case isTestHelper(dep):
				t.Errorf("%s imports the test helper %s outside its tests", p, dep)
			case strings.HasPrefix(dep, "cmd/"):
				t.Errorf("%s imports the command %s", p, dep)
			case to == doors && from != doors+1:
				t.Errorf("%s imports the door %s: doors are wired by commands only", p, dep)
			case isTestHelper(p):
				// test helpers may use what they test
			case to > from:
				t.Errorf("%s (%s) imports %s (%s): the arrow runs back up", p, tiers[from].name, dep, tiers[to].name)
			}
		}
	}
}

// TestTiersMatchTheTree: every tier pattern names a package that exists
// (or, for path/..., a folder), so the table cannot keep a room the house
// no longer has.
func TestTiersMatchTheTree(t *testing.T) {
	pkgs := rootPackages(t, filepath.Join("..", ".."))
	for _, tier := range tiers {
		for _, pattern := range tier.packages {
			found := false
			for p := range pkgs {
				if matches(pattern, p) {
					found = true
					break
				}
			}
			if base, ok := strings.CutSuffix(pattern, "/..."); ok && !found {
				_, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(base)))
				found = err == nil // a folder of nested modules
			}
			if !found {
				t.Errorf("tier %q names %s, which holds no package", tier.name, pattern)
			}
		}
	}
}

// TestArchitectureTableTrue: ARCHITECTURE.md's package table lists every
// package of the root module (a row may name several), and names no path
// that does not exist.
func TestArchitectureTableTrue(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	cell := regexp.MustCompile("`([^`]+)`")
	// The table of the "## Packages" section (the Errors table below names
	// sentinels, not packages).
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no \"## Packages\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line[1:], "|", 2)[0]
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			name := strings.TrimSuffix(m[1], "/")
			listed[name] = true
			if ms, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(name))); len(ms) == 0 {
				t.Errorf("ARCHITECTURE.md's table names %s, which does not exist", name)
			}
		}
	}
	for p := range rootPackages(t, root) {
		if listed[p] || p == "." {
			continue
		}
		covered := false
		for l := range listed {
			if m, _ := filepath.Match(l, p); m || (strings.HasSuffix(l, "/*") && strings.HasPrefix(p, strings.TrimSuffix(l, "*"))) {
				covered = true
				break
			}
		}
		if !covered {
			t.Errorf("ARCHITECTURE.md's package table does not name %s", p)
		}
	}
}
