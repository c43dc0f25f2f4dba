package gitops

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/manifest"
)

// Lifecycle is the resolved set of waves and policies of one object, in the
// native vocabulary (package api/inventory).
type Lifecycle struct {
	ApplyOrder, DeleteOrder int
	// PurgeOrder is nil when the object is never purged.
	PurgeOrder                          *int
	Adoption, Reconcile, Update, Delete string
	StatusHint                          string
	// Hook is the object's wavesmith.io/hook value (for example
	// "pre-install"), "" when it is no hook.
	Hook string
	// Explicit holds the native annotations whose value the object or its
	// spec chose, as opposed to a render default or wavesmith's default.
	// The render shares one map between the objects with the same keys:
	// read it, never write into it.
	Explicit map[string]bool
}

// Dialect writes the annotations of one GitOps engine.
type Dialect interface {
	// Name is the dialect's name in --dialects: "argocd", "flux".
	Name() string
	// Annotate writes on obj the engine's annotations that express lc (an
	// annotation the object already has is kept), and returns a warning
	// naming the object for each explicit choice the engine cannot
	// express.
	Annotate(obj *manifest.Object, lc *Lifecycle) []manifest.Warning
	// DefaultWarnings returns, once per render, a warning for each
	// render-wide default (native annotation name to value) the engine
	// cannot express.
	DefaultWarnings(defaults map[string]string) []manifest.Warning
	// Wave reads the object's own wave in the engine's vocabulary (an
	// annotation a chart or a user wrote), ok false when there is none. The
	// engine takes it as the object's apply-order, and refuses one that
	// contradicts the object's wavesmith.io/apply-order.
	Wave(obj *manifest.Object) (wave int, ok bool, err error)
	// SetWave writes wave as the engine's wave annotation, if the engine
	// has one (Argo CD's sync-wave; Flux's waves are Kustomizations).
	SetWave(obj *manifest.Object, wave int)
	// Markers are the annotations and labels the engine's applier sets on
	// live objects itself; a render removes them (with a warning).
	Markers() (annotations, labels []string)
}

// Engine is one GitOps engine: its dialect and its delivery files.
type Engine interface {
	Dialect
	// Files returns the engine's files for the tree of p (paths relative to
	// the tree, slash-separated), or nil when cfg does not ask for them.
	// previous is the tree being replaced (nil for a first render); only an
	// engine that hands objects over between renders reads it.
	Files(p *Plan, previous fs.FS, cfg *v1alpha1.RenderConfigSpec) (map[string][]byte, error)
}

// Plan is the wave plan and the tree layout of a render result.
type Plan struct {
	// Objects in output order: wave, kind, group, namespace, name.
	Objects []Object
	// Specs in input order.
	Specs []Spec
}

// Object is one object of the result.
type Object struct {
	Key        manifest.Key
	APIVersion string
	// Wave is the object's resolved apply-order.
	Wave int
	// Spec is the index in Plan.Specs of the spec the object belongs to
	// (its own for a spec), -1 for objects of no spec.
	Spec int
	// IsSpec is set on the rendered spec itself.
	IsSpec bool
	// Path is the object's file in the tree (slash-separated).
	Path string
}

// Spec is one spec of the result and the span of its objects.
type Spec struct {
	Key        manifest.Key
	APIVersion string
	// Folder is the spec's folder in the tree.
	Folder string
	// Wave is the spec's own wave, at or after every one of its children's:
	// an engine waiting on the spec's health waits on all its children and
	// never on something of a later wave.
	Wave int
	// First is the earliest wave of the spec's objects (hooks and CRDs
	// included); Last the latest, which is Wave.
	First, Last int
	// DependsOn are the indices in Plan.Specs of the specs this one depends
	// on, in the order the spec lists them.
	DependsOn []int
}

// Waves returns the distinct waves of the plan's objects, ascending.
func (p *Plan) Waves() []int {
	seen := map[int]bool{}
	var out []int
	for _, o := range p.Objects {
		if !seen[o.Wave] {
			seen[o.Wave] = true
			out = append(out, o.Wave)
		}
	}
	sort.Ints(out)
	return out
}

// HasDependencies reports whether a spec of the plan depends on another.
func (p *Plan) HasDependencies() bool {
	for _, s := range p.Specs {
		if len(s.DependsOn) > 0 {
			return true
		}
	}
	return false
}

// ErrOption is wrapped by every *OptionError.
var ErrOption = errors.New("invalid delivery option")

// OptionError is a bad delivery setting. Field is its path in the
// render configuration (for example "argocd.repo"), so that each door can
// name it the way its user wrote it: a flag, a parameter, a field of the
// project file.
type OptionError struct {
	Field string
	Err   error
}

func (e *OptionError) Error() string { return fmt.Sprintf("%s: %v", e.Field, e.Err) }

// Unwrap returns ErrOption and the cause.
func (e *OptionError) Unwrap() []error { return []error{ErrOption, e.Err} }

// Optionf returns an *OptionError for field.
func Optionf(field, format string, args ...any) *OptionError {
	return &OptionError{Field: field, Err: fmt.Errorf(format, args...)}
}

// SetIfAbsent sets an annotation the object does not carry yet: an object's
// own engine annotations win over what a dialect would write.
func SetIfAbsent(obj *manifest.Object, key, value string) {
	if _, ok := obj.Annotation(key); !ok {
		obj.SetAnnotation(key, value)
	}
}
