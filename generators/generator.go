package generators

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/wavesmith/wavesmith/kindscope"
	"github.com/wavesmith/wavesmith/manifest"
)

// Platform decides how a Kaoto is exposed.
type Platform string

// Platforms.
const (
	Kubernetes Platform = "kubernetes"
	OpenShift  Platform = "openshift"
)

// ParsePlatform accepts "kubernetes" and "openshift".
func ParsePlatform(s string) (Platform, error) {
	switch Platform(s) {
	case Kubernetes, OpenShift:
		return Platform(s), nil
	}
	return "", fmt.Errorf("platform %q: want kubernetes or openshift", s)
}

// Options are what a generator may know about the target.
type Options struct {
	Platform Platform
	// KubeVersion (e.g. "v1.33.0") and APIVersions are the capabilities
	// of the target cluster, as helm template's --kube-version and
	// --api-versions.
	KubeVersion string
	APIVersions []string
	// Root is the folder that sources may not leave (the repository root).
	Root string
	// Scope knows which kinds are namespaced: the built-in kinds, the
	// CRDs among the render's inputs, the user's declarations. nil is the
	// built-in kinds only.
	Scope *kindscope.Table
	// Checked is what the generator's Check returned for this spec
	// (Checker), nil when it was not checked: a generator takes it
	// instead of decoding the spec again.
	Checked any
}

// Generator renders the children of one spec. The spec's namespace is set.
// Children must be JSON-compatible maps (see package manifest) with their
// namespace set when namespaced. Errors should be *manifest.Error naming
// the spec's file, the spec and the field path.
type Generator interface {
	Generate(ctx context.Context, spec *manifest.Object, opts Options) (Result, error)
}

// Result is what a generator returns.
type Result struct {
	Objects  []*manifest.Object
	Warnings []manifest.Warning
	// Defaults are lifecycle values the spec sets for its objects, by
	// native annotation name (wavesmith.io/update-policy, ...), for
	// example from a Component's spec.policies. They rank below an
	// object's own annotations and above the spec's annotations. Waves
	// are not among them: the engine's wave plan decides them (Waver,
	// Offsets).
	Defaults map[string]string
	// Offsets place objects relative to the spec's wave, which the
	// generator does not know (the engine's wave plan alone makes waves
	// absolute, after the generator ran): Helm's pre-install hooks
	// before it, post-install hooks after. An object without an entry is
	// in the spec's wave, unless it carries its own
	// wavesmith.io/apply-order. An entry wins over the object's
	// annotations.
	Offsets map[*manifest.Object]Offset
	// SpecLabels are the recommended labels the rendered spec gets when it
	// has none of its own (the engine fills the rest).
	SpecLabels map[string]string
	// Release, when set, may be called once the caller reads Objects no
	// more, nor anything reachable from them: the generator may then
	// reuse their maps for a later Result. The render calls it when it
	// keeps only the encoded children (render.Options.DiscardObjects) and
	// shares no result between renders (render.Memo); a caller that
	// keeps the objects never calls it. Calls after the first do nothing.
	Release func()
}

// Offset is where a generated object lies relative to its spec's wave.
type Offset struct {
	// Apply is the object's apply-order minus the spec's wave.
	Apply int
	// Purge, when set, is the object's purge-order minus the spec's wave,
	// as Apply: the wave the engine's plan places the spec's objects in
	// (the wave the spec sets, else one after its dependencies', else
	// the render default), shifted with them after its dependencies.
	Purge *int
}

// Registry maps "group/Kind" to the generator of that spec kind. Each door
// (CLI, KRM function, Argo CD plugin) passes one to the engine; package
// generators/builtin has wavesmith's.
type Registry map[string]Generator

// Lookup returns the generator of o's kind.
func (r Registry) Lookup(o *manifest.Object) (Generator, bool) {
	g, ok := r[o.Group()+"/"+o.Kind()]
	return g, ok
}

// Kinds returns the "group/Kind" of every spec kind, sorted.
func (r Registry) Kinds() []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The optional interfaces below let a generator tell the engine what it
// needs beyond Generate, so that the engine knows no spec kind.

// Reader is implemented by generators whose specs read files besides their
// own (a chart, a kustomization, values files). Loading (internal/load)
// asks it: those files and folders are the spec's sources, never loose
// objects of the render, and one that covers a file holding a spec (the
// reader's own or another's) is an error naming both
// (ErrSourceCoversSpec). A generator that reads files and does not say so
// has them loaded as objects.
type Reader interface {
	// Reads returns what spec reads: paths relative to the folder of the
	// spec's file. root is the folder nothing is read outside of: a
	// generator that must read files to know what it reads (the folders a
	// kustomization reaches) reads them only inside it, and leniently
	// (Generate reports what is wrong).
	Reads(spec *manifest.Object, root string) []Read
}

// ErrSourceCoversSpec: a file or folder a spec reads (a Reader's Read)
// covers a file holding a spec, its own or another's: a spec is never a
// source.
var ErrSourceCoversSpec = errors.New("a source covers a spec")

// Read is one file or folder a spec reads.
type Read struct {
	// Field is the spec field that names it ("spec.valuesFiles[0]").
	Field string
	// Path is relative to the folder of the spec's file.
	Path string
}

// Dependent is implemented by generators whose specs depend on other specs:
// a spec's objects are applied after the objects of the specs it depends
// on.
type Dependent interface {
	// DependsOn returns what spec depends on, in the order it lists them.
	DependsOn(spec *manifest.Object) []Dependency
}

// Dependency names a spec another one depends on.
type Dependency struct {
	// Field is the spec field that names it ("spec.dependsOn[0]").
	Field string
	// Group and Kind of the spec depended on; Namespace defaults to the
	// dependent's. An empty Name is an error the engine reports at Field.
	Group, Kind, Namespace, Name string
}

// Waver is implemented by generators whose specs set the wave of their
// objects in a field (a Component's spec.wave); without it, a spec's
// wavesmith.io/apply-order annotation does.
type Waver interface {
	// Wave returns the wave spec sets and the field that sets it, ok false
	// when it sets none.
	Wave(spec *manifest.Object) (wave int, field string, ok bool)
}

// Checker is implemented by generators that can check a spec's own fields
// without reading anything (unknown fields, wrong types, missing values).
// The engine checks every spec before the wave plan, so that every spec's
// errors are reported in one run, not one stage at a time; Generate still
// reports them for callers that do not check first. What Check decoded
// (checked, nil for nothing) reaches Generate for the same spec as
// Options.Checked, so that a render decodes a spec once.
type Checker interface {
	Check(spec *manifest.Object) (checked any, err error)
}

// TypeManager is implemented by generators whose specs name further types
// whose instances come after the regular objects of their wave (as for the
// instances of a CRD of the render).
type TypeManager interface {
	// ManagedTypes returns the patterns: Group "*", "*.suffix" or exact;
	// Kind "*" or exact.
	ManagedTypes(spec *manifest.Object) []TypePattern
}

// TypePattern matches types by group and kind.
type TypePattern struct{ Group, Kind string }

// ErrBudget: rendering a spec exceeded a limit of time (the context's
// deadline), size or work: a chart's templates or files, a templated
// kustomization, a kustomize build. The helm and kustomize packages
// re-export it (helm.ErrBudget, kustomize.ErrBudget are this value).
var ErrBudget = errors.New("rendering budget exceeded")
