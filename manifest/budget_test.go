package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// laughs is a billion-laughs document: levels of 9 aliases to the level
// below, 9^levels strings in all.
func laughs(name string, levels int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\nbomb:\n  l0: &%s0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n", name, name)
	for l := 1; l < levels; l++ {
		fmt.Fprintf(&b, "  l%d: &%s%d [%s*%s%d]\n", l, name, l, strings.Repeat(fmt.Sprintf("*%s%d,", name, l-1), 8), name, l-1)
	}
	return b.String()
}

func TestBudgets(t *testing.T) {
	padding := strings.Repeat("# "+strings.Repeat("x", 78)+"\n", 8<<20/81) // 8 MiB of comments
	var many strings.Builder
	for i := range 200 {
		fmt.Fprintf(&many, "---\n%s", laughs(fmt.Sprintf("b%d", i), 4)) // 9^4 = 6561 nodes each
	}
	big := strings.Repeat("x", 1<<20)
	cases := map[string]struct {
		reason   string
		in       string
		budget   *Budget
		wantErr  error
		wantLine int
		wantText string
	}{
		"Ordinary": {
			reason: "a document reusing anchors a few times decodes",
			in:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: &l {x: y}}\ndata: {a: &v hello, b: *v}\nother: *l\n",
		},
		"PaddedBomb": {
			reason: "8 MiB of comments do not buy a bomb a larger budget (the old budget grew with the file size)",
			in:     padding + laughs("p", 7), wantErr: ErrTooComplex, wantText: "aliases expand the file beyond 100000 nodes",
		},
		"ManySmallBombs": {
			reason: "200 small bombs in one file share one budget (each document had a whole one)",
			in:     many.String(), wantErr: ErrTooComplex, wantText: "aliases expand the file",
		},
		"BigScalarAliased": {
			reason:  "a 1 MiB string aliased 100 times decodes to more than the per-file size",
			in:      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ns: &s " + big + "\nc: [" + strings.Repeat("*s,", 99) + "*s]\n",
			wantErr: ErrTooComplex, wantLine: 5, wantText: "decodes to more than 67108864 bytes",
		},
		"RenderBudget": {
			reason: "the files of one render share a budget",
			in:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: " + strings.Repeat("y", 2000) + "}\n",
			budget: NewBudget(1000), wantErr: ErrTooComplex, wantLine: 1, wantText: "the files of this render decode to more than",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.budget != nil {
				_, err = tc.budget.Decode("in.yaml", []byte(tc.in))
			} else {
				_, err = Decode("in.yaml", []byte(tc.in))
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.wantErr, err)
			}
			if err == nil {
				return
			}
			var me *Error
			if !errors.As(err, &me) || me.File != "in.yaml" || me.Line == 0 {
				t.Errorf("%s: the error does not name the file and line: %v", tc.reason, err)
			}
			if tc.wantLine != 0 && me.Line != tc.wantLine {
				t.Errorf("%s: line %d, want %d", tc.reason, me.Line, tc.wantLine)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("%s: %q lacks %q", tc.reason, err, tc.wantText)
			}
		})
	}
}

// TestBudgetCharges: a budget is charged with what each file built.
func TestBudgetCharges(t *testing.T) {
	b := NewBudget(100)
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n" // 45 bytes of keys and scalars
	if _, err := b.Decode("1.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Decode("2.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Decode("3.yaml", []byte(doc)); !errors.Is(err, ErrTooComplex) {
		t.Fatalf("the third file: want ErrTooComplex, got %v", err)
	}
}
