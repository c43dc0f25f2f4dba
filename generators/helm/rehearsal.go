package helm

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// firstDifference names where two renders of one template differ: the
// object (Kind/name, with its namespace when the chart sets one) and the
// first field path in sorted order, or only that the text differs when
// either render is no list of objects alike. ok is false when the texts
// differ in comments or layout only: the objects are the same.
func firstDifference(file, helm, rehearsal string) (where string, ok bool) {
	a, errA := decode(file, []byte(helm))
	b, errB := decode(file, []byte(rehearsal))
	if errA != nil || errB != nil || len(a) != len(b) {
		return "the text of the template", true
	}
	for i := range a {
		if p, ok := diffPath(a[i].Map, b[i].Map, ""); ok {
			if p == "" {
				p = "the whole object"
			}
			return fmt.Sprintf("%s at %s", a[i].Key(), p), true
		}
	}
	return "", false
}

// diffPath returns the first path (map keys sorted) where a and b differ.
func diffPath(a, b any, path string) (string, bool) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return path, true
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := diffPath(av[k], bv[k], join(path, k)); ok {
				return p, true
			}
		}
		return "", false
	case []any:
		bv, ok := b.([]any)
		if !ok {
			return path, true
		}
		for i := range min(len(av), len(bv)) {
			if p, ok := diffPath(av[i], bv[i], path+"["+strconv.Itoa(i)+"]"); ok {
				return p, true
			}
		}
		if len(av) != len(bv) {
			return path, true
		}
		return "", false
	}
	if !reflect.DeepEqual(a, b) {
		return path, true
	}
	return "", false
}

// join appends a key to a dotted field path, quoting keys holding a dot
// (data["tls.crt"]).
func join(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
