package manifest

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
	name, ns := o.nameAndNamespace()
	return &Ref{APIVersion: o.APIVersion(), Kind: o.Kind(), Namespace: ns, Name: name}
}

// Error formats as "file:line: Kind/namespace/name: field.path: message",
// leaving out the parts that are unknown. File, object and field are
// quoted (Quote) when they hold control characters, so that a file or
// object name cannot forge report lines or send terminal escapes.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(Quote(e.File))
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Object != "" {
		b.WriteString(Quote(e.Object))
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(Quote(e.Field))
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Quote returns s as it is when it holds no character that could disturb
// a report line, else quoted as Go quotes strings (strconv.Quote: "a\nb",
// "\x1b[2J"). Such characters are the control characters (line breaks,
// escape, C1), Unicode line and paragraph separators, the bidirectional
// overrides and isolates that reorder what a terminal shows, and bytes
// that are not UTF-8. One pass, no allocation for ordinary names.
func Quote(s string) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return strconv.Quote(s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, size) {
			return strconv.Quote(s)
		}
		i += size
	}
	return s
}

func unsafeRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size <= 1:
		return true
	case unicode.IsControl(r):
		return true
	case r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true // bidirectional marks, embeddings, overrides and isolates
	}
	return false
}

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

// MaxReported bounds the errors a report lists one by one (JoinReport):
// beyond it, the rest is summarised by kind, so that thousands of bad
// inputs give a readable report, not megabytes of stderr.
const MaxReported = 100

// maxKinds bounds the kinds an Omitted names.
const maxKinds = 10

// Omitted stands for the errors of a report beyond MaxReported. It reports
// how many there are of each kind and unwraps to all of them, so that
// errors.Is and errors.As still see every error.
type Omitted []error

// Error formats "and 19,900 more errors: 19,800 metadata.name: invalid
// value: refused by the API server's rules; 100 ...", the kinds by count,
// then by name.
func (o Omitted) Error() string {
	counts := map[string]int{}
	for _, e := range o {
		counts[errorKind(e)]++
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if counts[kinds[i]] != counts[kinds[j]] {
			return counts[kinds[i]] > counts[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	var b strings.Builder
	b.WriteString("and ")
	b.WriteString(thousands(len(o)))
	b.WriteString(" more errors not listed: ")
	for i, k := range kinds {
		if i == maxKinds {
			rest := 0
			for _, k := range kinds[i:] {
				rest += counts[k]
			}
			fmt.Fprintf(&b, "; %s of %d other kinds", thousands(rest), len(kinds)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(thousands(counts[k]))
		b.WriteString(" × ")
		b.WriteString(k)
	}
	return b.String()
}

// Unwrap returns the omitted errors.
func (o Omitted) Unwrap() []error { return o }

// errorKind names the kind of an error for a summary: the field of a
// located error (indices left out) and the messages of the sentinels it
// wraps, e.g. "metadata.name: invalid value: refused by the API server's
// rules". Errors without sentinels are of the kind of their own message,
// cut short.
func errorKind(err error) string {
	var parts []string
	var me *Error
	if errors.As(err, &me) {
		if f := dropIndices(me.Field); f != "" {
			parts = append(parts, f)
		}
		err = me.Err
	}
	var leaves []string
	var walk func(e error)
	walk = func(e error) {
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				walk(next)
				return
			}
		case interface{ Unwrap() []error }:
			for _, next := range u.Unwrap() {
				walk(next)
			}
			return
		}
		leaves = append(leaves, e.Error())
	}
	if err != nil {
		walk(err)
	}
	for _, l := range leaves {
		if len(l) > 80 {
			l = l[:77] + "..."
		}
		parts = append(parts, Quote(l))
	}
	return strings.Join(parts, ": ")
}

// dropIndices turns "items[12].name" into "items[].name".
func dropIndices(field string) string {
	if strings.IndexByte(field, '[') < 0 {
		return field
	}
	var b strings.Builder
	in := false
	for _, r := range field {
		switch {
		case r == '[':
			in = true
			b.WriteRune(r)
		case r == ']':
			in = false
			b.WriteRune(r)
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// thousands formats n with commas: 19,900.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// JoinReport joins errors for a report, in the order given: like Join, but
// beyond MaxReported errors the rest become one Omitted, listed last. An
// Omitted among errs is first expanded into its errors, so that reports
// joined again stay capped once.
func JoinReport(errs []error) error {
	var flat []error
	for _, e := range errs {
		if o, ok := e.(Omitted); ok {
			flat = append(flat, o...)
			continue
		}
		flat = append(flat, e)
	}
	if len(flat) <= MaxReported {
		return Join(flat)
	}
	out := make(Errors, 0, MaxReported+1)
	out = append(out, flat[:MaxReported]...)
	return append(out, Omitted(flat[MaxReported:]))
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

// JoinSorted joins non-nil errors, flattening joined lists, in a stable
// order (by message), so the report does not depend on scheduling. It is
// where errors are joined for reporting: beyond MaxReported, the
// rest is one Omitted summarising them by kind.
func JoinSorted(errs []error) error {
	var flat []error
	var add func(e error, top bool)
	add = func(e error, top bool) {
		switch j := e.(type) {
		case nil:
		case Errors:
			for _, e := range j {
				add(e, false)
			}
		case Omitted:
			for _, e := range j {
				add(e, false)
			}
		case interface{ Unwrap() []error }:
			if !top {
				flat = append(flat, e)
				return
			}
			for _, e := range j.Unwrap() {
				add(e, false)
			}
		default:
			flat = append(flat, e)
		}
	}
	for _, e := range errs {
		add(e, true)
	}
	// By file, object and field path, so that the mistakes of one object
	// read in the order of its fields, then by the whole text.
	type keyed struct {
		key string
		err error
	}
	ks := make([]keyed, len(flat))
	for i, e := range flat {
		ks[i].err = e
		var me *Error
		if errors.As(e, &me) {
			ks[i].key = me.File + "\x00" + me.Object + "\x00" + me.Field + "\x00"
		}
		ks[i].key += e.Error()
	}
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].key < ks[j].key })
	for i := range ks {
		flat[i] = ks[i].err
	}
	return JoinReport(flat)
}
