package manifest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"
)

// asJSON normalizes a value the way sigs.k8s.io/yaml delivers it.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestYAML11EqualsSigsYAML reads values text as the field of an object
// and compares YAML11 with what sigs.k8s.io/yaml (Helm's values reader)
// gives the same text.
func TestYAML11EqualsSigsYAML(t *testing.T) {
	cases := map[string]struct {
		reason string
		values string
	}{
		"Bools": {"every YAML 1.1-only boolean, unquoted",
			"a: y\nb: Y\nc: yes\nd: Yes\ne: YES\nf: on\ng: On\nh: ON\ni: n\nj: N\nk: no\nl: No\nm: NO\nn: off\no: Off\np: OFF\nq: true\nr: False\n"},
		"Quoted": {"quoted, tagged and block scalars stay strings",
			"a: \"yes\"\nb: 'on'\nc: !!str no\nd: |\n  yes\ne: >-\n  off\n"},
		"Keys": {"keys become the string form of what they resolve to",
			"on: 1\nNo: 2\n010: 4\n0x10: 5\n1.50: 6\n1e3: 7\n\"off\": 9\n2001-01-01: 10\n+12: 11\n0.1: 12\n"},
		"Sequences": {"sequence items, block and flow",
			"a: [yes, no, \"on\", off, 1]\nb:\n- y\n- 'n'\n- - on\n  - x\n"},
		"FlowMapping": {"flow mappings", "a: {on: off, 'no': yes, x: {y: n}}\n"},
		"Nested": {"keys renamed at several depths, values under renamed keys",
			"on:\n  off:\n    yes: no\n    list: [on, {off: yes}]\n"},
		"Aliases": {"an alias reads like its anchor wherever it is used",
			"base: &b {on: yes, k: off}\nuse: *b\nlist: [*b, *b]\n"},
		"MergeKeys": {"merge keys: explicit keys and earlier merges win",
			"base: &b {x: yes, y: on, off: off}\nother: &o {x: 'keep', z: no}\nm:\n  <<: [*b, *o]\n  y: \"explicit\"\n"},
		"Numbers": {"numbers read alike in both versions",
			"a: 0o17\nb: 0b101\nc: 1_000\nd: +12\ne: .5\nf: 1e5\ng: 010\nh: 0x1F\ni: -0b11\nj: 12345678901234567890\nk: 2001-01-01\nl: 1.0\n"},
		"Plain": {"ordinary strings are untouched", "a: hello\nb: yess\nc: ony\nd: ''\ne: ~\nf: null\ng: \"\"\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var want any
			if err := sigsyaml.Unmarshal([]byte(tc.values), &want); err != nil {
				t.Fatal(err)
			}
			indented := "    " + strings.ReplaceAll(strings.TrimSuffix(tc.values, "\n"), "\n", "\n    ")
			doc := "apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec:\n  values:\n" + indented + "\n"
			objs, err := Decode("f.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			got, err := objs[0].YAML11("spec", "values")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(asJSON(t, want), asJSON(t, got)); diff != "" {
				t.Errorf("%s: -sigs.k8s.io/yaml +YAML11:\n%s", tc.reason, diff)
			}
			// The map itself keeps YAML 1.2.
			again, _ := Decode("f.yaml", []byte(doc))
			if diff := cmp.Diff(again[0].Map, objs[0].Map); diff != "" {
				t.Errorf("YAML11 changed the object: %s", diff)
			}
		})
	}
}

func TestYAML11(t *testing.T) {
	t.Run("ListItems", func(t *testing.T) {
		doc := "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: X, metadata: {name: a}, spec: {v: yes}}\n- {apiVersion: v1, kind: X, metadata: {name: b}, spec: {v: 'yes', on: no}}\n"
		objs, err := Decode("f.yaml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var got []any
		for _, o := range objs {
			v, err := o.YAML11("spec")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		want := []any{map[string]any{"v": true}, map[string]any{"v": "yes", "true": false}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the items of a List keep their own readings: -want +got:\n%s", diff)
		}
	})
	t.Run("NullKey", func(t *testing.T) {
		objs, err := Decode("f.yaml", []byte("apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec:\n  values:\n    a:\n      ~: 1\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = objs[0].YAML11("spec", "values")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "spec.values.a.~") {
			t.Errorf("a null key, which Helm cannot read, is an error naming it: %v", err)
		}
	})
	t.Run("KeyCollision", func(t *testing.T) {
		objs, err := Decode("f.yaml", []byte("apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec:\n  values:\n    on: 1\n    \"true\": 2\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = objs[0].YAML11("spec", "values")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "spec.values.on") {
			t.Errorf("two keys YAML 1.1 reads alike are an error naming one: %v", err)
		}
	})
	t.Run("InMemory", func(t *testing.T) {
		o := New(map[string]any{"spec": map[string]any{"v": "yes"}})
		got, err := o.YAML11("spec")
		if err != nil || !cmp.Equal(got, map[string]any{"v": "yes"}) {
			t.Errorf("an object built in memory reads as its map: %v %v", got, err)
		}
		if got.(map[string]any)["v"] = "changed"; o.Map["spec"].(map[string]any)["v"] != "yes" {
			t.Errorf("YAML11 returns a copy")
		}
	})
}
