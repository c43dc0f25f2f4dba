package render

import (
	"fmt"
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
)

// Dialect is a GitOps engine whose annotations render writes.
type Dialect string

// Dialects.
const (
	ArgoCD Dialect = "argocd"
	Flux   Dialect = "flux"
)

// AllDialects lists every dialect in output order.
var AllDialects = []Dialect{ArgoCD, Flux}

// ParseDialects reads a comma-separated list; "none" or "" means none.
func ParseDialects(s string) ([]Dialect, error) {
	var out []Dialect
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		switch p {
		case "", "none":
		case string(ArgoCD), string(Flux):
			out = append(out, Dialect(p))
		default:
			return nil, fmt.Errorf("dialect %q: want argocd, flux or none", p)
		}
	}
	return out, nil
}

// Options configure a render.
type Options struct {
	// Platform chooses Ingress (kubernetes) or Route (openshift).
	Platform generators.Platform
	// Namespace is given to specs without one ("default" when empty).
	Namespace string
	// Defaults are the lowest-precedence lifecycle values, by native
	// annotation name (wavesmith.io/apply-order, ...).
	Defaults map[string]string
	// Dialects are the engines whose annotations are written.
	Dialects []Dialect
	// KubeVersion and APIVersions are the target's capabilities.
	KubeVersion string
	APIVersions []string
	// Root is the folder that chart and kustomization sources may not leave.
	Root string
	// PartOf is the app.kubernetes.io/part-of given to objects that have none
	// (default: the object's owner name).
	PartOf string
	// KeepInputs leaves the objects the user wrote as they are, except the
	// inventory annotations on specs (the KRM function's mode). Otherwise
	// every object is decorated.
	KeepInputs bool
	// DiscardObjects drops the maps of generated children once they are
	// encoded: only Item.YAML, Key and Ref remain. It bounds the memory of
	// large renders; the CLI sets it.
	DiscardObjects bool
	// Generators maps "group/Kind" to the generator of that spec kind.
	// Nil means DefaultGenerators().
	Generators map[string]generators.Generator
}

func (o *Options) hasDialect(d Dialect) bool {
	for _, x := range o.Dialects {
		if x == d {
			return true
		}
	}
	return false
}

// normalize fills defaults and validates the options.
func (o Options) normalize() (Options, error) {
	if o.Platform == "" {
		o.Platform = generators.Kubernetes
	}
	if _, err := generators.ParsePlatform(string(o.Platform)); err != nil {
		return o, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Generators == nil {
		o.Generators = DefaultGenerators()
	}
	if o.Root == "" {
		o.Root = FindRoot(".")
	}
	for k, v := range o.Defaults {
		nv, err := checkLifecycleValue(k, v)
		if err != nil {
			return o, fmt.Errorf("%w: default %s: %v", ErrOptions, k, err)
		}
		if nv != v {
			m := make(map[string]string, len(o.Defaults))
			for k2, v2 := range o.Defaults {
				m[k2] = v2
			}
			m[k] = nv
			o.Defaults = m
		}
	}
	return o, nil
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

// SplitList splits a comma-separated list, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// lifecycleKeys lists the native annotations that take defaults.
var lifecycleKeys = []string{
	inventory.ApplyOrder, inventory.DeleteOrder, inventory.PurgeOrder,
	inventory.AdoptionPolicy, inventory.ReconcilePolicy, inventory.UpdatePolicy, inventory.DeletePolicy,
	inventory.StatusHint,
}
