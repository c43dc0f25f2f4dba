package layout

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
)

// reexported pairs each sentinel of an internal package that reaches a
// public caller with its public name: the same value, so that callers
// outside the module, which cannot import an internal package, check it
// with errors.Is. The names are what the declarations say (checked
// against the source), the values what the test compares.
var reexported = []struct {
	internal, public string
	in, pub          error
}{
	{"internal/fsroot.ErrOutsideRoot", "generators.ErrOutsideRoot", fsroot.ErrOutsideRoot, generators.ErrOutsideRoot},
	{"internal/fsroot.ErrNotRegular", "generators.ErrNotRegular", fsroot.ErrNotRegular, generators.ErrNotRegular},
	{"internal/fsroot.ErrTooLarge", "generators.ErrTooLarge", fsroot.ErrTooLarge, generators.ErrTooLarge},
	{"internal/load.ErrNoRoot", "config.ErrNoRoot", load.ErrNoRoot, config.ErrNoRoot},
	// The other way round: the public package defines it, the sandbox
	// (a plugin's helper) takes its value.
	{"internal/tmplsandbox.ErrBudget", "generators.ErrBudget", tmplsandbox.ErrBudget, generators.ErrBudget},
}

// neverPublic lists the sentinels of internal packages that public
// packages import which no public API returns, each with the reason. A
// public package naming one in its code fails the guard: it would reach
// its callers.
var neverPublic = map[string]string{
	"internal/load.ErrNoGenerators":    "load.Inputs and load.WithoutSources return it; functions, the one public caller of WithoutSources, turns its errors into ResourceList results (messages, no error value)",
	"internal/load.ErrSymlinkLoop":     "only load.Inputs returns it, and only cmd/wavesmith calls it",
	"internal/load.ErrInputsTooLarge":  "only load.Inputs returns it, and only cmd/wavesmith calls it",
	"internal/load.ErrTooDeep":         "only load.Inputs returns it, and only cmd/wavesmith calls it",
	"internal/outtree.ErrRenderedTree": "only load.Inputs returns it (a rendered tree among the inputs), and only cmd/wavesmith calls it",
	"internal/outtree.ErrEmptyRecord":  "only load.Inputs returns it (an empty tree record among the inputs), and only cmd/wavesmith calls it",
	"internal/outtree.ErrWrite":        "the tree is written by cmd/wavesmith (outtree.WriteIn); render and gitops take outtree's Header only",
	"internal/outtree.ErrNotTree":      "the tree is written and read by cmd/wavesmith (outtree.WriteIn, Read); render and gitops take outtree's Header only",
	"internal/outtree.ErrPath":         "the tree is written and read by cmd/wavesmith (outtree.WriteIn, Read); render and gitops take outtree's Header only",
	"internal/outtree.ErrLocked":       "the lock is taken and waited on by cmd/wavesmith (outtree.WriteIn, WaitLock); render and gitops take outtree's Header only",
	"internal/outtree.ErrCleanup":      "the tree is written by cmd/wavesmith (outtree.WriteIn); render and gitops take outtree's Header only",
	"internal/outtree.ErrInterrupted":  "the tree is read by cmd/wavesmith and internal/review (outtree.Read, OpenFS); render and gitops take outtree's Header only",
}

// privatePackages lists the internal packages with sentinels that no
// public package imports, directly or through another package (checked),
// each with the reason: none of their sentinels reaches a public caller.
var privatePackages = map[string]string{
	"internal/argocdplugin": "the Argo CD plugin door, wired by cmd/wavesmith",
	"internal/livediff":     "wavesmith diff, a command",
	"internal/review":       "wavesmith review, a command",
	"internal/schemagen":    "make generate's tooling",
	"internal/ociimage":     "make image's tooling",
	"internal/treecache":    "the tree cache of render -o and check, used by cmd/wavesmith only",
}

// sentinelSource is what the guard reads of a module's non-test files.
type sentinelSource struct {
	// sentinels are the exported package-level Err* variables of every
	// package, keyed "pkg.ErrName" (pkg module-relative); the value is
	// the variable it is declared as ("pkg.ErrOther"), or "".
	sentinels map[string]string
	// named maps each "pkg.ErrName" of an internal package to the public
	// packages whose code names it.
	named map[string][]string
	// imports are the module's packages and what they import.
	imports map[string][]string
}

// readSentinels parses the non-test files of the module at root.
func readSentinels(t *testing.T, root string) sentinelSource {
	t.Helper()
	src := sentinelSource{sentinels: map[string]string{}, named: map[string][]string{}, imports: rootPackages(t, root)}
	fset := token.NewFileSet()
	walkGoFiles(t, root, func(pkg, p string) error {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		imported := map[string]string{} // name in the file -> module-relative package
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue
			}
			name := path.Base(dep)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imported[name] = dep
		}
		// ref returns "pkg.Name" for a selector on an imported module package.
		ref := func(e ast.Expr) string {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return ""
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || imported[x.Name] == "" {
				return ""
			}
			return imported[x.Name] + "." + sel.Sel.Name
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !n.IsExported() || !strings.HasPrefix(n.Name, "Err") {
						continue
					}
					value := ""
					if i < len(vs.Values) {
						value = ref(vs.Values[i])
					}
					src.sentinels[pkg+"."+n.Name] = value
				}
			}
		}
		if isPublic(pkg) {
			ast.Inspect(f, func(n ast.Node) bool {
				r := ref(asExpr(n))
				if r == "" || !isInternal(r) || !strings.HasPrefix(r[strings.LastIndex(r, ".")+1:], "Err") {
					return true
				}
				if by := src.named[r]; len(by) == 0 || by[len(by)-1] != pkg {
					src.named[r] = append(by, pkg) // a folder's files are walked together
				}
				return true
			})
		}
		return nil
	})
	return src
}

