package render

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestCheckPartOf: a part-of setting the API server would refuse as a
// label value is an error, never rewritten into a valid one.
func TestCheckPartOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		ok     bool
	}{
		"Empty":         {"empty means the default", "", true},
		"Plain":         {"a label value", "shop", true},
		"Punctuation":   {"inner '-', '_' and '.' are allowed", "my-app_v1.2", true},
		"Space":         {"a space is refused, not turned into '-'", "my app", false},
		"TrailingDash":  {"a trailing '-' is refused, not trimmed", "my-app-", false},
		"LeadingDot":    {"a leading '.' is refused", ".app", false},
		"TooLong":       {"more than 63 characters are refused, not cut", strings.Repeat("a", 64), false},
		"Colon":         {"a ':' is refused", "system:app", false},
		"ControlEscape": {"control characters are refused", "app\x1b[2J", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckPartOf(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("%s: CheckPartOf(%q) = %v, want ok=%v", tc.reason, tc.in, err, tc.ok)
			}
			if err != nil && (!errors.Is(err, ErrOptions) || !errors.Is(err, ErrPartOf)) {
				t.Errorf("%s: %v does not wrap ErrOptions and ErrPartOf", tc.reason, err)
			}
		})
	}
}

// TestRenderRefusesPartOf: Render refuses the setting before rendering.
func TestRenderRefusesPartOf(t *testing.T) {
	cm := manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "ns"}})
	_, err := Render(context.Background(), []*manifest.Object{cm}, Options{Generators: builtin.Registry(), PartOf: "my app-"})
	if !errors.Is(err, ErrPartOf) {
		t.Fatalf("want ErrPartOf, got %v", err)
	}
	if !strings.Contains(err.Error(), `"my app-"`) {
		t.Errorf("%v does not quote the value", err)
	}
}
