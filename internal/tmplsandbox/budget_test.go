package tmplsandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"text/template"
)

// render runs text in a sandbox within lim with Funcs, include and tpl as
// the generators wire them, and returns the output and the error.
func render(ctx context.Context, lim Limits, text string) (string, *Budget, error) {
	b := New(ctx, lim)
	set := template.New("t").Option("missingkey=zero")
	fm := Funcs()
	b.Nested(fm, set, nil)
	b.Guard(fm)
	set.Funcs(fm)
	if _, err := set.Parse(text); err != nil {
		return "", b, err
	}
	b.Instrument(set)
	w := b.File()
	err := set.Execute(w, map[string]any{"self": "{{ tpl .self . }}"})
	return string(w.Bytes()), b, err
}

// small are limits that keep the table quick (under -race too).
var small = Limits{Steps: 100_000, Value: 1 << 20, Work: 8 << 20, Output: 1 << 20, TotalOutput: 2 << 20, Nesting: 50, TplNesting: 10, Width: 1000, Cost: 2}

// TestLimits: each hostile template stops with ErrBudget saying which
// limit, before it allocates what it asks for; templates just under a
// limit render.
func TestLimits(t *testing.T) {
	cases := map[string]struct {
		reason string
		text   string
		want   string // in the error; "" renders
	}{
		"Repeat":         {"repeat over the value limit is refused before the call", `{{ repeat 300000000 "x" }}`, "repeat would return about 300000000 bytes"},
		"RepeatUnder":    {"a repeat under it renders", `{{ len (repeat 1000 "x") }}`, ""},
		"Until":          {"until counts 8 bytes an element", `{{ range until 2000000000 }}{{ end }}`, "until would return about 16000000000 bytes"},
		"UntilStep":      {"untilStep too", `{{ range untilStep 0 2000000000 1 }}{{ end }}`, "untilStep would return about"},
		"Seq":            {"seq too", `{{ seq 1 100000000 }}`, "seq would return about"},
		"Indent":         {"indent by a billion spaces", `{{ indent 1000000000 "x" }}`, "indent would return about 1000000001 bytes"},
		"Replace":        {"replace of the empty string by a long one", `{{ $s := repeat 100000 "x" }}{{ replace "" $s $s }}`, "replace would return about"},
		"Regex":          {"a regexp replacement with $ expansions", `{{ $s := repeat 100000 "x" }}{{ regexReplaceAll "x" $s "$0$0$0$0$0$0$0$0$0$0$0$0" }}`, "regexReplaceAll would return about"},
		"RandAlphaNum":   {"a random string of a billion", `{{ randAlphaNum 1000000000 }}`, "randAlphaNum would return about"},
		"WrapWith":       {"wrapWith inserting a long separator", `{{ $s := repeat 100000 "x" }}{{ wrapWith 1 $s $s }}`, "wrapWith would return about"},
		"Printf":         {"a printf width of a billion", `{{ printf "%0999999999d" 1 }}`, "width or precision 999999999"},
		"PrintfStar":     {"a width from the arguments", `{{ printf "%*d" 999999999 1 }}`, "width or precision 999999999 from the arguments"},
		"Doubling":       {"a string doubled in a loop: printing it is measured first", `{{ $s := "x" }}{{ range until 64 }}{{ $s = cat $s $s }}{{ end }}`, "cat would print more than 1048576 bytes"},
		"Keep":           {"values kept in a list count against the work", `{{ $l := list }}{{ range until 100 }}{{ $l = append $l (repeat 500000 "x") }}{{ end }}`, "the functions returned and kept more than 8388608 bytes"},
		"Steps":          {"nested ranges count every iteration", `{{ range until 1000 }}{{ range until 1000 }}{{ end }}{{ end }}`, "more than 100000 steps"},
		"RangeInt":       {"range over an integer counts too", `{{ range 2000000000 }}{{ end }}`, "more than 100000 steps"},
		"Output":         {"a template file's output is bounded", `{{ range until 20000 }}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{ end }}`, "a template file's output of more than 1048576 bytes"},
		"Include":        {"an include's output is bounded by the value limit", `{{ define "a" }}{{ range until 20000 }}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{ end }}{{ end }}{{ include "a" . }}`, "an include's or tpl's output of more than 1048576 bytes"},
		"Recursion":      {"a template calling itself stops at the nesting limit", `{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}`, "templates nested more than 50 deep"},
		"IncludeFanOut":  {"an include calling itself twice", `{{ define "a" }}{{ include "a" . }}{{ include "a" . }}{{ end }}{{ include "a" . }}`, "templates nested more than 50 deep"},
		"TemplateFanOut": {"a template calling itself twice counts its calls", `{{ define "a" }}{{ if lt . 40 }}{{ template "a" (add1 .) }}{{ template "a" (add1 .) }}{{ end }}{{ end }}{{ template "a" 0 }}`, "steps"},
		"Tpl":            {"tpl rendering itself stops at the tpl nesting limit", `{{ tpl .self . }}`, "tpl calls nest more than 10 deep"},
		"Set":            {"a dict set into itself", `{{ $d := dict }}{{ $_ := set $d "a" $d }}{{ $d }}`, "the dict would contain itself"},
		"Merge":          {"a dict merged into one holding it", `{{ $d := dict }}{{ $e := dict "d" $d }}{{ $_ := merge $d $e }}`, "merge: the result would contain itself"},
		"Keys":           {"key generations count their cost", `{{ range until 3 }}{{ $_ := genPrivateKey "ecdsa" }}{{ end }}`, "genPrivateKey: key generations and password hashes cost 3, more than the 2"},
		"Env":            {"env is not offered", `{{ env "HOME" }}`, "parse"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, b, err := render(t.Context(), small, tc.text)
			switch {
			case tc.want == "":
				if err != nil {
					t.Fatalf("%s: %v", tc.reason, err)
				}
				return
			case tc.want == "parse":
				if err == nil || errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), `function "env" not defined`) {
					t.Fatalf("%s: want a parse error, got %v", tc.reason, err)
				}
				return
			}
			if !errors.Is(err, ErrBudget) {
				t.Fatalf("%s: want ErrBudget, got %v", tc.reason, err)
			}
			if !errors.Is(b.Err(), ErrBudget) || !strings.Contains(b.Err().Error(), tc.want) {
				t.Errorf("%s: first limit %q lacks %q", tc.reason, b.Err(), tc.want)
			}
		})
	}
}