func asExpr(n ast.Node) ast.Expr {
	e, _ := n.(ast.Expr)
	return e
}

// sentinelProblems lists, sorted, every sentinel of an internal package
// that a public caller could not check by a public name: neither
// re-exported by one public package (nor the value of a public one), nor
// in never (with its reason) or of a package in private; and every entry
// of never or private that is no longer true.
func sentinelProblems(src sentinelSource, never, private map[string]string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	homes := map[string][]string{} // internal sentinel -> public names of its value
	for name, value := range src.sentinels {
		pkg := name[:strings.LastIndex(name, ".")]
		switch {
		case isPublic(pkg) && isInternal(value):
			homes[value] = append(homes[value], name)
		case isInternal(pkg) && value != "" && isPublic(value[:strings.LastIndex(value, ".")]):
			homes[name] = append(homes[name], value)
		}
	}
	// The import closure of the public packages.
	reached := map[string]bool{}
	var reach func(string)
	reach = func(p string) {
		for _, dep := range src.imports[p] {
			if !reached[dep] {
				reached[dep] = true
				reach(dep)
			}
		}
	}
	for p := range src.imports {
		if isPublic(p) {
			reach(p)
		}
	}
	for name := range src.sentinels {
		pkg := name[:strings.LastIndex(name, ".")]
		if !isInternal(pkg) {
			continue
		}
		pubs := homes[name]
		sort.Strings(pubs)
		_, listed := never[name]
		_, hidden := private[pkg]
		switch {
		case len(pubs) > 1:
			add("%s is re-exported as %s: one public home", name, strings.Join(pubs, " and "))
		case len(pubs) == 1 && listed:
			add("%s is re-exported as %s, yet listed in neverPublic", name, pubs[0])
		case len(pubs) == 1:
		case len(src.named[name]) > 0:
			add("%s is named by public package %s: re-export it from one public package (as generators does fsroot's), or keep it from the public API", name, strings.Join(src.named[name], ", "))
		case !listed && !hidden:
			add("%s is neither re-exported by a public package nor listed in neverPublic with the reason no public API returns it", name)
		}
	}
	for name := range never {
		if _, ok := src.sentinels[name]; !ok {
			add("neverPublic lists %s, which is declared no more", name)
		}
	}
	for pkg := range private {
		if reached[pkg] {
			add("privatePackages lists %s, yet a public package imports it: list its sentinels in neverPublic or re-export them", pkg)
		}
		if _, ok := src.imports[pkg]; !ok {
			add("privatePackages lists %s, which is no package", pkg)
		}
	}
	sort.Strings(problems)
	return problems
}

// TestSentinelsReachPublicNames: every sentinel of an internal package
// that a public API can return has a public name, or is listed with the
// reason none does.
func TestSentinelsReachPublicNames(t *testing.T) {
	src := readSentinels(t, filepath.Join("..", ".."))
	for _, p := range sentinelProblems(src, neverPublic, privatePackages) {
		t.Error(p)
	}
}

