package manifest

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

func TestEncodeLayout(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     map[string]any
		want   string
	}{
		"SortedNested": {
			reason: "keys are sorted, maps indent by two, sequences sit at their key's indentation",
			in: map[string]any{
				"kind": "Service", "apiVersion": "v1",
				"spec": map[string]any{"ports": []any{map[string]any{"port": int64(8080), "name": "http"}}, "selector": map[string]any{}},
			},
			want: "apiVersion: v1\nkind: Service\nspec:\n  ports:\n  - name: http\n    port: 8080\n  selector: {}\n",
		},
		"Quoting": {
			reason: "strings a YAML reader would take for something else are quoted",
			in: map[string]any{
				"a": "true", "b": "", "c": "8080", "d": "yes", "e": "/$2", "f": "/designer(/|$)(.*)",
				"g": "- x", "h": "a: b", "i": "#x", "j": "null", "k": "1.5", "l": "0x1F", "m": "2001-12-14",
				"n": "v1.2.3", "o": "*", "p": "~", "q": " lead", "r": "1e3", "s": "ON",
			},
			want: "a: \"true\"\nb: \"\"\nc: \"8080\"\nd: \"yes\"\ne: /$2\nf: /designer(/|$)(.*)\ng: \"- x\"\nh: \"a: b\"\ni: \"#x\"\nj: \"null\"\nk: \"1.5\"\nl: \"0x1F\"\nm: \"2001-12-14\"\n\"n\": v1.2.3\no: \"*\"\np: \"~\"\nq: \" lead\"\nr: \"1e3\"\ns: \"ON\"\n",
		},
		"Literal": {
			reason: "multi-line strings become block scalars",
			in:     map[string]any{"data": map[string]any{"a": "x\ny\n", "b": "x\ny", "c": "x\n\n"}},
			want:   "data:\n  a: |\n    x\n    y\n  b: |-\n    x\n    y\n  c: |+\n    x\n\n",
		},
		"Scalars": {
			reason: "numbers, booleans, null and empty collections",
			in:     map[string]any{"i": int64(-3), "f": 1.5, "t": true, "n": nil, "l": []any{}, "nested": []any{[]any{"a", "b"}, int64(1)}},
			want:   "f: 1.5\ni: -3\nl: []\n\"n\": null\nnested:\n- - a\n  - b\n- 1\nt: true\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			Encode(&b, tc.in)
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("%s\nEncode(...): -want +got:\n%s", tc.reason, diff)
			}
			assertRoundTrip(t, tc.in, b.Bytes())
		})
	}
}

// assertRoundTrip checks that both YAML readers Kubernetes tools use read
// the encoded bytes back as the original value.
func assertRoundTrip(t *testing.T, want map[string]any, b []byte) {
	t.Helper()
	objs, err := decodeAny(b)
	if err != nil {
		t.Fatalf("yaml.v3 cannot read the output: %v\n%s", err, b)
	}
	if diff := cmp.Diff(normalize(want), normalize(objs)); diff != "" {
		t.Errorf("yaml.v3 reads it back differently: -want +got:\n%s\n%s", diff, b)
	}
	var viaSigs map[string]any
	if err := sigsyaml.Unmarshal(b, &viaSigs); err != nil {
		t.Fatalf("sigs.k8s.io/yaml cannot read the output: %v\n%s", err, b)
	}
	if diff := cmp.Diff(normalize(want), normalize(viaSigs)); diff != "" {
		t.Errorf("sigs.k8s.io/yaml reads it back differently: -want +got:\n%s\n%s", diff, b)
	}
}

func decodeAny(b []byte) (map[string]any, error) {
	var m map[string]any
	err := yaml.Unmarshal(b, &m)
	return m, err
}

// normalize maps every number to float64, as JSON does.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range t {
			m[k] = normalize(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = normalize(e)
		}
		return s
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case uint64:
		return float64(t)
	}
	return v
}

