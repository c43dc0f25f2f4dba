package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// internalExceptions are exported identifiers of public packages whose
// signature names an internal type on purpose, each with its reason.
// The key is what apiLeaks reports before the colon.
var internalExceptions = map[string]string{}

// isInternal reports whether the import path is an internal package (of
// wavesmith or of any module): code outside its parent cannot import it,
// so it cannot name, build or satisfy its types.
func isInternal(path string) bool {
	return strings.HasPrefix(path, "internal/") || strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}

// isPublic reports whether a root-module package (module-relative) is an
// API for others (ARCHITECTURE.md, "Layout"): neither internal nor a
// command.
func isPublic(pkg string) bool {
	if isInternal(pkg) || pkg == "." {
		return false
	}
	for _, p := range []string{"cmd/...", "hack/...", "test/..."} {
		if matches(p, pkg) {
			return false
		}
	}
	return true
}

// exportImporter returns an importer reading the compiler's export data of
// pkgs (import paths) and their dependencies, as go list -export builds it
// (from the build cache after a go build).
func exportImporter(t *testing.T, fset *token.FileSet, pkgs ...string) types.Importer {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, pkgs...)...)
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.Bytes())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// apiLeaks lists each exported identifier of pkg (its functions, methods
// of its exported types, promoted ones too, exported fields, variables,
// constants, type definitions and aliases) whose type names a type of an
// internal package, as "pkg.Ident: internal/path.Type, ...", sorted.
func apiLeaks(pkg *types.Package) []string {
	var leaks []string
	report := func(ident string, found map[string]bool) {
		if len(found) == 0 {
			return
		}
		names := make([]string, 0, len(found))
		for n := range found {
			names = append(names, n)
		}
		sort.Strings(names)
		leaks = append(leaks, pkg.Name()+"."+ident+": "+strings.Join(names, ", "))
	}
	check := func(ident string, t types.Type) {
		found := map[string]bool{}
		internalTypes(pkg, t, found, map[types.Type]bool{})
		report(ident, found)
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Func, *types.Var, *types.Const:
			check(name, obj.Type())
		case *types.TypeName:
			if alias, ok := obj.Type().(*types.Alias); ok {
				check(name, alias.Rhs())
				continue
			}
			named, ok := obj.Type().(*types.Named)
			if !ok {
				continue
			}
			if tp := named.TypeParams(); tp != nil {
				for i := range tp.Len() {
					check(name, tp.At(i).Constraint())
				}
			}
			switch u := named.Underlying().(type) {
			case *types.Struct:
				for i := range u.NumFields() {
					if f := u.Field(i); f.Exported() {
						check(name+"."+f.Name(), f.Type())
					}
				}
			case *types.Interface:
				for i := range u.NumEmbeddeds() {
					check(name, u.EmbeddedType(i))
				}
				for i := range u.NumExplicitMethods() {
					if m := u.ExplicitMethod(i); m.Exported() {
						check(name+"."+m.Name(), m.Type())
					}
				}
			default:
				check(name, u)
			}
			if _, isInterface := named.Underlying().(*types.Interface); isInterface {
				continue
			}
			ms := types.NewMethodSet(types.NewPointer(named))
			for i := range ms.Len() {
				if m := ms.At(i).Obj(); m.Exported() {
					check(name+"."+m.Name(), m.Type())
				}
			}
		}
	}
	return leaks
}

