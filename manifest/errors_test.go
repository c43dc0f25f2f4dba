package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuote(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"Plain":       {"ordinary names stay as they are", "repo/app.yaml", "repo/app.yaml"},
		"Unicode":     {"printable non-ASCII stays", "répertoire/äpp.yaml", "répertoire/äpp.yaml"},
		"Space":       {"spaces are printable", "my file.yaml", "my file.yaml"},
		"Newline":     {"a line break could forge a report line", "a\nerror: forged", `"a\nerror: forged"`},
		"CR":          {"a carriage return could overwrite a line", "a\rb", `"a\rb"`},
		"Escape":      {"a terminal escape sequence", "a\x1b[2Jb", `"a\x1b[2Jb"`},
		"Tab":         {"a tab is a control character", "a\tb", `"a\tb"`},
		"DEL":         {"DEL", "a\x7fb", `"a\x7fb"`},
		"C1":          {"a C1 control (CSI)", "a\u009bb", `"a\u009bb"`},
		"LineSep":     {"the Unicode line separator", "a\u2028b", `"a\u2028b"`},
		"BidiRLO":     {"a right-to-left override reorders what the terminal shows", "a\u202eb", `"a\u202eb"`},
		"BidiIsolate": {"a bidirectional isolate", "a\u2067b", `"a\u2067b"`},
		"NotUTF8":     {"bytes that are not UTF-8", "a\xffb", `"a\xffb"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Quote(tc.in); got != tc.want {
				t.Errorf("%s: Quote(%q) = %s, want %s", tc.reason, tc.in, got, tc.want)
			}
		})
	}
}

// TestErrorQuotes: a located error and a warning quote file, object and
// field holding control characters; the report stays one line.
func TestErrorQuotes(t *testing.T) {
	e := &Error{File: "a\nb.yaml", Line: 3, Object: "ConfigMap/ns/x\x1b[31m", Field: "metadata.labels.k\r", Err: ErrInvalid}
	want := `"a\nb.yaml":3: "ConfigMap/ns/x\x1b[31m": "metadata.labels.k\r": invalid value`
	if got := e.Error(); got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
	w := Warning{File: "a\nb.yaml", Object: "ConfigMap/ns/x\u202e", Field: "f", Message: "m"}
	if got, want := w.String(), `"a\nb.yaml": "ConfigMap/ns/x\u202e": f: m`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
	if !errors.Is(e, ErrInvalid) {
		t.Errorf("the quoted error lost its cause")
	}
}

var errTest = errors.New("test kind")

func TestJoinReport(t *testing.T) {
	located := func(i int, sentinel error) error {
		return &Error{File: "f.yaml", Line: i, Object: fmt.Sprintf("ConfigMap/ns/n%d", i), Field: fmt.Sprintf("items[%d].metadata.name", i), Err: fmt.Errorf("%w: %w: bad %d", ErrInvalid, sentinel, i)}
	}
	many := func(n int, sentinel error) []error {
		var out []error
		for i := range n {
			out = append(out, located(i, sentinel))
		}
		return out
	}
	cases := map[string]struct {
		reason    string
		in        []error
		wantLen   int    // errors listed, the summary included
		wantLast  string // the summary's text
		wantCount int    // errors reachable through Unwrap
	}{
		"Few": {
			reason: "up to MaxReported errors are listed one by one", in: many(MaxReported, errTest),
			wantLen: MaxReported, wantCount: MaxReported,
		},
		"Many": {
			reason: "beyond MaxReported, the rest is one summary by kind", in: many(20_000, errTest),
			wantLen: MaxReported + 1, wantCount: 20_000,
			wantLast: "and 19,900 more errors not listed: 19,900 × items[].metadata.name: invalid value: test kind",
		},
		"Kinds": {
			reason: "kinds are counted, the largest first", in: append(many(MaxReported, errTest), append(many(3, ErrSyntax), append(many(5, ErrTooComplex), errors.New("plain\nmessage"))...)...),
			wantLen: MaxReported + 1, wantCount: MaxReported + 9,
			wantLast: `and 9 more errors not listed: 5 × items[].metadata.name: invalid value: document too complex; 3 × items[].metadata.name: invalid value: malformed YAML; 1 × "plain\nmessage"`,
		},
		"Rejoined": {
			reason: "a report joined again is capped once, its summary expanded", in: []error{JoinReport(many(150, errTest)).(Errors)[MaxReported], located(1, errTest)},
			wantLen: 51, wantCount: 51,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := JoinReport(tc.in)
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("%s: want Errors, got %T", tc.reason, err)
			}
			if len(es) != tc.wantLen {
				t.Errorf("%s: %d errors listed, want %d", tc.reason, len(es), tc.wantLen)
			}
			if tc.wantLast != "" {
				if diff := cmp.Diff(tc.wantLast, es[len(es)-1].Error()); diff != "" {
					t.Errorf("%s: summary -want +got:\n%s", tc.reason, diff)
				}
			}
			count := 0
			for _, e := range es {
				if o, ok := e.(Omitted); ok {
					count += len(o)
					continue
				}
				count++
			}
			if count != tc.wantCount {
				t.Errorf("%s: %d errors reachable, want %d", tc.reason, count, tc.wantCount)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: errors.Is does not reach the errors", tc.reason)
			}
			if strings.Count(err.Error(), "\n") >= MaxReported+1 {
				t.Errorf("%s: the report has more than %d lines", tc.reason, MaxReported+1)
			}
		})
	}
}

func TestJoinReportOmittedReachable(t *testing.T) {
	var in []error
	for range MaxReported {
		in = append(in, ErrSyntax)
	}
	in = append(in, &Error{File: "late.yaml", Err: ErrTooComplex})
	err := JoinReport(in)
	var me *Error
	if !errors.Is(err, ErrTooComplex) || !errors.As(err, &me) || me.File != "late.yaml" {
		t.Errorf("an omitted error must stay reachable with errors.Is and errors.As: %v", err)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 19900: "19,900", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %s, want %s", n, got, want)
		}
	}
}