// TestEncodeRoundTripRandom encodes random strings drawn from characters
// that matter to YAML and checks both readers get them back unchanged.
func TestEncodeRoundTripRandom(t *testing.T) {
	alphabet := []string{"a", "Z", "0", "1", "9", ".", "-", "+", ":", " ", "#", "'", "\"", "\\", "\n", "\t", "{", "}", "[", "]",
		",", "&", "*", "!", "|", ">", "%", "@", "`", "?", "~", "e", "x", "_", "é", "ü", "😀", "\u00a0", "/", "=", "<", "y", "n", "o"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 5000; i++ {
		var sb strings.Builder
		for n := r.Intn(8); n >= 0; n-- {
			sb.WriteString(alphabet[r.Intn(len(alphabet))])
		}
		s := sb.String()
		in := map[string]any{"k": s, s: "v", "l": []any{s}}
		var b bytes.Buffer
		Encode(&b, in)
		assertRoundTrip(t, in, b.Bytes())
		if t.Failed() {
			t.Fatalf("string %q", s)
		}
	}
}

func FuzzEncodeRoundTrip(f *testing.F) {
	for _, s := range []string{"", "true", "a: b", "x\ny", " x", "- ", "0o17", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8Valid(s) {
			return
		}
		in := map[string]any{"k": s, "l": []any{s}}
		var b bytes.Buffer
		Encode(&b, in)
		assertRoundTrip(t, in, b.Bytes())
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// TestYAMLWord: the allocation-free check agrees with lower-casing, for
// ASCII in every case and for Unicode that lower-cases to ASCII.
func TestYAMLWord(t *testing.T) {
	for _, s := range []string{"y", "Y", "yes", "YeS", "n", "NO", "True", "fALSE", "On", "OFF", "Null", "~",
		".inf", ".INF", "-.Inf", "+.inf", ".NaN", "=", "<<", "", "yess", "nul", "tcp", "TCP", "None", "-.\u0130nf", "\u212a", "0123456789", "-.inf-long-string"} {
		want := yamlWordLower(s)
		if got := yamlWord(s); got != want {
			t.Errorf("yamlWord(%q) = %v, want %v", s, got, want)
		}
	}
	for _, w := range yamlWords {
		if !yamlWord(w) || !yamlWord(strings.ToUpper(w)) {
			t.Errorf("yamlWord(%q) or its upper case is false", w)
		}
	}
	if !yamlWord("-.\u0130nf") {
		t.Error(`"-.\u0130nf" lower-cases to "-.inf"`)
	}
}

// TestEncoderRemembersShapes: an Encoder reused over mappings of changing
// key sets under the same keys (as many keys, one of them different,
// after nested values; a set it remembers plus one key; more shapes than
// it remembers; a sequence of items) writes each exactly as a fresh one
// does.
func TestEncoderRemembersShapes(t *testing.T) {
	shapes := []map[string]any{
		{"spec": map[string]any{"a": "1x", "b": "2x"}},
		{"spec": map[string]any{"a": "1y", "c": "3y"}},
		{"spec": map[string]any{"a": "1z", "b": "2z", "c": "3z"}},
		{"spec": map[string]any{"b": "2w", "a": "1w"}},
		{"spec": map[string]any{"d": "x", "e": "y"}},
		{"spec": map[string]any{"f": "x", "g": "y"}},
		{"spec": map[string]any{"h": "x", "i": "y"}},
		{"spec": map[string]any{"a": "x", "c": "y"}},
		{"spec": map[string]any{"items": []any{map[string]any{"k": "v", "l": "w"}, map[string]any{"k": "v", "m": "w"}, []any{map[string]any{"k": "v", "l": "w"}}}}},
		{"spec": []any{map[string]any{"a": "1", "b": "2"}, map[string]any{"b": "2", "z": "3"}}},
		{"other": map[string]any{"a": "1", "b": "2"}, "spec": map[string]any{"b": "2", "zz": "3"}},
		{"quoted": map[string]any{"n": "x", "on": "y", "a b": "z", "#c": "w"}},
		// A known set whose first keys match, nested values written, then
		// a key missing: what was written is taken back.
		{"spec": map[string]any{"a": map[string]any{"x": "1", "y": []any{map[string]any{"k": "v"}}}, "b": "2"}},
		{"spec": map[string]any{"a": map[string]any{"x": "1", "y": []any{map[string]any{"k": "w", "n": "m"}}}, "c": "3"}},
		{"spec": map[string]any{"a": map[string]any{"x": "1", "z": "2"}, "b": map[string]any{"x": "1"}}},
		// More shapes under spec than the encoder remembers.
		{"spec": map[string]any{"j": "x", "k": "y"}},
		{"spec": map[string]any{"l": "x", "m": "y"}},
		{"spec": map[string]any{"n": "x", "o": "y", "p": "z"}},
	}
	var reused Encoder
	for round := 0; round < 3; round++ {
		for i, m := range shapes {
			var want, got bytes.Buffer
			Encode(&want, m)
			reused.Encode(&got, m)
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("round %d, shape %d: -fresh +reused:\n%s", round, i, diff)
			}
		}
	}
}

// TestSimplePlainAgrees: every string isPlainSafe's fast path takes, the
// full check takes too (all strings of up to four characters over the
// characters that matter to YAML, and longer ones built from them).
func TestSimplePlainAgrees(t *testing.T) {
	const alphabet = "aoyYnNtTfF/0.:#,-=<~[{}]&*!|>'\"%@`?$ \t"
	var gen func(prefix string, n int)
	checked := 0
	gen = func(prefix string, n int) {
		for _, s := range []string{prefix, prefix + "xxxxxx", "yes" + prefix, "on" + prefix + ":"} {
			if simplePlain(s) {
				checked++
				if !plainSafe(s) {
					t.Errorf("simplePlain(%q) is true, the full check false", s)
				}
			}
		}
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 4)
	if checked < 1000 {
		t.Errorf("simplePlain took %d strings: the test no longer covers it", checked)
	}
}

// TestPrintableWord: the eight-byte check agrees with plainChars on words
// of every byte value in every position, and on random words.
func TestPrintableWord(t *testing.T) {
	byByte := func(b [8]byte) bool {
		for _, c := range b {
			if plainChars[c]&plainNext == 0 {
				return false
			}
		}
		return true
	}
	word := func(b [8]byte) uint64 {
		var w uint64
		for i := 7; i >= 0; i-- {
			w = w<<8 | uint64(b[i])
		}
		return w
	}
	check := func(b [8]byte) {
		if got, want := printableWord(word(b)), byByte(b); got != want {
			t.Errorf("printableWord(% x) = %v, want %v", b, got, want)
		}
	}
	base := [8]byte{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'}
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			b := base
			b[pos] = byte(c)
			check(b)
		}
	}
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 100000; i++ {
		var b [8]byte
		for j := range b {
			b[j] = byte(0x18 + r.Intn(0x70)) // around both edges
		}
		check(b)
	}
}