// internalTypes adds to found every internal type t names. It looks into
// the unexported types of pkg that t reaches (their exported fields and
// methods are visible through t), not into other packages' types: a
// public package's are checked as its own, the others are not ours.
func internalTypes(pkg *types.Package, t types.Type, found map[string]bool, seen map[types.Type]bool) {
	if t == nil || seen[t] {
		return
	}
	seen[t] = true
	walk := func(t types.Type) { internalTypes(pkg, t, found, seen) }
	switch t := t.(type) {
	case *types.Alias:
		walk(t.Rhs())
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
			found[obj.Pkg().Path()+"."+obj.Name()] = true
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				walk(args.At(i))
			}
		}
		if obj.Pkg() == pkg && !obj.Exported() {
			walk(t.Underlying())
			ms := types.NewMethodSet(types.NewPointer(t))
			for i := range ms.Len() {
				if m := ms.At(i).Obj(); m.Exported() {
					walk(m.Type())
				}
			}
		}
	case *types.Pointer:
		walk(t.Elem())
	case *types.Slice:
		walk(t.Elem())
	case *types.Array:
		walk(t.Elem())
	case *types.Chan:
		walk(t.Elem())
	case *types.Map:
		walk(t.Key())
		walk(t.Elem())
	case *types.Signature:
		walk(t.Params())
		walk(t.Results())
	case *types.Tuple:
		for i := range t.Len() {
			walk(t.At(i).Type())
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() {
				walk(f.Type())
			}
		}
	case *types.Interface:
		for i := range t.NumEmbeddeds() {
			walk(t.EmbeddedType(i))
		}
		for i := range t.NumExplicitMethods() {
			if m := t.ExplicitMethod(i); m.Exported() {
				walk(m.Type())
			}
		}
	case *types.TypeParam:
		walk(t.Constraint())
	case *types.Union:
		for i := range t.Len() {
			walk(t.Term(i).Type())
		}
	}
}

// TestPublicAPINamesNoInternalType: no exported identifier of a public
// package (ARCHITECTURE.md, "Layout") names a type of an internal
// package in its signature, as callers outside the module could neither
// build nor satisfy it; internalExceptions lists the ones kept, each with
// its reason.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	var public []string
	for p := range rootPackages(t, filepath.Join("..", "..")) {
		if isPublic(p) {
			public = append(public, module+"/"+p)
		}
	}
	sort.Strings(public)
	fset := token.NewFileSet()
	imp := exportImporter(t, fset, public...)
	var leaks []string
	for _, p := range public {
		pkg, err := imp.Import(p)
		if err != nil {
			t.Fatal(err)
		}
		leaks = append(leaks, apiLeaks(pkg)...)
	}
	used := map[string]bool{}
	for _, l := range leaks {
		key, _, _ := strings.Cut(l, ":")
		if _, ok := internalExceptions[key]; ok {
			used[key] = true
			continue
		}
		t.Errorf("%s: an exported identifier of a public package names an internal type; take an interface or type of a public package (or list it in internalExceptions with the reason)", l)
	}
	for k := range internalExceptions {
		if !used[k] {
			t.Errorf("internalExceptions lists %s, which names no internal type any more", k)
		}
	}
}

// TestAPILeaksFindsThem is the control of TestPublicAPINamesNoInternalType:
// a package naming an internal type in each place it looks, and in places
// it must not report.
func TestAPILeaksFindsThem(t *testing.T) {
	const src = `package control

import "github.com/wavesmith/wavesmith/internal/fsroot"

func Leak(r *fsroot.Root) error { return nil }
func Fine(s string) error        { return nil }
func hidden(r *fsroot.Root)      {}

type T struct {
	Field []*fsroot.Root
	field *fsroot.Root
	Ok    string
}

func (T) Method() map[string]fsroot.Root { return nil }
func (T) method() *fsroot.Root          { return nil }

type I interface{ Open(dir string) (*fsroot.Root, error) }

type A = fsroot.Root

type inner struct{ Deep func(*fsroot.Root) }

func Reach() inner { return inner{} }

var V = fsroot.OpenRoot

var Err = fsroot.ErrOutsideRoot
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "control.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: exportImporter(t, fset, module+"/internal/fsroot")}
	pkg, err := conf.Check("example.com/control", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"control.A: github.com/wavesmith/wavesmith/internal/fsroot.Root",
		"control.I.Open: github.com/wavesmith/wavesmith/internal/fsroot.Root",
		"control.Leak: github.com/wavesmith/wavesmith/internal/fsroot.Root",
		"control.Reach: github.com/wavesmith/wavesmith/internal/fsroot.Root",
		"control.T.Field: github.com/wavesmith/wavesmith/internal/fsroot.Root",
		"control.T.Method: github.com/wavesmith/wavesmith/internal/fsroot.Root",
		"control.V: github.com/wavesmith/wavesmith/internal/fsroot.Root",
	}
	if diff := cmp.Diff(want, apiLeaks(pkg)); diff != "" {
		t.Errorf("apiLeaks (-want +got):\n%s", diff)
	}
}
