package inventory

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Errors of Parse and ParseEntry, wrapped with the offending line.
var (
	// ErrMalformed: a line is not group/version/Kind/namespace/name
	// followed by key=value attributes.
	ErrMalformed = errors.New("malformed inventory entry")
	// ErrUnknownAttribute: an attribute other than hook= or purge-order=.
	ErrUnknownAttribute = errors.New("unknown inventory attribute")
	// ErrInvalidAttribute: a known attribute with a value it does not take,
	// or given twice.
	ErrInvalidAttribute = errors.New("invalid inventory attribute")
	// ErrConflict: one object listed twice with different attributes.
	ErrConflict = errors.New("object listed twice")
)

// Entry attribute keys, written after the object as key=value.
const (
	attrHook       = "hook"
	attrPurgeOrder = "purge-order"
)

// Entry names one child of a spec: group/version/Kind/namespace/name. The
// core group and cluster-scoped namespaces are empty strings, so an entry
// always has exactly four slashes. Hook and PurgeOrder record the child's
// wavesmith.io/hook and wavesmith.io/purge-order: a child that has either
// may be absent from the cluster when its spec is done.
type Entry struct {
	Group     string
	Version   string
	Kind      string
	Namespace string
	Name      string
	// Hook is the wavesmith.io/hook value ("" for none).
	Hook string
	// PurgeOrder is the wavesmith.io/purge-order value (nil for none).
	PurgeOrder *int
}

// String formats the object the entry names as
// group/version/Kind/namespace/name, without attributes: it identifies
// the child.
func (e Entry) String() string {
	return e.Group + "/" + e.Version + "/" + e.Kind + "/" + e.Namespace + "/" + e.Name
}

// Line formats the entry as one line of the Inventory annotation: String,
// then " hook=<v>" and " purge-order=<n>" when set.
func (e Entry) Line() string { return e.attributes(e.String()) }

// attributes is s, the entry's String, with its attributes.
func (e Entry) attributes(s string) string {
	if e.Hook != "" {
		s += " " + attrHook + "=" + e.Hook
	}
	if e.PurgeOrder != nil {
		s += " " + attrPurgeOrder + "=" + strconv.Itoa(*e.PurgeOrder)
	}
	return s
}

// Transient reports whether the child may be absent when its spec is done:
// a hook, or an object with a purge order.
func (e Entry) Transient() bool {
	return e.Hook != "" || e.PurgeOrder != nil
}

// APIVersion returns the apiVersion of the entry ("v1" for the core group).
func (e Entry) APIVersion() string {
	if e.Group == "" {
		return e.Version
	}
	return e.Group + "/" + e.Version
}

// ParseEntry parses one line: group/version/Kind/namespace/name, then
// optional space-separated attributes hook=<HookValue> and
// purge-order=<order>.
func ParseEntry(s string) (Entry, error) {
	fields := strings.Split(s, " ")
	p := strings.Split(fields[0], "/")
	if len(p) != 5 || p[1] == "" || p[2] == "" || p[4] == "" {
		return Entry{}, fmt.Errorf("inventory entry %q: want group/version/Kind/namespace/name [hook=...] [purge-order=...]: %w", s, ErrMalformed)
	}
	e := Entry{Group: p[0], Version: p[1], Kind: p[2], Namespace: p[3], Name: p[4]}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return Entry{}, fmt.Errorf("inventory entry %q: attribute %q: want key=value: %w", s, f, ErrMalformed)
		}
		if seen[k] {
			return Entry{}, fmt.Errorf("inventory entry %q: attribute %s given twice: %w", s, k, ErrInvalidAttribute)
		}
		seen[k] = true
		switch k {
		case attrHook:
			if err := ValidateHook(v); err != nil {
				return Entry{}, fmt.Errorf("inventory entry %q: %w", s, err)
			}
			e.Hook = v
		case attrPurgeOrder:
			n, err := ParseOrder(v)
			if err != nil {
				return Entry{}, fmt.Errorf("inventory entry %q: purge-order: %w: %w", s, err, ErrInvalidAttribute)
			}
			e.PurgeOrder = &n
		default:
			return Entry{}, fmt.Errorf("inventory entry %q: attribute %q: want hook= or purge-order=: %w", s, k, ErrUnknownAttribute)
		}
	}
	return e, nil
}

// ValidateHook checks a wavesmith.io/hook value: a comma-separated list of
// HookValues, each at most once.
func ValidateHook(v string) error {
	if v == "" {
		return fmt.Errorf("hook: empty value, want a comma-separated list of %s: %w", strings.Join(HookValues, ", "), ErrInvalidAttribute)
	}
	seen := map[string]bool{}
	for _, h := range strings.Split(v, ",") {
		known := false
		for _, a := range HookValues {
			known = known || h == a
		}
		if !known {
			return fmt.Errorf("hook %q: %q is not one of %s: %w", v, h, strings.Join(HookValues, ", "), ErrInvalidAttribute)
		}
		if seen[h] {
			return fmt.Errorf("hook %q: %s given twice: %w", v, h, ErrInvalidAttribute)
		}
		seen[h] = true
	}
	return nil
}

// Format renders entries as the value of the Inventory annotation: one
// Line per entry, sorted by object then attributes, without duplicates.
func Format(entries []Entry) string {
	type keyed struct{ object, line string }
	sorted := make([]keyed, len(entries))
	n := 0
	for i, e := range entries {
		k := keyed{object: e.String()}
		k.line = e.attributes(k.object)
		sorted[i] = k
		n += len(k.line) + 1
	}
	// Entries equal in object and line are the same bytes: the order
	// among them does not show.
	slices.SortFunc(sorted, func(a, b keyed) int {
		if c := strings.Compare(a.object, b.object); c != 0 {
			return c
		}
		return strings.Compare(a.line, b.line)
	})
	var out strings.Builder
	out.Grow(n)
	for i, e := range sorted {
		if i > 0 && e.line == sorted[i-1].line {
			continue
		}
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(e.line)
	}
	return out.String()
}

// Parse reads the value of the Inventory annotation, in the form Format
// writes or the older one without attributes. Blank lines are skipped and
// an entry listed twice alike is kept once; one object listed twice with
// different attributes is an error.
func Parse(v string) ([]Entry, error) {
	var entries []Entry
	byObject := map[string]string{}
	for _, line := range strings.Split(v, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		e, err := ParseEntry(line)
		if err != nil {
			return nil, err
		}
		if prev, ok := byObject[e.String()]; ok {
			if prev != e.Line() {
				return nil, fmt.Errorf("inventory entries %q and %q: %w", prev, e.Line(), ErrConflict)
			}
			continue
		}
		byObject[e.String()] = e.Line()
		entries = append(entries, e)
	}
	return entries, nil
}
