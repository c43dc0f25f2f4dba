package manifest

import (
	"sort"
	"strings"
)

// Source tells where an object came from.
type Source struct {
	// File is the path as given by the user, "-" for stdin, or the
	// internal.config.kubernetes.io/path of a ResourceList item.
	File string
	// Index is the position of the document in its file, from 0.
	Index int
	// Line is the 1-based line where the document starts, 0 when unknown.
	Line int
}

// Object is one Kubernetes object.
type Object struct {
	Map    map[string]any
	Source Source
	// pos maps a dotted field path to its line, for error messages;
	// lines holds them instead for the few fields of a file decodeSimple
	// read.
	pos   map[string]int
	lines *fieldLines
	// yaml11 lists the plain scalars of the source that YAML 1.1 reads
	// differently (see YAML11).
	yaml11 []yaml11Fix
	// spare becomes the annotations when the first is set on an object
	// that has none (ReserveAnnotations).
	spare map[string]any
}

// New returns an object holding m, with no source.
func New(m map[string]any) *Object { return &Object{Map: m} }

// Key identifies an object for duplicate detection: group, kind,
// namespace and name (the version does not count).
type Key struct {
	Group, Kind, Namespace, Name string
}

// String formats the key as Kind/namespace/name (Kind/name when
// cluster-scoped), with the group when it is not the core group:
// Kind.group/namespace/name.
func (k Key) String() string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace == "" {
		return kind + "/" + k.Name
	}
	return kind + "/" + k.Namespace + "/" + k.Name
}

// APIVersion returns apiVersion.
func (o *Object) APIVersion() string { s, _ := o.Map["apiVersion"].(string); return s }

// Kind returns kind.
func (o *Object) Kind() string { s, _ := o.Map["kind"].(string); return s }

// Group returns the API group from apiVersion ("" for the core group).
func (o *Object) Group() string {
	g, _ := SplitAPIVersion(o.APIVersion())
	return g
}

// Version returns the version from apiVersion.
func (o *Object) Version() string {
	_, v := SplitAPIVersion(o.APIVersion())
	return v
}

// SplitAPIVersion splits "group/version" ("v1" has the empty group).
func SplitAPIVersion(av string) (group, version string) {
	if i := strings.LastIndexByte(av, '/'); i >= 0 {
		return av[:i], av[i+1:]
	}
	return "", av
}

// Name returns metadata.name.
func (o *Object) Name() string { return o.metaString("name") }

// Namespace returns metadata.namespace.
func (o *Object) Namespace() string { return o.metaString("namespace") }

// SetNamespace sets metadata.namespace.
func (o *Object) SetNamespace(ns string) { o.meta(true)["namespace"] = ns }

// Key returns the object's identity.
func (o *Object) Key() Key {
	name, ns := o.nameAndNamespace()
	return Key{Group: o.Group(), Kind: o.Kind(), Namespace: ns, Name: name}
}

// nameAndNamespace returns Name() and Namespace(), reading metadata once.
func (o *Object) nameAndNamespace() (name, namespace string) {
	m := o.meta(false)
	name, _ = m["name"].(string)
	namespace, _ = m["namespace"].(string)
	return name, namespace
}

func (o *Object) metaString(field string) string {
	m := o.meta(false)
	if m == nil {
		return ""
	}
	s, _ := m[field].(string)
	return s
}

func (o *Object) meta(create bool) map[string]any {
	m, _ := o.Map["metadata"].(map[string]any)
	if m == nil && create {
		m = map[string]any{}
		o.Map["metadata"] = m
	}
	return m
}

// Labels returns metadata.labels (nil when absent). Values that are not
// strings are left out; Validate reports them.
func (o *Object) Labels() map[string]any { return o.stringMap("labels", false) }

// Annotations returns metadata.annotations (nil when absent).
func (o *Object) Annotations() map[string]any { return o.stringMap("annotations", false) }

// Annotation returns one annotation and whether it is set.
func (o *Object) Annotation(key string) (string, bool) {
	a := o.Annotations()
	if a == nil {
		return "", false
	}
	v, ok := a[key].(string)
	return v, ok
}

