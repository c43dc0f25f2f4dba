package render

import (
	"sync"
	"sync/atomic"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"github.com/wavesmith/wavesmith/manifest"
)

// Validating a name, a label or an annotation key with apimachinery's
// rules runs regular expressions, and a render validates the same few
// strings over and over (every child of 10,000 specs carries the same
// label keys, most the same values): measured, a fifth of a large
// render's CPU. The sets below remember the strings found valid, so that
// each distinct string is checked by the full rules once per process; a
// string not known valid is always checked in full, so a refusal and its
// message are exactly apimachinery's.

// maxKnownValid bounds each set: past it, strings are checked in full
// every time (memory stays bounded whatever the input).
const maxKnownValid = 1 << 18

// validSet is a concurrent set of strings known to pass one rule.
type validSet struct {
	m sync.Map
	n atomic.Int64
}

func (s *validSet) has(v string) bool {
	_, ok := s.m.Load(v)
	return ok
}

func (s *validSet) add(v string) {
	if s.n.Load() >= maxKnownValid {
		return
	}
	if _, loaded := s.m.LoadOrStore(v, struct{}{}); !loaded {
		s.n.Add(1)
	}
}

var (
	knownLabelKeys, knownLabelValues, knownAnnotationKeys validSet
	// knownKeys holds manifest.Keys whose kind, group, name (by the
	// kind's rule) and namespace are valid.
	knownKeys validSet
)

// keyString is the cache key of k: a rule per kind decides the name, so
// the group and the kind are part of it.
func keyString(k manifest.Key) string {
	return k.Group + "\x00" + k.Kind + "\x00" + k.Namespace + "\x00" + k.Name
}

// knownValidMetadata reports whether every label and annotation of o is
// known valid and the annotations fit the API server's total size: then
// the full rules would find nothing.
func knownValidMetadata(o *manifest.Object) bool {
	for k, v := range o.Labels() {
		s, ok := v.(string)
		if ok && (!knownLabelKeys.has(k) || !knownLabelValues.has(s)) {
			return false
		}
	}
	size := 0
	for k, v := range o.Annotations() {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if !knownAnnotationKeys.has(k) {
			return false
		}
		size += len(k) + len(s)
	}
	return size <= apivalidation.TotalAnnotationSizeLimitB
}

// rememberMetadata records o's labels and annotation keys as valid (the
// full rules found nothing wrong with them).
func rememberMetadata(o *manifest.Object) {
	for k, v := range o.Labels() {
		if s, ok := v.(string); ok {
			knownLabelKeys.add(k)
			knownLabelValues.add(s)
		}
	}
	for k, v := range o.Annotations() {
		if _, ok := v.(string); ok {
			knownAnnotationKeys.add(k)
		}
	}
}
