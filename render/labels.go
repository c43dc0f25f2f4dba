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
	for _, l := range [...]struct{ key, value string }{
		{LabelName, owner},
		{LabelInstance, owner},
		{LabelComponent, strings.ToLower(obj.Kind())},
		{LabelPartOf, partOf},
		{LabelManagedBy, ManagedBy},
	} {
		if _, ok := obj.Labels()[l.key]; !ok {
			obj.SetLabel(l.key, truncateLabel(l.value))
		}
	}
}

// truncateLabel keeps a label value within 63 characters, ending with an
// alphanumeric character.
func truncateLabel(v string) string {
	if len(v) > 63 {
		v = strings.TrimRight(v[:63], "-_.")
	}
	return v
}

// checkMetadata refuses what no applier accepts from a renderer: values
// that are not strings, generateName, and the markers appliers set
// themselves.
func checkMetadata(obj *manifest.Object) error {
	meta, _ := obj.Map["metadata"].(map[string]any)
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
		for k, v := range m {
			if _, ok := v.(string); !ok {
				return obj.FieldError("metadata."+field+"."+k, fmt.Errorf("%w: value must be a string, not %s", manifest.ErrInvalid, typeName(v)))
			}
		}
	}
	return nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}
