package component

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// Generator renders Components: it sends each to the generator of its
// source (spec.source.<key>), and tells the engine what a Component reads,
// depends on, which wave it sets and which types it manages.
type Generator struct {
	// Sources maps a key of spec.source ("chart", "kustomization") to the
	// generator that renders such a source. A source generator that reads
	// more than the folder spec.source.<key>.path (or another field)
	// implements generators.Reader; Reads reports what it says.
	Sources map[string]generators.Generator
}

// Source is implemented by source generators that render from the
// Component as Generator decoded it, so that a Component is decoded once
// per render; Generator calls a source generator without it through
// Generate (which decodes again).
type Source interface {
	GenerateComponent(ctx context.Context, spec *manifest.Object, c *v1alpha1.Component, opts generators.Options) (generators.Result, error)
}

// Versions is the version of Component wavesmith serves
// (render.Versioned): an object in another version of wavesmith.io is a
// mistake, never rendered or passed through.
func (Generator) Versions() []string { return []string{v1alpha1.Version} }

var (
	_ generators.Generator   = Generator{}
	_ generators.Reader      = Generator{}
	_ generators.Dependent   = Generator{}
	_ generators.Waver       = Generator{}
	_ generators.TypeManager = Generator{}
	_ generators.Checker     = Generator{}
)

// Check implements generators.Checker: Decode's errors, every one, and
// the decoded Component, which Generate then takes (Options.Checked).
func (Generator) Check(spec *manifest.Object) (any, error) {
	c, err := Decode(spec)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Generate implements generators.Generator. It decodes the spec unless
// the engine checked it (Options.Checked holds the decoded Component).
func (g Generator) Generate(ctx context.Context, spec *manifest.Object, opts generators.Options) (generators.Result, error) {
	c, ok := opts.Checked.(*v1alpha1.Component)
	if !ok {
		var err error
		if c, err = Decode(spec); err != nil {
			return generators.Result{}, err
		}
	}
	src, _ := specMap(spec)["source"].(map[string]any)
	keys := make([]string, 0, len(src))
	for k := range src {
		if src[k] != nil { // null is absent, as Decode reads it
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if gen, ok := g.Sources[k]; ok {
			if s, ok := gen.(Source); ok {
				return s.GenerateComponent(ctx, spec, c, opts)
			}
			return gen.Generate(ctx, spec, opts)
		}
	}
	known := make([]string, 0, len(g.Sources))
	for k := range g.Sources {
		known = append(known, k)
	}
	sort.Strings(known)
	return generators.Result{}, spec.FieldError("spec.source", fmt.Errorf("%w: no generator for this source (known: %s)", manifest.ErrInvalid, strings.Join(known, ", ")))
}

func specMap(o *manifest.Object) map[string]any {
	s, _ := o.Map["spec"].(map[string]any)
	return s
}

// Reads implements generators.Reader: what the source reads (its
// generator's Reads when it implements generators.Reader, else its
// spec.source.<key>.path) and the values files. It reads the map
// leniently: Generate reports malformed fields.
func (g Generator) Reads(spec *manifest.Object, root string) []generators.Read {
	s := specMap(spec)
	var out []generators.Read
	src, _ := s["source"].(map[string]any)
	keys := make([]string, 0, len(src))
	for k := range src {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m, ok := src[k].(map[string]any)
		if !ok {
			continue
		}
		if r, ok := g.Sources[k].(generators.Reader); ok {
			out = append(out, r.Reads(spec, root)...)
			continue
		}
		if p, ok := m["path"].(string); ok && p != "" {
			out = append(out, generators.Read{Field: "spec.source." + k + ".path", Path: p})
		}
	}
	vf, _ := s["valuesFiles"].([]any)
	for i, v := range vf {
		if p, ok := v.(string); ok && p != "" {
			out = append(out, generators.Read{Field: fmt.Sprintf("spec.valuesFiles[%d]", i), Path: p})
		}
	}
	return out
}

// DependsOn implements generators.Dependent: spec.dependsOn.
func (Generator) DependsOn(spec *manifest.Object) []generators.Dependency {
	deps, _ := specMap(spec)["dependsOn"].([]any)
	out := make([]generators.Dependency, 0, len(deps))
	for i, d := range deps {
		m, _ := d.(map[string]any)
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		out = append(out, generators.Dependency{
			Field: fmt.Sprintf("spec.dependsOn[%d]", i),
			Group: v1alpha1.Group, Kind: v1alpha1.ComponentKind, Namespace: ns, Name: name,
		})
	}
	return out
}

// Wave implements generators.Waver: spec.wave.
func (Generator) Wave(spec *manifest.Object) (int, string, bool) {
	w, ok := specMap(spec)["wave"].(int64)
	return int(w), "spec.wave", ok
}

// ManagedTypes implements generators.TypeManager:
// spec.additionalManagedTypes.
func (Generator) ManagedTypes(spec *manifest.Object) []generators.TypePattern {
	list, _ := specMap(spec)["additionalManagedTypes"].([]any)
	var out []generators.TypePattern
	for _, e := range list {
		m, _ := e.(map[string]any)
		g, _ := m["group"].(string)
		k, _ := m["kind"].(string)
		out = append(out, generators.TypePattern{Group: g, Kind: k})
	}
	return out
}
