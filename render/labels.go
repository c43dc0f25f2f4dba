package render

import (
	"fmt"
	"strings"

	"github.com/wavesmith/wavesmith/manifest"
)

// The recommended labels every rendered object carries.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelManagedBy = "app.kubernetes.io/managed-by"

	ManagedBy = "wavesmith"
)

// addLabels gives obj the recommended labels it lacks. owner is the name
// of the spec the object belongs to (the object's own name for specs and
// pass-through objects).
func addLabels(obj *manifest.Object, owner string, opts *Options) {
	partOf := opts.PartOf
	if partOf == "" {
		partOf = owner
	}
	labels := obj.Labels()
	for _, l := range [...]struct{ key, value string }{
		{LabelName, owner},
		{LabelInstance, owner},
		{LabelComponent, ""}, // the kind, lower-cased only when needed
		{LabelPartOf, partOf},
		{LabelManagedBy, ManagedBy},
	} {
		if _, ok := labels[l.key]; !ok {
			v := l.value
			if l.key == LabelComponent {
				v = strings.ToLower(obj.Kind())
			}
			obj.SetLabel(l.key, truncateLabel(v))
			labels = obj.Labels()
		}
	}
}

// truncateLabel makes v a valid label value: characters other than
// alphanumerics, '-', '_' and '.' (the ':' of RBAC names) become '-', and
// it keeps within 63 characters, starting and ending with an alphanumeric
// character.
func truncateLabel(v string) string {
	v = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, v)
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "-_.")
}

// checkMetadata refuses what no applier accepts from a renderer: a name
// or namespace that is not a string, values that are not strings,
// generateName, and names and fields the API server's own rules refuse
// (objectViolations); it reports every problem of the object.
func checkMetadata(obj *manifest.Object) error {
	meta, _ := obj.Map["metadata"].(map[string]any)
	var errs []error
	for _, field := range []string{"name", "namespace"} {
		if v, ok := meta[field]; ok && v != nil {
			if _, isString := v.(string); !isString {
				errs = append(errs, obj.FieldError("metadata."+field, fmt.Errorf("%w: must be a string, not %s", manifest.ErrInvalid, manifest.TypeName(v))))
			}
		}
	}
	if len(errs) > 0 {
		return manifest.Join(errs)
	}
	if obj.Name() == "" {
		if _, ok := meta["generateName"]; ok {
			return obj.FieldError("metadata.generateName", ErrGenerateName)
		}
		return obj.FieldError("metadata.name", fmt.Errorf("%w: metadata.name is required", manifest.ErrInvalid))
	}
	if _, ok := meta["generateName"]; ok {
		return obj.FieldError("metadata.generateName", ErrGenerateName)
	}
	for _, field := range []string{"labels", "annotations"} {
		raw, present := meta[field]
		if !present || raw == nil {
			continue
		}
		m, ok := raw.(map[string]any)
		if !ok {
			return obj.FieldError("metadata."+field, fmt.Errorf("%w: must be a mapping of strings", manifest.ErrInvalid))
		}
		if allStrings(m) {
			continue // the common case, checked without sorting the keys
		}
		for _, k := range manifest.SortedKeys(m) {
			if _, ok := m[k].(string); !ok {
				errs = append(errs, obj.FieldError("metadata."+field+"."+k, fmt.Errorf("%w: value must be a string, not %s", manifest.ErrInvalid, manifest.TypeName(m[k]))))
			}
		}
	}
	if len(errs) > 0 {
		return manifest.Join(errs)
	}
	for _, v := range objectViolations(obj) {
		errs = append(errs, obj.FieldError(v.field, apiError(v.msgs)))
	}
	return manifest.Join(errs)
}

// allStrings reports whether every value of m is a string.
func allStrings(m map[string]any) bool {
	for _, v := range m {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}
