package render

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/helm"
	"github.com/wavesmith/wavesmith/generators/kustomize"
	"github.com/wavesmith/wavesmith/manifest"
)

// componentGK keys Components in the generator map.
const componentGK = v1alpha1.Group + "/" + v1alpha1.ComponentKind

// componentGenerator sends a Component to the generator of its source.
type componentGenerator struct {
	chart, kustomization generators.Generator
}

func (g componentGenerator) Generate(ctx context.Context, spec *manifest.Object, opts generators.Options) (generators.Result, error) {
	s, _ := spec.Map["spec"].(map[string]any)
	src, _ := s["source"].(map[string]any)
	if _, ok := src["kustomization"]; ok {
		if _, both := src["chart"]; !both {
			return g.kustomization.Generate(ctx, spec, opts)
		}
	}
	return g.chart.Generate(ctx, spec, opts) // reports a missing or double source
}

func newComponentGenerator() generators.Generator {
	return componentGenerator{chart: helm.Generator{}, kustomization: kustomize.Generator{}}
}

// ErrDependency: a Component dependency is missing, cyclic or out of order.
var ErrDependency = fmt.Errorf("component dependency")

// IsComponent reports whether o is a wavesmith.io Component.
func IsComponent(o *manifest.Object) bool { return o.Group()+"/"+o.Kind() == componentGK }

// DependsOn returns "namespace/name" for each spec.dependsOn entry of a
// Component, in order; the namespace defaults to the Component's. An entry
// without a name gives "namespace/" (Render refuses it).
func DependsOn(o *manifest.Object) []string {
	s, _ := o.Map["spec"].(map[string]any)
	deps, _ := s["dependsOn"].([]any)
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		m, _ := d.(map[string]any)
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		if ns == "" {
			ns = o.Namespace()
		}
		out = append(out, ns+"/"+name)
	}
	return out
}

// depGraph orders Components by spec.dependsOn. Specs render level by
// level: a Component renders once every Component it depends on has, so
// that its wave can follow theirs.
type depGraph struct {
	deps     map[int][]int // spec index -> the spec indices it depends on
	explicit map[int]int   // spec index -> its set wave (spec.wave or apply-order)
	levels   [][]int       // spec indices; level k depends only on levels < k
	assigned []int         // the wave each spec rendered at (set level by level)
}

// dependencyGraph validates spec.dependsOn (a name is required; a missing
// dependency and a cycle are errors naming them) and groups the specs in
// levels.
func dependencyGraph(specs []*Item) (*depGraph, error) {
	g := &depGraph{deps: map[int][]int{}, explicit: map[int]int{}, assigned: make([]int, len(specs))}
	byKey := map[string]int{}
	var comps []int
	for i, it := range specs {
		o := it.Object
		if !IsComponent(o) {
			continue
		}
		byKey[o.Namespace()+"/"+o.Name()] = i
		comps = append(comps, i)
		s, _ := o.Map["spec"].(map[string]any)
		if w, ok := s["wave"].(int64); ok {
			g.explicit[i] = int(w)
		} else if a, ok := o.Annotation(inventory.ApplyOrder); ok {
			if v, err := strconv.Atoi(a); err == nil {
				g.explicit[i] = v
			}
		}
	}
	for _, i := range comps {
		o := specs[i].Object
		for j, ref := range DependsOn(o) {
			field := fmt.Sprintf("spec.dependsOn[%d]", j)
			if strings.HasSuffix(ref, "/") {
				return nil, o.FieldError(field+".name", fmt.Errorf("%w: a name is required", ErrDependency))
			}
			k, ok := byKey[ref]
			if !ok {
				return nil, o.FieldError(field, fmt.Errorf("%w: Component %s not found among the inputs", ErrDependency, ref))
			}
			g.deps[i] = append(g.deps[i], k)
		}
	}
	level := make([]int, len(specs))
	state := make([]int, len(specs)) // 1 visiting, 2 done
	key := func(i int) string { return specs[i].Object.Namespace() + "/" + specs[i].Object.Name() }
	var visit func(i int, path []int) error
	visit = func(i int, path []int) error {
		switch state[i] {
		case 2:
			return nil
		case 1:
			var names []string
			for _, p := range path[indexOf(path, i):] {
				names = append(names, key(p))
			}
			names = append(names, key(i))
			return specs[path[len(path)-1]].Object.FieldError("spec.dependsOn", fmt.Errorf("%w: cycle %s", ErrDependency, strings.Join(prefixAll("Component ", names), " -> ")))
		}
		state[i] = 1
		for _, d := range g.deps[i] {
			if err := visit(d, append(path, i)); err != nil {
				return err
			}
			if level[d]+1 > level[i] {
				level[i] = level[d] + 1
			}
		}
		state[i] = 2
		return nil
	}
	for i := range specs {
		if err := visit(i, nil); err != nil {
			return nil, err
		}
		for len(g.levels) <= level[i] {
			g.levels = append(g.levels, nil)
		}
		g.levels[level[i]] = append(g.levels[level[i]], i)
	}
	return g, nil
}

// wave decides the wave of spec i once its dependencies have rendered
// (outs): one after the latest wave of their objects (hooks included, so a
// dependent follows its dependency's post-install hooks). A Component with
// a set wave keeps it, if it is late enough. ok is false when the spec's
// own wave or the defaults apply.
func (g *depGraph) wave(i int, specs []*Item, outs []specOutput, def int) (w int, ok bool, err error) {
	own, explicit := g.explicit[i]
	if len(g.deps[i]) == 0 {
		if explicit {
			g.assigned[i] = own
		} else {
			g.assigned[i] = def
		}
		return 0, false, nil
	}
	need := math.MinInt
	for _, d := range g.deps[i] {
		latest := g.assigned[d]
		for j, c := range outs[d].children {
			if j == 0 || c.Wave > latest {
				latest = c.Wave
			}
		}
		if latest+1 > need {
			need = latest + 1
		}
	}
	if explicit {
		if own < need {
			return 0, false, specs[i].Object.FieldError("spec.wave", fmt.Errorf("%w: wave %d is not after its dependencies (at least %d)", ErrDependency, own, need))
		}
		g.assigned[i] = own
		return 0, false, nil
	}
	g.assigned[i] = need
	return need, true, nil
}

func indexOf(s []int, v int) int {
	for i, e := range s {
		if e == v {
			return i
		}
	}
	return 0
}

func prefixAll(p string, s []string) []string {
	out := make([]string, len(s))
	for i, e := range s {
		out[i] = p + e
	}
	return out
}
