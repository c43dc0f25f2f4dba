package kindscope

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/wavesmith/wavesmith/manifest"
)

// GroupKind names a kind: Group is "" for the core group.
type GroupKind struct{ Group, Kind string }

func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// Table maps kinds to their scope. The zero value knows nothing; a nil
// *Table knows the built-in kinds only.
type Table struct {
	namespaced map[GroupKind]bool
}

// ErrAPIResources is wrapped by every error of ParseAPIResources.
var ErrAPIResources = errors.New("not in the format of kubectl api-resources")

var (
	//go:embed builtin.txt
	builtinText []byte
	//go:embed removed.txt
	removedText []byte
)

var builtin = sync.OnceValue(func() *Table {
	t := &Table{}
	for _, f := range []struct {
		name string
		text []byte
	}{{"builtin.txt", builtinText}, {"removed.txt", removedText}} {
		ft, err := ParseAPIResources(f.name, f.text)
		if err != nil {
			panic(fmt.Sprintf("scope: the embedded table: %v", err))
		}
		t.Merge(ft)
	}
	return t
})

// Builtin returns the built-in kinds of Kubernetes, alpha and beta APIs
// included, and the kinds earlier releases served (removed.txt). The
// caller must not change it: use Clone.
func Builtin() *Table { return builtin() }

// Clone returns a copy of t (of the built-in table for a nil t).
func (t *Table) Clone() *Table {
	if t == nil {
		t = Builtin()
	}
	c := &Table{namespaced: make(map[GroupKind]bool, len(t.namespaced))}
	for k, v := range t.namespaced {
		c.namespaced[k] = v
	}
	return c
}

// Set records a kind's scope, replacing what t knew.
func (t *Table) Set(gk GroupKind, namespaced bool) {
	if t.namespaced == nil {
		t.namespaced = map[GroupKind]bool{}
	}
	t.namespaced[gk] = namespaced
}

// Merge records every kind of other in t, replacing what t knew of them.
func (t *Table) Merge(other *Table) {
	if other == nil {
		return
	}
	for k, v := range other.namespaced {
		t.Set(k, v)
	}
}

// Namespaced reports whether objects of the kind are namespaced, and
// whether t knows the kind at all.
func (t *Table) Namespaced(group, kind string) (namespaced, known bool) {
	if t == nil {
		t = Builtin()
	}
	namespaced, known = t.namespaced[GroupKind{group, kind}]
	return namespaced, known
}

// Len is the number of kinds t knows.
func (t *Table) Len() int {
	if t == nil {
		return Builtin().Len()
	}
	return len(t.namespaced)
}

// LearnCRDs records the scope of every CustomResourceDefinition among
// objs (spec.group, spec.names.kind, spec.scope).
func (t *Table) LearnCRDs(objs []*manifest.Object) {
	for _, o := range objs {
		if o.Kind() != "CustomResourceDefinition" || o.Group() != "apiextensions.k8s.io" {
			continue
		}
		spec, _ := o.Map["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, _ := spec["group"].(string)
		kind, _ := names["kind"].(string)
		switch s, _ := spec["scope"].(string); s {
		case "Cluster":
			t.Set(GroupKind{group, kind}, false)
		case "Namespaced":
			t.Set(GroupKind{group, kind}, true)
		}
	}
}

// ParseAPIResources reads the output of kubectl api-resources (with its
// header line; -o wide and the default output both work) into a table.
// Columns are found by the header's words, since SHORTNAMES may be empty.
func ParseAPIResources(file string, data []byte) (*Table, error) {
	t := &Table{namespaced: map[GroupKind]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var cols map[string]int
	var order []int
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), " \t\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		if cols == nil {
			cols = map[string]int{}
			for i := 0; i < len(text); {
				for i < len(text) && text[i] == ' ' {
					i++
				}
				j := i
				for j < len(text) && text[j] != ' ' {
					j++
				}
				if j > i {
					cols[text[i:j]] = i
					order = append(order, i)
				}
				i = j
			}
			for _, c := range []string{"APIVERSION", "NAMESPACED", "KIND"} {
				if _, ok := cols[c]; !ok {
					return nil, fmt.Errorf("%s:%d: %w: the header has no %s column (run kubectl api-resources without --no-headers)", file, line, ErrAPIResources, c)
				}
			}
			continue
		}
		// A row with one word per column (no empty SHORTNAMES) is read by
		// words, so that a file aligned by hand reads too; otherwise by
		// the header's columns.
		words := strings.Fields(text)
		field := func(name string) string {
			if len(words) == len(order) {
				for i, o := range order {
					if o == cols[name] {
						return words[i]
					}
				}
			}
			start := cols[name]
			if start >= len(text) {
				return ""
			}
			end := len(text)
			for _, o := range order {
				if o > start && o < end {
					end = o
				}
			}
			if end > len(text) {
				end = len(text)
			}
			return strings.TrimSpace(text[start:end])
		}
		apiVersion, ns, kind := field("APIVERSION"), field("NAMESPACED"), field("KIND")
		group := ""
		if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
			group = apiVersion[:i]
		}
		if apiVersion == "" || kind == "" || strings.ContainsAny(kind, " /") {
			return nil, fmt.Errorf("%s:%d: %w: want APIVERSION and KIND under their headers, got %q", file, line, ErrAPIResources, text)
		}
		switch ns {
		case "true":
			t.Set(GroupKind{group, kind}, true)
		case "false":
			t.Set(GroupKind{group, kind}, false)
		default:
			return nil, fmt.Errorf("%s:%d: %w: NAMESPACED is %q, want true or false", file, line, ErrAPIResources, ns)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if cols == nil {
		return nil, fmt.Errorf("%s: %w: the file is empty", file, ErrAPIResources)
	}
	return t, nil
}

// Format writes t in the format of kubectl api-resources (the columns
// APIVERSION, NAMESPACED and KIND; the API version is the group's name
// with the version "*"), sorted by group and kind.
func (t *Table) Format() []byte {
	var keys []GroupKind
	for k := range t.namespaced {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Group != keys[j].Group {
			return keys[i].Group < keys[j].Group
		}
		return keys[i].Kind < keys[j].Kind
	})
	width := len("APIVERSION")
	for _, k := range keys {
		if n := len(apiVersionOf(k)); n > width {
			width = n
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-*s   %-10s   %s\n", width, "APIVERSION", "NAMESPACED", "KIND")
	for _, k := range keys {
		fmt.Fprintf(&b, "%-*s   %-10t   %s\n", width, apiVersionOf(k), t.namespaced[k], k.Kind)
	}
	return b.Bytes()
}

func apiVersionOf(k GroupKind) string {
	if k.Group == "" {
		return "v1"
	}
	return k.Group + "/*"
}
