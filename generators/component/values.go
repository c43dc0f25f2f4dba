package component

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// Values merges the values files (in order) and spec.values on top, as
// helm reads -f files: with sigs.k8s.io/yaml, so YAML 1.1 rules apply
// (unquoted yes/no/on/off are booleans). spec.values is read the same way
// from the spec's own text (manifest.Object.YAML11), so the same text
// means the same values inline and in a file.
//
// The values files of a Component hold at most MaxValuesSize bytes
// together (generators.ErrTooLarge), each is read through the root (as
// ResolvePath checked it) and dropped once decoded.
func Values(spec *manifest.Object, c *v1alpha1.Component, root string) (map[string]any, error) {
	out := map[string]any{}
	var total int64
	for i, f := range c.Spec.ValuesFiles {
		field := fmt.Sprintf("spec.valuesFiles[%d]", i)
		p, err := ResolvePath(spec, field, f, root)
		if err != nil {
			return nil, err
		}
		b, err := fsroot.ReadFile(root, p)
		if err != nil {
			return nil, spec.FieldError(field, fmt.Errorf("%s: %w", f, err))
		}
		if total += int64(len(b)); total > MaxValuesSize {
			return nil, spec.FieldError(field, fmt.Errorf("%w: with %s, the values files of the Component hold %d bytes, more than the %d (%d MiB) they may hold together", fsroot.ErrTooLarge, f, total, MaxValuesSize, MaxValuesSize>>20))
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, spec.FieldError(field, fmt.Errorf("%w: %s: %v", manifest.ErrInvalid, p, err))
		}
		out = Merge(out, m)
	}
	if c.Spec.Values != nil && len(c.Spec.Values.Raw) > 0 {
		v, err := spec.YAML11("spec", "values")
		if err != nil {
			return nil, spec.FieldError("spec.values", err)
		}
		// Through JSON, as sigs.k8s.io/yaml does: numbers are float64.
		b, err := json.Marshal(v)
		if err != nil {
			return nil, spec.FieldError("spec.values", fmt.Errorf("%w: %v", manifest.ErrInvalid, err))
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, spec.FieldError("spec.values", fmt.Errorf("%w: must be a mapping: %v", manifest.ErrInvalid, err))
		}
		out = Merge(out, m)
	}
	return out, nil
}

// MaxValuesSize bounds the bytes of the values files of one Component
// together: as much as one file may hold (fsroot.MaxFileSize). Without it,
// a list naming a large file many times would have the render read and
// decode it as many times (the decoded maps take many times the bytes).
const MaxValuesSize = fsroot.MaxFileSize

// Merge deep-merges b over a: maps merge, anything else replaces.
func Merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = Merge(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}
