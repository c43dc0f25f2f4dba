package manifest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}}
	cases := map[string]struct {
		reason string
		in     string
		want   []map[string]any
	}{
		"MultiDocComments": {
			reason: "comments, empty documents and separators are handled",
			in:     "# lead\n---\napiVersion: v1 # x\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: v\n---\n---\n",
			want:   []map[string]any{cm},
		},
		"CRLF": {
			reason: "Windows line ends read like Unix ones",
			in:     "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\ndata:\r\n  k: v\r\n",
			want:   []map[string]any{cm},
		},
		"BOMEveryDocument": {
			reason: "a byte order mark starting any document is dropped, as kubectl decodes each document alone",
			in:     "\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n---\n\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n--- # c\r\n\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n",
			want:   []map[string]any{cm, cm, cm},
		},
		"AnchorRedefined": {
			reason: "a later document may define an anchor of the same name and use it",
			in:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {k: v}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {k: v}\nx: *d\n",
			want:   []map[string]any{cm, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}, "x": map[string]any{"k": "v"}}},
		},
		"JSON": {
			reason: "JSON is YAML",
			in:     `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`,
			want:   []map[string]any{cm},
		},
		"List": {
			reason: "a v1 List is replaced by its items",
			in:     "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data: {k: v}\n",
			want:   []map[string]any{cm},
		},
		"AliasAndMerge": {
			reason: "aliases and merge keys expand",
			in:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: &d {k: v}\ndata:\n  <<: *d\n",
			want:   []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "x": map[string]any{"k": "v"}, "data": map[string]any{"k": "v"}}},
		},
		"Types": {
			reason: "ints are int64, floats float64, YAML 1.1 booleans stay strings",
			in:     "apiVersion: v1\nkind: X\nmetadata: {name: a}\ni: 3\nf: 1.5\nb: true\ny: yes\nn: ~\n",
			want:   []map[string]any{{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "a"}, "i": int64(3), "f": 1.5, "b": true, "y": "yes", "n": nil}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := Decode("in.yaml", []byte(tc.in))
			if err != nil {
				t.Fatalf("%s: Decode: %v", tc.reason, err)
			}
			var got []map[string]any
			for _, o := range objs {
				got = append(got, o.Map)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	bomb := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n" +
		"a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n"
		prev = n
	}
	cases := map[string]struct {
		reason   string
		in       string
		wantErr  error
		wantLine int
		wantText string
	}{
		"Malformed": {
			reason: "syntax errors carry the line", in: "apiVersion: v1\nkind: X\nmetadata:\n  name: [a\n",
			wantErr: ErrSyntax, wantLine: 3, // yaml.v3 reports the line where the enclosing block starts
		},
		"NotUTF8": {
			reason: "bytes that are not UTF-8 are refused with their line", in: "apiVersion: v1\nkind: X\nmetadata: {name: \xff}\n",
			wantErr: ErrEncoding, wantLine: 3,
		},
		"AliasBomb": {
			reason: "a billion-laughs document is refused, not expanded", in: bomb,
			wantErr: ErrTooComplex,
		},
		"NoKind": {
			reason: "a document without kind is not an object", in: "apiVersion: v1\nmetadata: {name: a}\n",
			wantErr: ErrNotObject, wantText: "kind",
		},
		"Scalar": {
			reason: "a scalar document is not an object", in: "hello\n",
			wantErr: ErrNotObject,
		},
		"AliasToEarlierDocument": {
			reason:  "anchors are local to their document: an alias to an anchor of an earlier document is refused at the alias",
			in:      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {k: v}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: *d\n",
			wantErr: ErrSyntax, wantLine: 9, wantText: `unknown anchor "d"`,
		},
		"MergeFromEarlierDocument": {
			reason:  "a merge key naming an anchor of an earlier document is refused too",
			in:      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {k: v}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  <<: *d\n",
			wantErr: ErrSyntax, wantLine: 10, wantText: `unknown anchor "d"`,
		},
		"DuplicateKey": {
			reason: "duplicate keys are refused with their line", in: "apiVersion: v1\nkind: X\nmetadata: {name: a}\nkind: Y\n",
			wantErr: ErrSyntax, wantLine: 4,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := Decode("in.yaml", []byte(tc.in))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.wantErr, err)
			}
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("%s: want a *manifest.Error, got %T", tc.reason, err)
			}
			if me.File != "in.yaml" {
				t.Errorf("%s: file %q, want in.yaml", tc.reason, me.File)
			}
			if tc.wantLine != 0 && me.Line != tc.wantLine {
				t.Errorf("%s: line %d, want %d (%v)", tc.reason, me.Line, tc.wantLine, err)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("%s: %q does not mention %q", tc.reason, err, tc.wantText)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Logf("%s: took %v", tc.reason, d) // reported, never failed on
			}
		})
	}
}

func TestLine(t *testing.T) {
	objs, err := Decode("f.yaml", []byte("apiVersion: v1\nkind: X\nmetadata:\n  name: a\n  annotations:\n    wavesmith.io/update-policy: x\nspec:\n  ingress:\n    host: h\n  list:\n  - a: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"spec.ingress.host": 9, "spec.ingress": 8, "spec.unknown": 7, "metadata.name": 4,
		KeyPath("metadata.annotations", "wavesmith.io/update-policy"): 6, "metadata.annotations[other.io/x]": 5,
		"spec.list[0].a": 11, "spec.list[0]": 11, "spec.list[3]": 10} {
		if got := objs[0].Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
}
