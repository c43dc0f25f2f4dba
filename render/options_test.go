package render

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/gitops/engines"
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
	_, err := Render(context.Background(), []*manifest.Object{cm}, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), PartOf: "my app-"})
	if !errors.Is(err, ErrPartOf) {
		t.Fatalf("want ErrPartOf, got %v", err)
	}
	if !strings.Contains(err.Error(), `"my app-"`) {
		t.Errorf("%v does not quote the value", err)
	}
}

// TestRenderRequiresDoorChoices: the generators, the GitOps engines and
// the root are the door's to pass; the engine guesses none of them.
func TestRenderRequiresDoorChoices(t *testing.T) {
	cm := manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "ns"}})
	full := Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()}
	for name, tc := range map[string]struct {
		opts Options
		text string
	}{
		"NoGenerators": {func() Options { o := full; o.Generators = nil; return o }(), "no generators"},
		"NoEngines":    {func() Options { o := full; o.Engines = nil; return o }(), "no GitOps engines"},
		"NoRoot":       {func() Options { o := full; o.Root = ""; return o }(), "no root"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Render(context.Background(), []*manifest.Object{cm}, tc.opts)
			if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("got %v, want ErrOptions saying %q", err, tc.text)
			}
		})
	}
	// No engines known (an empty list) is a choice: nothing engine-specific
	// is written.
	o := full
	o.Engines = []gitops.Dialect{}
	res, err := Render(context.Background(), []*manifest.Object{cm}, o)
	if err != nil {
		t.Fatal(err)
	}
	for k := range res.Items[0].Object.Annotations() {
		if strings.Contains(k, "argoproj.io") || strings.Contains(k, "fluxcd.io") {
			t.Errorf("annotation %s written with no engines", k)
		}
	}
}
