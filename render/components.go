package render

import (
	"context"
	"fmt"
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

// dependencyWaves orders Components by spec.dependsOn: a Component whose
// wave is not set (neither spec.wave nor a wavesmith.io/apply-order
// annotation) is placed one wave after the latest of its dependencies; a
// set wave that is not later than a dependency's is an error, and so are a
// missing dependency and a cycle. It returns the wave for each spec index
// that needs one.
func dependencyWaves(specs []*Item) (map[int]int, error) {
	type node struct {
		item *Item
		deps []string
		wave *int
	}
	nodes := map[string]*node{}
	var order []string
	for _, it := range specs {
		o := it.Object
		if o.Group()+"/"+o.Kind() != componentGK {
			continue
		}
		n := &node{item: it}
		s, _ := o.Map["spec"].(map[string]any)
		if w, ok := s["wave"].(int64); ok {
			v := int(w)
			n.wave = &v
		} else if a, ok := o.Annotation(inventory.ApplyOrder); ok {
			if v, err := strconv.Atoi(a); err == nil {
				n.wave = &v
			}
		}
		deps, _ := s["dependsOn"].([]any)
		for i, d := range deps {
			m, _ := d.(map[string]any)
			name, _ := m["name"].(string)
			ns, _ := m["namespace"].(string)
			if ns == "" {
				ns = o.Namespace()
			}
			if name == "" {
				return nil, o.FieldError(fmt.Sprintf("spec.dependsOn[%d].name", i), fmt.Errorf("%w: a name is required", ErrDependency))
			}
			n.deps = append(n.deps, ns+"/"+name)
		}
		key := o.Namespace() + "/" + o.Name()
		nodes[key] = n
		order = append(order, key)
	}
	waves := map[string]int{}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(key string, path []string) error
	visit = func(key string, path []string) error {
		n := nodes[key]
		switch state[key] {
		case 2:
			return nil
		case 1:
			cycle := append(path[indexOf(path, key):], key)
			return n.item.Object.FieldError("spec.dependsOn", fmt.Errorf("%w: cycle %s", ErrDependency, strings.Join(prefixAll("Component ", cycle), " -> ")))
		}
		state[key] = 1
		need := 0
		for i, d := range n.deps {
			if nodes[d] == nil {
				return n.item.Object.FieldError(fmt.Sprintf("spec.dependsOn[%d]", i), fmt.Errorf("%w: Component %s not found among the inputs", ErrDependency, d))
			}
			if err := visit(d, append(path, key)); err != nil {
				return err
			}
			if w := waves[d] + 1; w > need {
				need = w
			}
		}
		switch {
		case n.wave == nil:
			waves[key] = need
		case len(n.deps) > 0 && *n.wave < need:
			return n.item.Object.FieldError("spec.wave", fmt.Errorf("%w: wave %d is not after its dependencies (at least %d)", ErrDependency, *n.wave, need))
		default:
			waves[key] = *n.wave
		}
		state[key] = 2
		return nil
	}
	out := map[int]int{}
	for _, key := range order {
		if err := visit(key, nil); err != nil {
			return nil, err
		}
		if n := nodes[key]; n.wave == nil && len(n.deps) > 0 {
			out[n.item.Spec] = waves[key]
		}
	}
	return out, nil
}

func indexOf(s []string, v string) int {
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
