package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/kindscope"
)

// Options configure a render. The zero value means the documented
// defaults, except Generators, which every caller passes.
type Options struct {
	// Generators maps each spec kind to its generator
	// (generators/builtin.Registry() for wavesmith's). Required: objects of
	// kinds without a generator pass through.
	Generators generators.Registry
	// Platform chooses Ingress (kubernetes) or Route (openshift); empty
	// means kubernetes.
	Platform generators.Platform
	// Namespace is given to specs without one ("default" when empty).
	Namespace string
	// Defaults are the lowest-precedence lifecycle values, by native
	// annotation name (wavesmith.io/apply-order, ...).
	Defaults map[string]string
	// Engines are the GitOps engines the door knows (gitops/engines.
	// Dialects() for wavesmith's): the engine reads an object's wave in
	// each one's vocabulary and removes each one's applier markers.
	// Required, like Generators; an empty slice knows none.
	Engines []gitops.Dialect
	// Dialects are the engines whose annotations are written: nil means
	// every one of Engines, an empty slice none.
	Dialects []gitops.Dialect
	// KubeVersion and APIVersions are the target's capabilities.
	KubeVersion string
	APIVersions []string
	// Root is the folder that the files specs read (chart and
	// kustomization sources) may not leave. Required: the door decides it
	// (the CLI's --root or the enclosing git repository, the Argo CD
	// checkout), the engine never guesses it from the working folder.
	Root string
	// Scope declares the scope of kinds (for instance read from a
	// kubectl api-resources file); it wins over the CRDs among the inputs
	// and the built-in kinds. nil declares nothing.
	Scope *kindscope.Table
	// PartOf is the app.kubernetes.io/part-of given to objects that have none
	// (default: the object's owner name); it must be a valid label value
	// (CheckPartOf), never rewritten.
	PartOf string
	// KeepInputs leaves the objects the user wrote as they are, except the
	// inventory annotations on specs and, when a spec must wait for a
	// later child, its wave (the KRM function's mode). Otherwise every
	// object is decorated.
	KeepInputs bool
	// DiscardObjects drops the maps of generated children once they are
	// encoded: only Item.YAML, Key and Ref remain. It bounds the memory of
	// large renders; the CLI sets it.
	DiscardObjects bool
	// Reuse, when set, keeps what generators return in a Memo that later
	// renders passing the same Memo reuse for a spec whose inputs are
	// byte-identical (reuse.go); only generating is skipped. nil generates
	// every spec.
	Reuse *Memo
	// Outputs, when set with DiscardObjects, takes the output of a spec
	// whose digest an earlier render recorded from that record (its
	// children encoded and resolved), and records what this render
	// renders (outputs.go). nil renders every spec.
	Outputs *Outputs
	// Progress, when set, is called after each spec is rendered with the
	// number done and the total, from any goroutine.
	Progress func(done, total int)

	// wave is Defaults' apply-order, parsed once by normalize.
	wave order
	// markers are each engine's applier markers, asked once by normalize.
	markers []markers
}

// markers are the annotations and labels one engine's applier sets.
type markers struct{ annotations, labels []string }

// normalize fills defaults and validates the options.
func (o Options) normalize() (Options, error) {
	if o.Platform == "" {
		o.Platform = generators.Kubernetes
	}
	if _, err := generators.ParsePlatform(string(o.Platform)); err != nil {
		return o, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if o.Generators == nil {
		return o, fmt.Errorf("%w: no generators: pass a registry (generators/builtin.Registry())", ErrOptions)
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if err := CheckPartOf(o.PartOf); err != nil {
		return o, err
	}
	if o.Engines == nil {
		return o, fmt.Errorf("%w: no GitOps engines: pass the ones the door knows (gitops/engines.Dialects())", ErrOptions)
	}
	if o.Dialects == nil {
		o.Dialects = o.Engines
	}
	if o.Root == "" {
		return o, fmt.Errorf("%w: no root: the door decides the folder sources may not leave", ErrOptions)
	}
	defaults := make(map[string]string, len(o.Defaults))
	for k, v := range o.Defaults {
		nv, err := checkLifecycleValue(k, v)
		if err != nil {
			return o, fmt.Errorf("%w: default %s: %v", ErrOptions, k, err)
		}
		defaults[k] = nv
		if k == inventory.ApplyOrder {
			n, _ := inventory.ParseOrder(nv)
			o.wave = order{n: n, set: true}
		}
	}
	o.Defaults = defaults
	o.markers = make([]markers, len(o.Engines))
	for i, e := range o.Engines {
		o.markers[i].annotations, o.markers[i].labels = e.Markers()
	}
	return o, nil
}

// CheckPartOf refuses a part-of setting the API server would refuse as a
// label value (empty means the default and is fine). It is checked as
// given, never rewritten: a value the user chose is theirs, and a silently
// changed one would select other objects than they meant. The error wraps
// ErrOptions and ErrPartOf; doors that know how the user spelled the
// setting may call it to name it.
func CheckPartOf(v string) error {
	if v == "" {
		return nil
	}
	if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
		return fmt.Errorf("%w: %w: %s", ErrOptions, ErrPartOf, strings.Join(quoted(v, msgs), ": "))
	}
	return nil
}

// PlatformFromAPIVersions returns openshift when route.openshift.io/v1 is
// among the API versions (as Argo CD passes them in KUBE_API_VERSIONS),
// else kubernetes.
func PlatformFromAPIVersions(apiVersions []string) generators.Platform {
	for _, v := range apiVersions {
		v = strings.TrimSpace(v)
		if v == "route.openshift.io/v1" || strings.HasPrefix(v, "route.openshift.io/v1/") {
			return generators.OpenShift
		}
	}
	return generators.Kubernetes
}

// lifecycleKeys lists the native annotations that take defaults.
var lifecycleKeys = []string{
	inventory.ApplyOrder, inventory.DeleteOrder, inventory.PurgeOrder,
	inventory.AdoptionPolicy, inventory.ReconcilePolicy, inventory.UpdatePolicy, inventory.DeletePolicy,
	inventory.StatusHint,
}
