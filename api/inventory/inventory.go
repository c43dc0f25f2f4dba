package inventory

import (
	"fmt"
	"sort"
	"strings"
)

// Entry names one child of a spec: group/version/Kind/namespace/name. The
// core group and cluster-scoped namespaces are empty strings, so an entry
// always has exactly four slashes.
type Entry struct {
	Group     string
	Version   string
	Kind      string
	Namespace string
	Name      string
	// Hook is the child's wavesmith.io/hook value, "" when it is no hook.
	Hook string
	// PurgeOrder is the child's wavesmith.io/purge-order, nil when it has
	// none.
	PurgeOrder *int
}

// String formats the entry as group/version/Kind/namespace/name.
func (e Entry) String() string {
	return e.Group + "/" + e.Version + "/" + e.Kind + "/" + e.Namespace + "/" + e.Name
}

// APIVersion returns the apiVersion of the entry ("v1" for the core group).
func (e Entry) APIVersion() string {
	if e.Group == "" {
		return e.Version
	}
	return e.Group + "/" + e.Version
}

// ParseEntry parses one group/version/Kind/namespace/name line.
func ParseEntry(s string) (Entry, error) {
	p := strings.Split(s, "/")
	if len(p) != 5 || p[1] == "" || p[2] == "" || p[4] == "" {
		return Entry{}, fmt.Errorf("inventory entry %q: want group/version/Kind/namespace/name", s)
	}
	return Entry{Group: p[0], Version: p[1], Kind: p[2], Namespace: p[3], Name: p[4]}, nil
}

// Format renders entries as the value of the Inventory annotation: sorted,
// without duplicates, one per line.
func Format(entries []Entry) string {
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		lines = append(lines, e.String())
	}
	sort.Strings(lines)
	out := lines[:0]
	for i, l := range lines {
		if i == 0 || l != lines[i-1] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Parse reads the value of the Inventory annotation.
func Parse(v string) ([]Entry, error) {
	var entries []Entry
	for _, line := range strings.Split(v, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		e, err := ParseEntry(line)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}
