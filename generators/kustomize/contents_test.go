package kustomize

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// bomb is a billion-laughs ConfigMap: 9^8 strings through aliases.
const bomb = `apiVersion: v1
kind: ConfigMap
metadata:
  name: bomb
data:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
`

// TestYAMLBudget: the expansion of aliases is measured without making
// it: ordinary reuse passes, a bomb is refused at the line of the alias
// that crosses the budget, in any document of the file, and so is an
// alias inside its own anchor (kustomize would recurse forever). What
// does not parse is left to kustomize.
func TestYAMLBudget(t *testing.T) {
	type result struct {
		Line int
		Err  string
	}
	const noKind = "just: data\n"
	cases := map[string]struct {
		reason string
		data   string
		want   result
	}{
		"Plain":       {"a file without aliases", "apiVersion: v1\nkind: ConfigMap\n", result{}},
		"Reuse":       {"an anchor reused a few times", "x: &x {a: 1, b: 2}\ny: *x\nz: {<<: *x, c: 3}\n", result{}},
		"Bomb":        {"a billion laughs", bomb, result{11, "document too complex: aliases expand the file beyond 100000 nodes"}},
		"LaterDoc":    {"a bomb after a document that is not an object", noKind + "---\n" + bomb, result{13, "document too complex: aliases expand the file beyond 100000 nodes"}},
		"Commented":   {"a bomb after a commented separator", noKind + "--- # next\n" + bomb, result{13, "document too complex: aliases expand the file beyond 100000 nodes"}},
		"Shared":      {"two halves of the budget in two documents add up", half + "---\n" + half, result{11, "document too complex: aliases expand the file beyond 100000 nodes"}},
		"OneHalf":     {"control: one half passes", half, result{}},
		"Cycle":       {"an alias inside its own anchor", "a: &a\n  b: *a\n", result{2, "document too complex: alias *a is inside its own anchor"}},
		"MergeBomb":   {"merge keys expand as aliases do", mergeBomb, result{8, "document too complex: aliases expand the file beyond 100000 nodes"}},
		"Invalid":     {"YAML that does not parse: kustomize reports it", "a: [\n", result{}},
		"CRLF":        {"Windows line breaks", strings.ReplaceAll(bomb, "\n", "\r\n"), result{11, "document too complex: aliases expand the file beyond 100000 nodes"}},
		"EmptyString": {"nothing", "", result{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			line, err := yamlBudget([]byte(tc.data))
			got := result{Line: line}
			if err != nil {
				got.Err = err.Error()
				if !errors.Is(err, manifest.ErrTooComplex) {
					t.Errorf("%s: %v is not manifest.ErrTooComplex", tc.reason, err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// half expands to 67885 nodes through aliases, two halves beyond the
// budget of 100000.
const half = `a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: [*d, *d, *d, *d, *d]
`

// mergeBomb grows through merge keys.
const mergeBomb = `a: &a {a0: x, a1: x, a2: x, a3: x, a4: x, a5: x, a6: x, a7: x, a8: x, a9: x}
b: &b {b0: *a, b1: *a, b2: *a, b3: *a, b4: *a, b5: *a, b6: *a, b7: *a, b8: *a, b9: *a}
c: &c {c0: *b, c1: *b, c2: *b, c3: *b, c4: *b, c5: *b, c6: *b, c7: *b, c8: *b, c9: *b}
d: &d {d0: *c, d1: *c, d2: *c, d3: *c, d4: *c, d5: *c, d6: *c, d7: *c, d8: *c, d9: *c}
e: &e {<<: *d, e: 1}
f: &f {<<: *d, f: 1}
g: &g {<<: *d, g: 1}
h: &h {<<: *d, h: 1}
i: {<<: [*e, *f, *g, *h]}
`

// TestReachedFileBudgets: every file a kustomization reaches is checked
// before kustomize reads it: one over fsroot.MaxFileSize is refused
// unread (the test files are sparse), and YAML kustomize parses (a
// resource, a patch file, an inline patch, the kustomization itself, a
// rendered template) whose aliases expand beyond the decoding budget is
// refused. Each error names the Component, the kustomization's file,
// line and field, and the file at fault.
func TestReachedFileBudgets(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	type outcome struct {
		File, Field string
		Line        int
		Object      string
	}
	cases := map[string]struct {
		reason    string
		templated bool
		files     map[string]string
		sparse    map[string]int64 // files made of a comment line and a hole, by size
		want      error            // nil: it renders
		at        outcome          // File relative to the folder
		text      string
	}{
		"HugeResource": {
			reason: "a 1.5 GiB resource",
			files:  map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n- big.yaml\n", "cm.yaml": cm},
			sparse: map[string]int64{"big.yaml": 3 << 29},
			want:   fsroot.ErrTooLarge, at: outcome{"kustomization.yaml", "resources[1]", 3, ""}, text: "big.yaml: file too large: 1610612736 bytes",
		},
		"OneByteOver": {
			reason: "a resource one byte over the cap",
			files:  map[string]string{"kustomization.yaml": "resources:\n- big.yaml\n"},
			sparse: map[string]int64{"big.yaml": fsroot.MaxFileSize + 1},
			want:   fsroot.ErrTooLarge, at: outcome{"kustomization.yaml", "resources[0]", 2, ""}, text: "big.yaml: file too large",
		},
		"HugePatch": {
			reason: "a patch file over the cap",
			files:  map[string]string{"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: big.yaml\n", "cm.yaml": cm},
			sparse: map[string]int64{"big.yaml": 1 << 30},
			want:   fsroot.ErrTooLarge, at: outcome{"kustomization.yaml", "patches[0].path", 3, ""}, text: "big.yaml: file too large",
		},
		"HugeGeneratorFile": {
			reason: "a configMapGenerator source over the cap (data, not YAML)",
			files:  map[string]string{"kustomization.yaml": "configMapGenerator:\n- name: g\n  files:\n  - big.bin\n"},
			sparse: map[string]int64{"big.bin": 1 << 30},
			want:   fsroot.ErrTooLarge, at: outcome{"kustomization.yaml", "configMapGenerator[0].files[0]", 4, ""}, text: "big.bin: file too large",
		},
		"HugeInTemplatedFolder": {
			reason:    "a templated folder is read whole: a file over the cap is refused unread",
			templated: true,
			files:     map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": cm},
			sparse:    map[string]int64{"big.yaml": 1 << 30},
			want:      fsroot.ErrTooLarge, at: outcome{"big.yaml", "", 0, ""}, text: "file too large: 1073741824 bytes",
		},
		"BombResource": {
			reason: "an alias bomb as a resource",
			files:  map[string]string{"kustomization.yaml": "resources:\n- cm.yaml\n- bomb.yaml\n", "cm.yaml": cm, "bomb.yaml": bomb},
			want:   manifest.ErrTooComplex, at: outcome{"kustomization.yaml", "resources[1]", 3, ""}, text: "bomb.yaml:11: document too complex: aliases expand the file beyond 100000 nodes",
		},
		"BombInBase": {
			reason: "an alias bomb in a base's resources",
			files:  map[string]string{"kustomization.yaml": "resources: [base]\n", "base/kustomization.yaml": "resources: [bomb.yaml]\n", "base/bomb.yaml": bomb},
			want:   manifest.ErrTooComplex, at: outcome{"base/kustomization.yaml", "resources[0]", 1, ""}, text: "bomb.yaml:11",
		},
		"BombPatchFile": {
			reason: "an alias bomb as a patch file",
			files:  map[string]string{"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: bomb.yaml\n", "cm.yaml": cm, "bomb.yaml": bomb},
			want:   manifest.ErrTooComplex, at: outcome{"kustomization.yaml", "patches[0].path", 3, ""}, text: "bomb.yaml:11",
		},
		"BombInlinePatch": {
			reason: "an alias bomb as an inline patch",
			files:  map[string]string{"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- patch: |\n" + indent(bomb, "    "), "cm.yaml": cm},
			want:   manifest.ErrTooComplex, at: outcome{"kustomization.yaml", "patches[0].patch", 3, ""}, text: "inline YAML line 11",
		},
		"BombKustomization": {
			reason: "an alias bomb in the kustomization itself",
			files:  map[string]string{"kustomization.yaml": "resources: [cm.yaml]\nx:\n" + strings.SplitN(bomb, "\ndata:\n", 2)[1], "cm.yaml": cm},
			want:   manifest.ErrTooComplex, at: outcome{"kustomization.yaml", "", 8, ""}, text: "aliases expand the file beyond",
		},
		"BombRendered": {
			reason:    "an alias bomb a template renders",
			templated: true,
			files:     map[string]string{"kustomization.yaml": "resources: [bomb.yaml]\n", "bomb.yaml": strings.Replace(bomb, "name: bomb", `name: {{ "bomb" }}`, 1)},
			want:      manifest.ErrTooComplex, at: outcome{"kustomization.yaml", "resources[0]", 1, ""}, text: "bomb.yaml:11",
		},
		"Control": {
			reason: "small files reusing anchors render",
			files: map[string]string{"kustomization.yaml": "resources: [cm.yaml, reuse.yaml]\npatches:\n- path: patch.yaml\n", "cm.yaml": cm,
				"reuse.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reuse\n  labels: &l {a: b}\n  annotations: *l\n",
				"patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata: &d {k: v}\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "app")
			for p, s := range tc.files {
				writeFile(t, filepath.Join(dir, p), []byte(s))
			}
			for p, size := range tc.sparse {
				writeFile(t, filepath.Join(dir, p), []byte("# big\n"))
				if err := os.Truncate(filepath.Join(dir, p), size); err != nil {
					t.Fatal(err)
				}
			}
			spec := newSpec(root, "app", nil)
			if tc.templated {
				spec = templatedSpec(root, "app", nil)
			}
			res, err := Generator{}.Generate(t.Context(), spec, generators.Options{Root: root})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("%s: %v", tc.reason, err)
				}
				if len(res.Objects) != 2 {
					t.Errorf("%s: %d objects, want 2", tc.reason, len(res.Objects))
				}
				return
			}
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrKustomization) {
				t.Fatalf("%s: want %v in %v, got %v", tc.reason, tc.want, ErrKustomization, err)
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("%s: want a *manifest.Error, got %T", tc.reason, err)
			}
			want := tc.at
			want.File = filepath.Join(dir, filepath.FromSlash(want.File))
			want.Object = "Component.wavesmith.io/apps/demo"
			if diff := cmp.Diff(want, outcome{me.File, me.Field, me.Line, me.Object}); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("%s: %q lacks %q", tc.reason, err, tc.text)
			}
		})
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
}
