package generators

import (
	"context"
	"fmt"

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
	// Wave is the wave the engine gives the spec's objects that set none:
	// the spec's own, one after its dependencies', or the render default.
	// Generators that place objects relative to the spec (Helm hooks) use
	// it.
	Wave int
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
	// native annotation name (wavesmith.io/apply-order, ...), for example
	// from a Component's spec.wave and spec.policies. They rank below an
	// object's own annotations and above the spec's annotations.
	Defaults map[string]string
	// SpecLabels are the recommended labels the rendered spec gets when it
	// has none of its own (the engine fills the rest).
	SpecLabels map[string]string
}
