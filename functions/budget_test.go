package functions

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/render"
)

func TestNodeBound(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int // the nodes yaml.v3 builds, which the bound must not miss
	}{
		{"a: b\n", 3},
		{"- a\n- b\n", 3},
		{"[a, b, c]", 4},
		{"{a, b}", 3},
		{"{\"a\": 1, \"b\": [1, 2]}", 7},
		{"? a\n: b\n", 3},
		{"a: b\n---\nc: d\n", 6},
		{"k: |\n  x\n  y\n", 3},
	} {
		if got := nodeBound([]byte(tc.in)); got < tc.want {
			t.Errorf("nodeBound(%q) = %d, below the %d nodes it holds", tc.in, got, tc.want)
		}
	}
}

func TestBudgets(t *testing.T) {
	many := func(n int, item string) string {
		return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + strings.Repeat(item, n)
	}
	for name, tc := range map[string]struct {
		in   string
		want error
		msg  string
	}{
		"nodes": {in: many(MaxNodes/4, "- {a: b, c: d}\n"), want: ErrOverBudget, msg: "YAML nodes"},
		"items": {in: many(MaxItems+1, "- {kind: ConfigMap}\n"), want: ErrOverBudget, msg: "30001 items"},
		"bytes": {in: many(1, "- {kind: ConfigMap, data: {k: '"+strings.Repeat("x", MaxInput)+"'}}\n"), want: fsroot.ErrTooLarge, msg: "more than 67108864 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), strings.NewReader(tc.in), &out, render.Options{Generators: builtin.Registry()})
			if tc.want == ErrOverBudget && name == "items" {
				// The framework returns its results; the message is there.
				if err == nil || !strings.Contains(out.String(), tc.msg) {
					t.Fatalf("want an error result with %q, got %v:\n%.500s", tc.msg, err, out.String())
				}
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			s := out.String()
			if !strings.Contains(s, "kind: ResourceList") || !strings.Contains(s, "severity: error") || !strings.Contains(s, tc.msg) {
				t.Errorf("want a ResourceList with an error result naming %q:\n%.500s", tc.msg, s)
			}
			if strings.Contains(s, "kind: ConfigMap") {
				t.Errorf("the items over budget are written back:\n%.500s", s)
			}
		})
	}
}