// SetAnnotation sets one annotation, creating the map when needed.
func (o *Object) SetAnnotation(key, value string) { o.stringMap("annotations", true)[key] = value }

// SetLabel sets one label, creating the map when needed.
func (o *Object) SetLabel(key, value string) { o.stringMap("labels", true)[key] = value }

// DeleteAnnotation removes one annotation; an empty map is removed too.
func (o *Object) DeleteAnnotation(key string) {
	m := o.meta(false)
	if m == nil {
		return
	}
	a, _ := m["annotations"].(map[string]any)
	delete(a, key)
	if a != nil && len(a) == 0 {
		delete(m, "annotations")
	}
}

// DeleteLabel removes one label; an empty map is removed too.
func (o *Object) DeleteLabel(key string) {
	m := o.meta(false)
	if m == nil {
		return
	}
	l, _ := m["labels"].(map[string]any)
	delete(l, key)
	if l != nil && len(l) == 0 {
		delete(m, "labels")
	}
}

func (o *Object) stringMap(field string, create bool) map[string]any {
	m := o.meta(create)
	if m == nil {
		return nil
	}
	s, _ := m[field].(map[string]any)
	if s == nil && create {
		if field == "annotations" && o.spare != nil {
			s, o.spare = o.spare, nil
		} else {
			s = map[string]any{}
		}
		m[field] = s
	}
	return s
}

// ReserveAnnotations gives o an empty map to take as its annotations when
// the first one is set and it has none, instead of making one: a
// generator that reuses its maps across specs (generators/kaoto) hands
// over the map the render's decoration fills. The map must be empty and
// o's alone; DeepCopy does not copy it. nil drops the reservation.
func (o *Object) ReserveAnnotations(m map[string]any) { o.spare = m }

// Line returns the line of a dotted field path ("spec.ingress.host") in the
// source document, or the document's line when the path is unknown. A key
// holding dots may be given in brackets
// ("metadata.annotations[wavesmith.io/update-policy]", see KeyPath).
func (o *Object) Line(path string) int {
	if strings.IndexByte(path, '[') >= 0 {
		path = dottedKeys(path)
	}
	for p := path; p != ""; {
		if l, ok := o.pos[p]; ok {
			return l
		}
		if l, ok := o.lines.find(p); ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return o.Source.Line
}

// fieldLines are the lines of an object's fields as a list: each field's
// dotted path is paths[start:end].
type fieldLines struct {
	paths  string
	fields []fieldLine
}

type fieldLine struct{ start, end, line int }

// find returns the line of the field at path.
func (l *fieldLines) find(path string) (int, bool) {
	if l == nil {
		return 0, false
	}
	for _, f := range l.fields {
		if l.paths[f.start:f.end] == path {
			return f.line, true
		}
	}
	return 0, false
}

// DeepCopy returns a copy sharing nothing with o.
func (o *Object) DeepCopy() *Object {
	c := &Object{Map: DeepCopyValue(o.Map).(map[string]any), Source: o.Source, pos: o.pos, lines: o.lines, yaml11: o.yaml11}
	return c
}

// DeepCopyValue copies a JSON-compatible value.
func DeepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = DeepCopyValue(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = DeepCopyValue(e)
		}
		return s
	default:
		return v
	}
}

// SortedKeys returns the keys of m in byte order.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// KeyPath returns the field path of key under the mapping at path, in
// brackets when the key holds a dot or a bracket
// ("metadata.annotations[wavesmith.io/update-policy]"), so that the path
// reads unambiguously; Line accepts it.
func KeyPath(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// dottedKeys turns the bracketed keys of a path (KeyPath) into the dotted
// form the decoder records lines under; list indexes stay.
func dottedKeys(path string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			b.WriteString(path)
			return b.String()
		}
		j += i
		inner := path[i+1 : j]
		b.WriteString(path[:i])
		if isIndex(inner) {
			b.WriteString(path[i : j+1])
		} else {
			b.WriteByte('.')
			b.WriteString(inner)
		}
		path = path[j+1:]
	}
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
