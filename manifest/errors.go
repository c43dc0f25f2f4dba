package manifest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrSyntax: the input is not well-formed YAML or JSON.
	ErrSyntax = errors.New("malformed YAML")
	// ErrEncoding: the input is not UTF-8.
	ErrEncoding = errors.New("not UTF-8")
	// ErrTooComplex: the input expands beyond the decoding budget (an alias bomb).
	ErrTooComplex = errors.New("document too complex")
	// ErrNotObject: a document is not a Kubernetes object.
	ErrNotObject = errors.New("not a Kubernetes object")
	// ErrInvalid: an object or field has an invalid value.
	ErrInvalid = errors.New("invalid value")
)

// Error locates a problem: file (and line), object, and field path.
type Error struct {
	File   string
	Line   int
	Object string // Kind/namespace/name
	Field  string // dotted field path
	Err    error
	// Ref identifies the object for machine readers (KRM results); nil
	// when the error is not about one object.
	Ref *Ref
}

// Ref identifies an object by apiVersion, kind, namespace and name.
type Ref struct {
	APIVersion, Kind, Namespace, Name string
}

// Ref returns the reference of o.
func (o *Object) Ref() *Ref {
	return &Ref{APIVersion: o.APIVersion(), Kind: o.Kind(), Namespace: o.Namespace(), Name: o.Name()}
}

// Error formats as "file:line: Kind/namespace/name: field.path: message",
// leaving out the parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Object != "" {
		b.WriteString(e.Object)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// FieldError returns an Error about a field of o, located in o's source.
func (o *Object) FieldError(field string, err error) *Error {
	return &Error{File: o.Source.File, Line: o.Line(field), Object: o.Key().String(), Field: field, Err: err, Ref: o.Ref()}
}

// Errors is a list of errors reported together. It unwraps to each of them.
type Errors []error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (es Errors) Unwrap() []error { return es }

// Join returns nil for no errors, the error itself for one, else Errors.
func Join(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return Errors(errs)
}

// Warning is a problem that does not stop the render, located like Error.
type Warning struct {
	File    string
	Object  string
	Field   string
	Message string
	Ref     *Ref
}

// Warn returns a warning about a field of o.
func (o *Object) Warn(field, message string) Warning {
	return Warning{File: o.Source.File, Object: o.Key().String(), Field: field, Message: message, Ref: o.Ref()}
}

// String formats the warning like Error.
func (w Warning) String() string {
	e := Error{File: w.File, Object: w.Object, Field: w.Field, Err: errors.New(w.Message)}
	return e.Error()
}

// TypeName names the type of a decoded value for messages: "a mapping",
// "a list", "a number", "a boolean", "null", "string".
func TypeName(v any) string {
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
