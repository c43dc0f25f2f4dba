package component

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/manifest"
)

// ErrOutsideRoot: a source or values path leaves the repository root.
var ErrOutsideRoot = errors.New("path leaves the repository root")

// Decode reads a Component strictly: unknown fields and wrong types are
// errors naming the field path; exactly one source is required.
func Decode(spec *manifest.Object) (*v1alpha1.Component, error) {
	if spec.Name() == "" {
		return nil, spec.FieldError("metadata.name", fmt.Errorf("%w: a Component needs a name", manifest.ErrInvalid))
	}
	raw, _ := spec.Map["spec"]
	if raw == nil {
		return nil, spec.FieldError("spec.source", fmt.Errorf("%w: spec.source is required", manifest.ErrInvalid))
	}
	if err := check(spec, "spec", raw, reflect.TypeOf(v1alpha1.ComponentSpec{})); err != nil {
		return nil, err
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, spec.FieldError("spec", fmt.Errorf("%w: %v", manifest.ErrInvalid, err))
	}
	c := &v1alpha1.Component{}
	if err := json.Unmarshal(b, &c.Spec); err != nil {
		return nil, spec.FieldError("spec", fmt.Errorf("%w: %v", manifest.ErrInvalid, err))
	}
	c.Name, c.Namespace = spec.Name(), spec.Namespace()
	c.Annotations = map[string]string{}
	for k, v := range spec.Annotations() {
		if s, ok := v.(string); ok {
			c.Annotations[k] = s
		}
	}
	src := c.Spec.Source
	switch {
	case (src.Chart == nil) == (src.Kustomization == nil):
		return nil, spec.FieldError("spec.source", fmt.Errorf("%w: set exactly one of chart and kustomization", manifest.ErrInvalid))
	case src.Chart != nil && src.Chart.Path == "":
		return nil, spec.FieldError("spec.source.chart.path", fmt.Errorf("%w: a path is required", manifest.ErrInvalid))
	case src.Kustomization != nil && src.Kustomization.Path == "":
		return nil, spec.FieldError("spec.source.kustomization.path", fmt.Errorf("%w: a path is required", manifest.ErrInvalid))
	}
	return c, nil
}

var jsonType = reflect.TypeOf(apiextensionsv1.JSON{})

// check walks a decoded value against the Go type: unknown fields and
// wrong kinds of values are errors at their field path.
func check(spec *manifest.Object, path string, v any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == jsonType || v == nil {
		return nil
	}
	bad := func(want string) error {
		return spec.FieldError(path, fmt.Errorf("%w: want %s, got %T", manifest.ErrInvalid, want, v))
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("a mapping")
		}
		fields := map[string]reflect.Type{}
		var known []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f.Type
			known = append(known, name)
		}
		for k, e := range m {
			ft, ok := fields[k]
			if !ok {
				return spec.FieldError(path+"."+k, fmt.Errorf("%w: unknown field %q (known: %s)", manifest.ErrInvalid, k, strings.Join(known, ", ")))
			}
			if err := check(spec, path+"."+k, e, ft); err != nil {
				return err
			}
		}
	case reflect.Slice:
		s, ok := v.([]any)
		if !ok {
			return bad("a list")
		}
		for i, e := range s {
			if err := check(spec, fmt.Sprintf("%s[%d]", path, i), e, t.Elem()); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case reflect.Int32, reflect.Int64, reflect.Int:
		if _, ok := v.(int64); !ok {
			return bad("an integer")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad("a boolean")
		}
	}
	return nil
}

// Placement returns the deployment namespace and name: spec.namespace and
// spec.name, defaulting to the Component's own.
func Placement(c *v1alpha1.Component) (namespace, name string) {
	namespace, name = c.Spec.Namespace, c.Spec.Name
	if namespace == "" {
		namespace = c.Namespace
	}
	if name == "" {
		name = c.Name
	}
	return namespace, name
}

// ResolvePath resolves rel against the folder of the spec's file and
// refuses a result outside root, also through symlinks. field names the
// spec field in errors.
func ResolvePath(spec *manifest.Object, field, rel, root string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", spec.FieldError(field, fmt.Errorf("%w: %q is absolute; give a path relative to the spec file", ErrOutsideRoot, rel))
	}
	base := "."
	if f := spec.Source.File; f != "" && f != "-" {
		base = filepath.Dir(f)
	}
	p := filepath.Join(base, rel)
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", spec.FieldError(field, fmt.Errorf("root %s: %w", root, err))
	}
	rootReal, _ = filepath.Abs(rootReal)
	rootAbs, _ := filepath.Abs(root)
	if abs, _ := filepath.Abs(p); !within(abs, rootAbs) && !within(abs, rootReal) {
		// Lexically outside: refuse before asking the file system, so
		// the answer does not depend on what exists beyond the root.
		return "", spec.FieldError(field, fmt.Errorf("%w: %s leaves %s", ErrOutsideRoot, rel, rootAbs))
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if os.IsNotExist(err) {
			return "", spec.FieldError(field, fmt.Errorf("%w: %s does not exist", manifest.ErrInvalid, p))
		}
		return "", spec.FieldError(field, err)
	}
	real, _ = filepath.Abs(real)
	if !within(real, rootReal) {
		return "", spec.FieldError(field, fmt.Errorf("%w: %s resolves to %s, outside %s", ErrOutsideRoot, rel, real, rootReal))
	}
	return p, nil
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

var errNative = fmt.Errorf("%w: charts may not set wavesmith.io annotations; set waves and policies on the Component", manifest.ErrInvalid)