// TestRepeatNotAllocated: the estimate refuses the call before sprig
// allocates: the limit holds far below what would be made.
func TestRepeatNotAllocated(t *testing.T) {
	allocs := testing.AllocsPerRun(1, func() {
		if _, _, err := render(context.Background(), small, `{{ repeat 4000000000 "xxxxxxxx" }}`); !errors.Is(err, ErrBudget) {
			t.Fatal(err)
		}
	})
	if allocs > 10_000 {
		t.Errorf("%v allocations", allocs)
	}
}

// TestContext: a context that ends stops a template at its next step,
// with ErrBudget wrapping the context's error; Where names the range.
func TestContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, b, err := render(ctx, Default, "a\n{{ range until 10 }}{{ end }}")
	if !errors.Is(err, ErrBudget) || !errors.Is(b.Err(), context.Canceled) {
		t.Fatalf("want ErrBudget and the context's error, got %v (%v)", err, b.Err())
	}
	if !strings.HasPrefix(b.Where(), "t:1:") && !strings.HasPrefix(b.Where(), "t:2:") {
		t.Errorf("where %q", b.Where())
	}
}

// TestCalled: Called is told the calls of nondeterministic functions
// only.
func TestCalled(t *testing.T) {
	b := New(t.Context(), Default)
	var got []string
	b.Called = func(name string) { got = append(got, name) }
	fm := Funcs()
	b.Guard(fm)
	set := template.Must(template.New("t").Funcs(fm).Parse(`{{ upper "x" }}{{ randAlphaNum 3 }}{{ now }}`))
	b.Instrument(set)
	if err := set.Execute(b.File(), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "randAlphaNum,now" {
		t.Errorf("called %v", got)
	}
	if !Nondeterministic("uuidv4") || Nondeterministic("upper") {
		t.Error("Nondeterministic")
	}
}

// TestOutputUnchanged: the marks Instrument adds write nothing.
func TestOutputUnchanged(t *testing.T) {
	text := `{{ define "x" }}[{{ . }}]{{ end }}{{ range $i := until 3 }}{{ include "x" $i }}{{ template "x" $i }}{{ end }}{{ tpl "{{ 1 }}" . }}`
	got, _, err := render(t.Context(), Default, text)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[0][0][1][1][2][2]1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
