package render

import (
	"fmt"
	"sort"
	"strings"
)

// Graph draws the result: one box per wave holding its objects, an edge
// from each spec to its children, and an edge from each Component to the
// Components it depends on. format is "mermaid" or "dot".
func (r *Result) Graph(format string) (string, error) {
	type node struct{ id, label string }
	waves := map[int][]node{}
	var edges [][2]string
	id := func(it *Item) string {
		return "n" + strings.NewReplacer("/", "_", ".", "_", "-", "_", ":", "_").Replace(strings.ToLower(it.Key.String()))
	}
	bySpecKey := map[string]*Item{}
	for _, s := range r.Specs {
		bySpecKey[s.Key.Namespace+"/"+s.Key.Name+"/"+s.Key.Kind] = s
	}
	for _, it := range r.Items {
		waves[it.Wave] = append(waves[it.Wave], node{id(it), it.Key.String()})
		if it.Role == Child {
			edges = append(edges, [2]string{id(r.Specs[it.Spec]), id(it)})
		}
		if it.Role == Spec && it.Object.Map != nil {
			spec, _ := it.Object.Map["spec"].(map[string]any)
			deps, _ := spec["dependsOn"].([]any)
			for _, d := range deps {
				m, _ := d.(map[string]any)
				name, _ := m["name"].(string)
				ns, _ := m["namespace"].(string)
				if ns == "" {
					ns = it.Key.Namespace
				}
				if dep := bySpecKey[ns+"/"+name+"/"+it.Key.Kind]; dep != nil {
					edges = append(edges, [2]string{id(it), id(dep)})
				}
			}
		}
	}
	order := make([]int, 0, len(waves))
	for w := range waves {
		order = append(order, w)
	}
	sort.Ints(order)
	var b strings.Builder
	switch format {
	case "", "mermaid":
		b.WriteString("flowchart LR\n")
		for _, w := range order {
			fmt.Fprintf(&b, "  subgraph wave_%s[\"wave %d\"]\n", strings.ReplaceAll(fmt.Sprint(w), "-", "m"), w)
			for _, n := range waves[w] {
				fmt.Fprintf(&b, "    %s[\"%s\"]\n", n.id, n.label)
			}
			b.WriteString("  end\n")
		}
		for _, e := range edges {
			fmt.Fprintf(&b, "  %s --> %s\n", e[0], e[1])
		}
	case "dot":
		b.WriteString("digraph wavesmith {\n  rankdir=LR;\n  node [shape=box];\n")
		for _, w := range order {
			fmt.Fprintf(&b, "  subgraph \"cluster_wave_%d\" {\n    label=\"wave %d\";\n", w, w)
			for _, n := range waves[w] {
				fmt.Fprintf(&b, "    %s [label=%q];\n", n.id, n.label)
			}
			b.WriteString("  }\n")
		}
		for _, e := range edges {
			fmt.Fprintf(&b, "  %s -> %s;\n", e[0], e[1])
		}
		b.WriteString("}\n")
	default:
		return "", fmt.Errorf("%w: graph format %q: want mermaid or dot", ErrOptions, format)
	}
	return b.String(), nil
}
