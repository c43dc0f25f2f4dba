package manifest

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// FieldCheck says how CheckFields reports: the error a message becomes
// (wrapping the caller's sentinel), the Go types whose values are taken
// as they are (free-form JSON), and whether int32 fields must hold a value
// in the int32 range.
type FieldCheck struct {
	// Err turns a message ("unknown field ...", "want ..., got ...") into
	// the error reported at the field; nil: ErrInvalid wrapped.
	Err func(msg string) error
	// Opaque types are not looked into (apiextensionsv1.JSON).
	Opaque []reflect.Type
	// Int32Range refuses an int32 field's value outside -2^31..2^31-1.
	Int32Range bool
}

// CheckFields walks a decoded value v (at path in o) against the Go type t
// of its field, the json tags naming the fields: every unknown field (the
// known ones listed) and every value of the wrong type, each located at its
// line, in field order. It is the one strict reading of wavesmith's own
// kinds (a Component's spec, a RenderConfig's).
func CheckFields(o *Object, path string, v any, t reflect.Type, fc FieldCheck) []error {
	if fc.Err == nil {
		fc.Err = func(msg string) error { return fmt.Errorf("%w: %s", ErrInvalid, msg) }
	}
	return fc.check(o, path, v, t)
}

func (fc *FieldCheck) check(o *Object, path string, v any, t reflect.Type) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil
	}
	for _, op := range fc.Opaque {
		if t == op {
			return nil
		}
	}
	bad := func(want string) []error {
		return []error{o.FieldError(path, fc.Err(fmt.Sprintf("want %s, got %s", want, TypeName(v))))}
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
			name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
			if name != "" && name != "-" {
				fields[name] = t.Field(i).Type
				known = append(known, name)
			}
		}
		sort.Strings(known)
		var errs []error
		for _, k := range SortedKeys(m) {
			ft, ok := fields[k]
			if !ok {
				errs = append(errs, o.FieldError(KeyPath(path, k), fc.Err(fmt.Sprintf("unknown field %q (known: %s)", k, strings.Join(known, ", ")))))
				continue
			}
			errs = append(errs, fc.check(o, KeyPath(path, k), m[k], ft)...)
		}
		return errs
	case reflect.Slice:
		l, ok := v.([]any)
		if !ok {
			return bad("a list")
		}
		var errs []error
		for i, e := range l {
			errs = append(errs, fc.check(o, fmt.Sprintf("%s[%d]", path, i), e, t.Elem())...)
		}
		return errs
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case reflect.Int32:
		n, ok := v.(int64)
		if !ok || fc.Int32Range && (n < math.MinInt32 || n > math.MaxInt32) {
			return bad("an integer")
		}
	case reflect.Int, reflect.Int64:
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
