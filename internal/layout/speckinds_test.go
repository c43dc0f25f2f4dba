package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// specHomes are the folders where a spec kind or a Component source may
// be named by a string: its generator and the API types. Everything else
// (the engine, loading, the doors, status) learns them from the
// generator registry or the API types' constants, so that adding a kind
// or a source touches only its homes (ARCHITECTURE.md's recipes).
var specHomes = []string{
	"api/",
	"generators/kaoto/", "generators/component/", "generators/helm/", "generators/kustomize/",
	"test/",       // the nested test modules drive the binaries with specs
	"hack/bench/", // benchmark inputs, written as a user writes them
}

// specWords are string literals that name a spec kind or a Component
// source when they are the whole literal.
var specWords = map[string]bool{
	"Kaoto": true, "Component": true,
	"chart": true, "kustomization": true, "valuesFiles": true,
	"designer.kaoto.io": true, "wavesmith.io": true,
}

// specPrefixes are beginnings of literals that name a spec's apiVersion
// or a field of a spec kind.
var specPrefixes = []string{
	"designer.kaoto.io/", "wavesmith.io/v",
	"spec.source.", "spec.valuesFiles",
}

// namesSpec tells whether the string literal s names a spec kind, a spec
// apiVersion or a Component source or field.
func namesSpec(s string) bool {
	if specWords[s] {
		return true
	}
	for _, p := range specPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestSpecNamesStayHome: no string literal names a spec kind, a spec
// apiVersion or a Component source outside the kind's generator, the
// API types and tests (comments and help texts that merely mention them
// are fine).
func TestSpecNamesStayHome(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case "bin", "out", ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			for _, h := range specHomes {
				if rel+"/" == h {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && namesSpec(s) {
				pos := fset.Position(lit.Pos())
				found = append(found, rel+":"+strconv.Itoa(pos.Line)+": "+lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s: a spec kind, apiVersion or Component source named outside its generator and the API types; take it from the registry or the API types' constants", f)
	}
}

// TestNamesSpec: the check can fail.
func TestNamesSpec(t *testing.T) {
	for s, want := range map[string]bool{
		"Kaoto": true, "chart": true, "wavesmith.io/v1alpha1": true, "designer.kaoto.io/v1alpha1": true,
		"spec.source.chart.path": true, "spec.valuesFiles[0]": true,
		"wavesmith.io/apply-order": false, "Render Kaoto and Component specs": false, "charts": false,
	} {
		if got := namesSpec(s); got != want {
			t.Errorf("namesSpec(%q) = %v, want %v", s, got, want)
		}
	}
}
