package manifest

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// YAML 1.1 readings. Helm reads values files with sigs.k8s.io/yaml (go-yaml
// v2, YAML 1.1 resolution): there, unquoted y, yes, on, n, no and off (in
// their three spellings) are booleans, and a mapping key becomes the string
// form of what it resolves to (on: is "true", 010: is "8", 1.50: is "1.5").
// Decode reads YAML 1.2 (go-yaml v3), where those are strings and keys keep
// their text. While converting, Decode notes every plain scalar the two
// read differently, with the value sigs.k8s.io/yaml gives the same text, so
// that a field can be read as Helm would read it (Object.YAML11).

// pathElem is one step of a path: a mapping key or a sequence index.
type pathElem struct {
	key   string
	index int
	seq   bool
}

func (e pathElem) String() string {
	if e.seq {
		return "[" + strconv.Itoa(e.index) + "]"
	}
	return "." + e.key
}

// yaml11Fix is one plain scalar that YAML 1.1 reads differently.
type yaml11Fix struct {
	// path leads to the value (value fixes) or to the mapping holding
	// the key (key fixes).
	path  []pathElem
	isKey bool
	// key is the key as Decode read it (key fixes).
	key string
	// was is the value as Decode read it (value fixes).
	was any
	// value is the YAML 1.1 value, or the YAML 1.1 key (a string).
	value any
	// err is set for a key YAML 1.1 cannot read (a null key).
	err error
}

// onlyYAML11Bools are the plain scalars that only YAML 1.1 resolves to
// booleans (go-yaml v2's resolve table minus v3's).
var onlyYAML11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true, "off": true, "Off": true, "OFF": true,
}

// noteScalar records a plain value scalar that YAML 1.1 reads as another
// value. Only the YAML 1.1 booleans qualify: both versions resolve numbers,
// nulls, true and false alike.
func (c *converter) noteScalar(n *yaml.Node, v any) {
	s, ok := v.(string)
	if !ok || n.Style != 0 || !onlyYAML11Bools[s] {
		return // quoted, block, tagged, or read alike
	}
	var m map[string]any
	if err := sigsyaml.Unmarshal([]byte("v: "+s+"\n"), &m); err != nil {
		return
	}
	if got, ok := m["v"]; ok && got != v {
		c.fixes = append(c.fixes, yaml11Fix{path: slices.Clone(c.segs), was: v, value: got})
	}
}

// noteKey records a plain mapping key that YAML 1.1 turns into another
// string: one that resolves to something other than a string in either
// version.
func (c *converter) noteKey(kn *yaml.Node) {
	tag := kn.ShortTag()
	if kn.Style != 0 || tag == "!!merge" || (tag == "!!str" && !onlyYAML11Bools[kn.Value]) {
		return
	}
	var m map[string]any
	err := sigsyaml.Unmarshal([]byte(kn.Value+": 0\n"), &m)
	got := kn.Value
	for k := range m {
		got = k
	}
	if err == nil && got == kn.Value {
		return
	}
	if err != nil {
		err = fmt.Errorf("%w: YAML 1.1 cannot read the key %q: %v", ErrInvalid, kn.Value, err)
	}
	c.fixes = append(c.fixes, yaml11Fix{path: slices.Clone(c.segs), isKey: true, key: kn.Value, value: got, err: err})
}

// keepMergedFixes drops the fixes noted since mark (while converting a
// merge source of the mapping at c.segs) for entries the merge did not
// take: explicit keys and earlier merges win.
func (c *converter) keepMergedFixes(mark int, taken map[string]bool) {
	depth := len(c.segs)
	kept := c.fixes[:mark]
	for _, f := range c.fixes[mark:] {
		entry := f.key
		if len(f.path) > depth {
			entry = f.path[depth].key
		}
		if taken[entry] {
			kept = append(kept, f)
		}
	}
	c.fixes = kept
}

// fixesBelow returns the fixes under prefix, with the prefix removed.
func (o *Object) fixesBelow(prefix ...pathElem) []yaml11Fix {
	var out []yaml11Fix
	for _, f := range o.yaml11 {
		if len(f.path) >= len(prefix) && slices.Equal(f.path[:len(prefix)], prefix) {
			f.path = f.path[len(prefix):]
			out = append(out, f)
		}
	}
	return out
}

// YAML11 returns a copy of the value at the mapping keys path as YAML 1.1,
// the way Helm reads values files (sigs.k8s.io/yaml), reads the object's
// source text: unquoted yes, no, on, off, y and n are booleans, and keys
// are the string form of what they resolve to. Quoted scalars stay
// strings. An object built in memory reads as its Map. The error names a
// key YAML 1.1 cannot read (a null key).
func (o *Object) YAML11(path ...string) (any, error) {
	var v any = o.Map
	prefix := make([]pathElem, len(path))
	for i, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
		prefix[i] = pathElem{key: k}
	}
	v = DeepCopyValue(v)
	fixes := o.fixesBelow(prefix...)
	if len(fixes) == 0 {
		return v, nil
	}
	// Values first, by the paths as read; then keys, deepest first, so
	// that renaming a key does not move the paths still to visit.
	for _, f := range fixes {
		if f.isKey || len(f.path) == 0 {
			continue
		}
		parent, last := walk(v, f.path[:len(f.path)-1]), f.path[len(f.path)-1]
		switch p := parent.(type) {
		case map[string]any:
			if cur, ok := p[last.key]; ok && !last.seq && cur == f.was {
				p[last.key] = f.value
			}
		case []any:
			if last.seq && last.index < len(p) && p[last.index] == f.was {
				p[last.index] = f.value
			}
		}
	}
	sort.SliceStable(fixes, func(i, j int) bool { return len(fixes[i].path) > len(fixes[j].path) })
	for _, f := range fixes {
		if !f.isKey {
			continue
		}
		m, ok := walk(v, f.path).(map[string]any)
		if !ok {
			continue
		}
		e, ok := m[f.key]
		if !ok {
			continue
		}
		if f.err != nil {
			return nil, fmt.Errorf("%s: %w", pathString(path, f.path, f.key), f.err)
		}
		to := f.value.(string)
		if _, taken := m[to]; taken {
			return nil, fmt.Errorf("%s: %w: YAML 1.1 reads this key as %q, which the mapping already has; quote one of them", pathString(path, f.path, f.key), ErrInvalid, to)
		}
		delete(m, f.key)
		m[to] = e
	}
	return v, nil
}

// walk follows path from v, returning nil when it leads nowhere.
func walk(v any, path []pathElem) any {
	for _, e := range path {
		switch t := v.(type) {
		case map[string]any:
			if e.seq {
				return nil
			}
			v = t[e.key]
		case []any:
			if !e.seq || e.index >= len(t) {
				return nil
			}
			v = t[e.index]
		default:
			return nil
		}
	}
	return v
}

func pathString(keys []string, rest []pathElem, key string) string {
	var b strings.Builder
	b.WriteString(strings.Join(keys, "."))
	for _, e := range rest {
		b.WriteString(e.String())
	}
	b.WriteString("." + key)
	return strings.TrimPrefix(b.String(), ".")
}
