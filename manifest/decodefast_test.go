package manifest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// simpleCases are inputs at the edge of what decodeSimple takes.
var simpleCases = []string{
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: b\n",
	"apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: k\nspec:\n  image: quay.io/kaotoio/kaoto-app:2.4.0\n  ingress:\n    host: k.example.com\n    path: /designer\n",
	"\n\napiVersion: v1\n\nkind: ConfigMap\nmetadata:\n\n    name: a\n",
	"  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a.b: c\n  x: y\n  t: true\n  n: null\n  o: on\n  v: yes\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: False\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: NULL\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  Yes: x\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: a:b\n  l: http://x/y\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n    w\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n   w: x\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n name: a\n  namespace: b\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n namespace: b\n",
	"apiVersion: v1\nkind: List\n",
	"kind: ConfigMap\nmetadata:\n  name: a\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: x\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # c\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: 'v'\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v:\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k:v\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: /\n  l: //x\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: y\n  l: n\n  m: off\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: a-1.2_3/x\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    a: b\ndata:\n  c: d\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n      a: b\n    c: d\n",
	"a:\n b:\n  c:\n   d: e\n",
	// More fields than decodeSimple keeps as a list (maxFieldLines): a map.
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n" + manyFields(40),
}

// manyFields returns n lines "  kN: vN".
func manyFields(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("  k" + strconv.Itoa(i) + ": v" + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// TestDecodeSimpleAgrees: whatever decodeSimple accepts, the full decoder
// decodes to the same objects (maps, sources, field lines, YAML 1.1
// differences) and charges the same budget; the inputs are the cases
// above, the examples, the fuzz corpus and every YAML file of testdata.
func TestDecodeSimpleAgrees(t *testing.T) {
	inputs := map[string][]byte{}
	for i, c := range simpleCases {
		inputs["case "+string(rune('a'+i%26))+string(rune('0'+i/26))] = []byte(c)
	}
	for _, pat := range []string{"../testdata/examples/*.yaml", "../testdata/*/*.yaml", "../testdata/*/*/*.yaml", "../testdata/*/*/*/*.yaml", "../generators/*/testdata/*/*.yaml", "../render/testdata/*/*.yaml"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				inputs[f] = b
			}
		}
	}
	accepted := 0
	for name, data := range inputs {
		if strings.ContainsAny(string(data), "\r\ufeff") {
			continue // normalized by decode before either path
		}
		if checkSimpleAgrees(t, name, data) {
			accepted++
		}
	}
	if accepted < 10 {
		t.Errorf("decodeSimple took %d inputs: the test no longer covers it", accepted)
	}
}

func checkSimpleAgrees(t *testing.T, name string, data []byte) bool {
	t.Helper()
	fastBudget, fullBudget := NewBudget(MaxRenderDecodedSize), NewBudget(MaxRenderDecodedSize)
	fast, ok := decodeSimple("in.yaml", data, fastBudget)
	if !ok {
		return false
	}
	full, err := decodeFull("in.yaml", data, fullBudget)
	if err != nil {
		t.Errorf("%s: decodeSimple took what the full decoder refuses (%v):\n%s", name, err, data)
		return true
	}
	type view struct {
		Map    map[string]any
		Source Source
		Pos    map[string]int
		Fixes  int
	}
	// The lines of the fields, from the map or from decodeSimple's list.
	positions := func(o *Object) map[string]int {
		if o.lines == nil {
			return o.pos
		}
		m := map[string]int{}
		for _, f := range o.lines.fields {
			m[o.lines.paths[f.start:f.end]] = f.line
		}
		return m
	}
	views := func(objs []*Object) []view {
		var out []view
		for _, o := range objs {
			out = append(out, view{o.Map, o.Source, positions(o), len(o.yaml11)})
		}
		return out
	}
	if diff := cmp.Diff(views(full), views(fast)); diff != "" {
		t.Errorf("%s: decodeSimple differs from the full decoder (-full +simple):\n%s\ninput:\n%s", name, diff, data)
	}
	if len(full) == len(fast) {
		// Object.Line agrees on every field, below one, and in brackets.
		for i, o := range full {
			for p := range o.pos {
				for _, q := range []string{p, p + ".below", p + "[0]", "[" + p + "]"} {
					if want, got := o.Line(q), fast[i].Line(q); want != got {
						t.Errorf("%s: Line(%q) = %d after decodeSimple, %d after the full decoder", name, q, got, want)
					}
				}
			}
		}
	}
	if f, s := fullBudget.left.Load(), fastBudget.left.Load(); f != s {
		t.Errorf("%s: budget left %d after the full decoder, %d after decodeSimple", name, f, s)
	}
	return true
}

// FuzzDecodeSimple: on any input decodeSimple takes, the full decoder
// agrees.
func FuzzDecodeSimple(f *testing.F) {
	for _, c := range simpleCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if strings.ContainsAny(string(data), "\r\ufeff") || !utf8.Valid(data) {
			return
		}
		checkSimpleAgrees(t, "fuzz", data)
	})
}