// TestReexportedSentinelsAreTheSame: each public name is its internal
// sentinel's value (errors.Is both ways, wrapped too), and reexported
// holds exactly the pairs the source declares.
func TestReexportedSentinelsAreTheSame(t *testing.T) {
	var want, got []string
	for _, r := range reexported {
		got = append(got, r.internal+" = "+r.public)
		if r.in == nil || r.in != r.pub {
			t.Errorf("%s (%v) and %s (%v) are different values", r.internal, r.in, r.public, r.pub)
		}
		if !errors.Is(fmt.Errorf("wrapped: %w", r.in), r.pub) || !errors.Is(fmt.Errorf("wrapped: %w", r.pub), r.in) {
			t.Errorf("errors.Is does not match %s and %s both ways", r.internal, r.public)
		}
	}
	src := readSentinels(t, filepath.Join("..", ".."))
	for name, value := range src.sentinels {
		pkg := name[:strings.LastIndex(name, ".")]
		switch {
		case isPublic(pkg) && isInternal(value):
			want = append(want, value+" = "+name)
		case isInternal(pkg) && value != "" && !isInternal(value):
			want = append(want, name+" = "+value)
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reexported differs from the declarations (-declared +table):\n%s", diff)
	}
}

// TestSentinelProblemsFindsThem is the control of
// TestSentinelsReachPublicNames: a module whose internal packages have a
// sentinel of each kind, and stale lists.
func TestSentinelProblemsFindsThem(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"internal/a/a.go": `package a

import "errors"

var (
	ErrKept   = errors.New("re-exported once")
	ErrTwice  = errors.New("re-exported twice")
	ErrListed = errors.New("listed")
	ErrNew    = errors.New("neither")
	ErrNamed  = errors.New("listed, yet returned by a public package")
	errQuiet  = errors.New("unexported")
	Other     = errors.New("no Err prefix")
)
`,
		"internal/b/b.go": `package b

import "errors"

var ErrB = errors.New("in a listed package that a public one imports")
`,
		"internal/c/c.go": `package c

import "errors"

var ErrC = errors.New("in a listed package no public one imports")
`,
		"internal/d/d.go": `package d

import "github.com/wavesmith/wavesmith/pub"

var ErrD = pub.ErrPub
`,
		"pub/p.go": `package pub

import (
	"errors"
	"fmt"

	"github.com/wavesmith/wavesmith/internal/a"
	"github.com/wavesmith/wavesmith/internal/b"
)

var ErrPub = errors.New("public home")

var (
	ErrKept  = a.ErrKept
	ErrTwice = a.ErrTwice
)

func F() error { _ = b.ErrB; return fmt.Errorf("%w", a.ErrNamed) }
`,
		"pub2/q.go": `package pub2

import alias "github.com/wavesmith/wavesmith/internal/a"

var ErrTwice = alias.ErrTwice
`,
		"cmd/x/x.go": `package main

import "github.com/wavesmith/wavesmith/internal/c"

func main() { _ = c.ErrC }
`,
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	never := map[string]string{
		"internal/a.ErrListed": "reason",
		"internal/a.ErrNamed":  "reason",
		"internal/a.ErrKept":   "reason",
		"internal/a.ErrGone":   "reason",
	}
	private := map[string]string{"internal/b": "reason", "internal/c": "reason", "internal/gone": "reason"}
	want := []string{
		"internal/a.ErrKept is re-exported as pub.ErrKept, yet listed in neverPublic",
		"internal/a.ErrNamed is named by public package pub: re-export it from one public package (as generators does fsroot's), or keep it from the public API",
		"internal/a.ErrNew is neither re-exported by a public package nor listed in neverPublic with the reason no public API returns it",
		"internal/a.ErrTwice is re-exported as pub.ErrTwice and pub2.ErrTwice: one public home",
		"internal/b.ErrB is named by public package pub: re-export it from one public package (as generators does fsroot's), or keep it from the public API",
		"neverPublic lists internal/a.ErrGone, which is declared no more",
		"privatePackages lists internal/b, yet a public package imports it: list its sentinels in neverPublic or re-export them",
		"privatePackages lists internal/gone, which is no package",
	}
	if diff := cmp.Diff(want, sentinelProblems(readSentinels(t, root), never, private)); diff != "" {
		t.Errorf("sentinelProblems (-want +got):\n%s", diff)
	}
}

// TestArchitectureListsEverySentinel: the first column of ARCHITECTURE.md's
// Errors table names every sentinel at its home (an internal one by its
// full path), and the public name of each re-exported one ("(= `name`)"),
// and no sentinel that is not declared.
func TestArchitectureListsEverySentinel(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Errors\n")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no \"## Errors\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	src := readSentinels(t, root)
	// full returns the declared sentinel a table name stands for: a full
	// module-relative name, or a public package's last element.
	full := func(name string) string {
		if _, ok := src.sentinels[name]; ok {
			return name
		}
		for s := range src.sentinels {
			if pkg := s[:strings.LastIndex(s, ".")]; !isInternal(pkg) && path.Base(pkg)+s[len(pkg):] == name {
				return s
			}
		}
		return ""
	}
	listed := map[string][]string{} // sentinel -> the public names its row gives
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line[1:], "|", 2)[0]
		names := strings.Split(first, "`")
		home := full(names[1])
		if home == "" {
			t.Errorf("ARCHITECTURE.md's Errors table lists %s, which is not declared (a public package by its last element, an internal one by its full path)", names[1])
			continue
		}
		listed[home] = nil
		for i := 3; i < len(names); i += 2 {
			if strings.HasSuffix(strings.TrimSpace(names[i-1]), "=") {
				listed[home] = append(listed[home], full(names[i]))
			}
		}
	}
	public := map[string][]string{}
	for name, value := range src.sentinels {
		if pkg := name[:strings.LastIndex(name, ".")]; isPublic(pkg) && isInternal(value) {
			public[value] = append(public[value], name)
		}
	}
	for name, value := range src.sentinels {
		if value != "" {
			continue // a re-export: listed at its home
		}
		names, ok := listed[name]
		if !ok {
			t.Errorf("ARCHITECTURE.md's Errors table does not list %s", name)
			continue
		}
		sort.Strings(names)
		sort.Strings(public[name])
		if diff := cmp.Diff(public[name], names); diff != "" {
			t.Errorf("ARCHITECTURE.md's Errors row of %s names other public names, \"(= `pkg.Name`)\" (-declared +listed):\n%s", name, diff)
		}
	}
}
