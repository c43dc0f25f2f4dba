package render

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestServed: in a group wavesmith owns, a kind or version no generator
// serves is an error naming what is served, with the nearest kind; other
// groups pass through.
func TestServed(t *testing.T) {
	cases := map[string]struct {
		reason     string
		apiVersion string
		kind       string
		wantField  string // "" for no error
		wantText   string
	}{
		"Kaoto":          {"the served Kaoto renders", "designer.kaoto.io/v1alpha1", "Kaoto", "", ""},
		"KaotoV1":        {"an unserved version of Kaoto", "designer.kaoto.io/v1", "Kaoto", "apiVersion", "(served: designer.kaoto.io/v1alpha1); did you mean apiVersion designer.kaoto.io/v1alpha1?"},
		"Kaotoo":         {"a misspelt kind", "designer.kaoto.io/v1alpha1", "Kaotoo", "kind", "kind Kaotoo is not served in designer.kaoto.io (served: Kaoto); did you mean kind Kaoto?"},
		"LowerComponent": {"a kind in the wrong case", "wavesmith.io/v1alpha1", "component", "kind", "did you mean kind Component?"},
		"Component":      {"the served Component renders", "wavesmith.io/v1alpha1", "Component", "", ""},
		"ComponentV1":    {"an unserved version of Component", "wavesmith.io/v1", "Component", "apiVersion", "(served: wavesmith.io/v1alpha1); did you mean apiVersion wavesmith.io/v1alpha1?"},
		"KaotoInWavesmith": {"a kind of another owned group", "wavesmith.io/v1alpha1", "Kaoto", "kind",
			"kind Kaoto is not served in wavesmith.io (served: Component); did you mean apiVersion designer.kaoto.io/v1alpha1, kind Kaoto?"},
		"Unrelated":    {"a kind far from any served one gets no suggestion", "wavesmith.io/v1alpha1", "Pipeline", "kind", "(served: Component)"},
		"OtherGroup":   {"custom resources of other groups pass through", "example.com/v1", "Kaotoo", "", ""},
		"SubGroup":     {"a group ending in an owned one is another group", "x.wavesmith.io/v1", "Thing", "", ""},
		"ControlChars": {"a kind with control characters is quoted", "wavesmith.io/v1alpha1", "Comp\x1bonent", "kind", `kind "Comp\x1bonent" is not served`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := manifest.New(map[string]any{"apiVersion": tc.apiVersion, "kind": tc.kind, "metadata": map[string]any{"name": "a", "namespace": "ns"}})
			o.Source = manifest.Source{File: "in.yaml"}
			err := newServed(builtin.Registry()).check(o)
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("%s: %v", tc.reason, err)
				}
				return
			}
			var me *manifest.Error
			if !errors.Is(err, ErrUnserved) || !errors.Is(err, manifest.ErrInvalid) || !errors.As(err, &me) {
				t.Fatalf("%s: want a located ErrUnserved, got %v", tc.reason, err)
			}
			if me.Field != tc.wantField || me.File != "in.yaml" || me.Object == "" {
				t.Errorf("%s: field %q file %q object %q, want %q in.yaml and the object", tc.reason, me.Field, me.File, me.Object, tc.wantField)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("%s: %q does not say %q", tc.reason, err, tc.wantText)
			}
		})
	}
}

// TestRenderRefusesUnserved: Render refuses them before rendering.
func TestRenderRefusesUnserved(t *testing.T) {
	o := manifest.New(map[string]any{"apiVersion": "designer.kaoto.io/v1", "kind": "Kaoto", "metadata": map[string]any{"name": "a", "namespace": "ns"}})
	if _, err := Render(context.Background(), []*manifest.Object{o}, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()}); !errors.Is(err, ErrUnserved) {
		t.Errorf("want ErrUnserved, got %v", err)
	}
}
