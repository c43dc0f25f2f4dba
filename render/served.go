package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// Versioned is implemented by generators that say which versions of their
// kind they serve (Kaoto: v1alpha1). Objects of a served kind in another
// version are refused; a generator without it serves every version.
type Versioned interface {
	Versions() []string
}

// served is what the registry's groups serve: in a group that wavesmith
// owns (a group of one of the registry's kinds), an object of another kind
// or an unserved version is a mistake (a typo, a version that does not
// exist), never a custom resource to pass through: no CRD of wavesmith's
// groups serves anything else.
type served struct {
	kinds    map[string][]string // group -> kinds, sorted
	versions map[string][]string // group/Kind -> versions, nil for any
}

func newServed(reg generators.Registry) *served {
	s := &served{kinds: map[string][]string{}, versions: map[string][]string{}}
	for _, gk := range reg.Kinds() {
		i := strings.LastIndexByte(gk, '/')
		group, kind := gk[:i], gk[i+1:]
		if group == "" {
			continue // the core group is never wavesmith's
		}
		s.kinds[group] = append(s.kinds[group], kind)
		if v, ok := reg[gk].(Versioned); ok {
			s.versions[gk] = append([]string(nil), v.Versions()...)
			sort.Strings(s.versions[gk])
		}
	}
	return s
}

// check refuses an object of a group wavesmith owns whose kind or version
// the registry does not serve, naming what is served and the nearest
// served kind.
func (s *served) check(o *manifest.Object) error {
	group, kind := o.Group(), o.Kind()
	kinds, owned := s.kinds[group]
	if !owned {
		return nil
	}
	version := o.APIVersion()[strings.IndexByte(o.APIVersion(), '/')+1:]
	versions, isKind := s.versions[group+"/"+kind]
	if !containsString(kinds, kind) {
		msg := fmt.Sprintf("kind %s is not served in %s (served: %s)", manifest.Quote(kind), group, strings.Join(kinds, ", "))
		if hint := s.nearest(kind, group); hint != "" {
			msg += "; did you mean " + hint + "?"
		}
		return o.FieldError("kind", fmt.Errorf("%w: %w: %s", manifest.ErrInvalid, ErrUnserved, msg))
	}
	if isKind && versions != nil && !containsString(versions, version) {
		return o.FieldError("apiVersion", fmt.Errorf("%w: %w: %s %s is not served (served: %s); did you mean apiVersion %s/%s?",
			manifest.ErrInvalid, ErrUnserved, kind, manifest.Quote(o.APIVersion()), joinVersions(group, versions), group, versions[len(versions)-1]))
	}
	return nil
}

// nearest suggests the served kind closest to kind: the same but for
// case, or within two edits; in another owned group, with its
// apiVersion.
func (s *served) nearest(kind, group string) string {
	best, bestD := "", 3
	groups := make([]string, 0, len(s.kinds))
	for g := range s.kinds {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		for _, k := range s.kinds[g] {
			d := editDistance(strings.ToLower(kind), strings.ToLower(k))
			if strings.EqualFold(kind, k) {
				d = 0
			}
			if d == 0 && g == group && k == kind {
				continue
			}
			if d < bestD || (d == bestD && g == group) {
				best, bestD = s.describe(g, k, g == group), d
			}
		}
	}
	return best
}

func (s *served) describe(group, kind string, sameGroup bool) string {
	if sameGroup {
		return "kind " + kind
	}
	if v := s.versions[group+"/"+kind]; len(v) > 0 {
		return "apiVersion " + group + "/" + v[len(v)-1] + ", kind " + kind
	}
	return "kind " + kind + " of group " + group
}

func joinVersions(group string, versions []string) string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = group + "/" + v
	}
	return strings.Join(out, ", ")
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
