package kaoto

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// DefaultImage is the designer image when spec.image is empty, as in the
// operator's source.
const DefaultImage = "quay.io/kaotoio/kaoto-app:stable"

// Values the operator hard-codes.
const (
	appName       = "kaoto"
	componentName = "designer"
	managedBy     = "kaoto-operator"
	portName      = "http"
	port          = int64(8080)
	pathSuffix    = "(/|$)(.*)"
)

// Generator renders Kaoto specs. The zero value uses DefaultImage.
type Generator struct {
	// DefaultImage overrides the image used when spec.image is empty.
	DefaultImage string
}

// step adds one child, in the spirit of the operator's actions.
type step func(k *v1alpha1.Kaoto, g *Generator, b boxed, own *ownMaps) *manifest.Object

var (
	kubernetesSteps = []step{service, ingress, deployment}
	openshiftSteps  = []step{service, route, deployment}
)

// Versions returns the versions of Kaoto the generator serves
// (render.Versioned): v1alpha1, the operator's.
func (g *Generator) Versions() []string { return []string{v1alpha1.Version} }

// Generate implements generators.Generator. The children it returns
// share their constant parts below metadata (ports, env, probes,
// resources, security contexts) with the children of every other Kaoto:
// read them, or copy a child (manifest.Object.DeepCopy) before changing
// anything but its metadata. SpecLabels is one map shared by every
// Result, read only as well. Release (generators.Result) hands the
// children's own maps to the Kaotos generated next: after it, the
// children must not be read.
func (g *Generator) Generate(_ context.Context, spec *manifest.Object, opts generators.Options) (generators.Result, error) {
	k, ok := opts.Checked.(*v1alpha1.Kaoto)
	if !ok {
		var err error
		if k, err = Decode(spec); err != nil {
			return generators.Result{}, err
		}
	}
	steps := kubernetesSteps
	if opts.Platform == generators.OpenShift {
		steps = openshiftSteps
	}
	objs := make([]*manifest.Object, 0, len(steps))
	b := boxed{name: k.Name, namespace: k.Namespace}
	own := takeMaps()
	for _, s := range steps {
		if o := s(k, g, b, own); o != nil {
			o.Source = spec.Source
			objs = append(objs, o)
		}
	}
	var warns []manifest.Warning
	if opts.Platform != generators.OpenShift && k.Spec.Ingress != nil {
		// strings.TrimSuffix(IngressPath(k), pathSuffix), without building
		// the path: the spec's path without the suffix, or /<name>.
		p := strings.TrimSuffix(k.Spec.Ingress.Path, pathSuffix)
		if k.Spec.Ingress.Path == "" {
			p = "/" + k.Name
		}
		if strings.HasSuffix(p, "/") {
			hint := fmt.Sprintf("leave the trailing slash out (%q)", strings.TrimSuffix(p, "/"))
			if p == "/" {
				hint = "the operator's rewrite cannot serve the designer at the root: give a path such as /" + k.Name
			}
			warns = append(warns, spec.Warn("spec.ingress.path", fmt.Sprintf(
				"%q ends in /: the Ingress path becomes %q, which routes %s itself and nothing below it (the designer's pages and assets); %s",
				k.Spec.Ingress.Path, IngressPath(k), p, hint)))
		}
	}
	// The operator copies the path into the Route as given; a Route
	// matches it literally, so the nginx rewrite regex serves no URL there
	// (the status controller reports such a Route as Stalled after the
	// apply: this says it before).
	if opts.Platform == generators.OpenShift && k.Spec.Ingress != nil && strings.Contains(k.Spec.Ingress.Path, pathSuffix) {
		warns = append(warns, spec.Warn("spec.ingress.path", fmt.Sprintf(
			"%q carries the Ingress rewrite regex %s, which an OpenShift Route matches literally: no URL serves the designer through the Route; give the path without it (%q)",
			k.Spec.Ingress.Path, pathSuffix, strings.ReplaceAll(k.Spec.Ingress.Path, pathSuffix, ""))))
	}
	return generators.Result{Objects: objs, Warnings: warns, SpecLabels: specLabels, Release: own.releaser()}, nil
}

// specLabels are the recommended labels of every rendered Kaoto, shared
// by every Result (the engine only reads them).
var specLabels = map[string]string{
	"app.kubernetes.io/name":      appName,
	"app.kubernetes.io/component": componentName,
	"app.kubernetes.io/part-of":   appName,
}

// Check implements generators.Checker: Decode's errors, every one, and
// the decoded Kaoto, which Generate then takes (Options.Checked).
func (g *Generator) Check(spec *manifest.Object) (any, error) {
	k, err := Decode(spec)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// Decode reads a Kaoto strictly: metadata.name is required, spec may hold
// only image and ingress{host,path}, all strings; image, when given, must
// be an image reference the API server and the kubelet accept. Errors
// name the field.
func Decode(spec *manifest.Object) (*v1alpha1.Kaoto, error) {
	k := &v1alpha1.Kaoto{}
	k.Name, k.Namespace = spec.Name(), spec.Namespace()
	if k.Name == "" {
		return nil, spec.FieldError("metadata.name", fmt.Errorf("%w: a Kaoto needs a name", manifest.ErrInvalid))
	}
	raw, present := spec.Map["spec"]
	if !present || raw == nil {
		return k, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, spec.FieldError("spec", wrongType("a mapping", raw))
	}
	var errs []error
	var keys [4]string // a valid spec has two keys at most: no allocation
	for _, key := range sortedKeys(keys[:0], m) {
		v := m[key]
		switch key {
		case "image":
			path := "spec.image"
			s, err := str(spec, path, v)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if s != "" {
				if err := checkImage(s); err != nil {
					errs = append(errs, spec.FieldError(path, fmt.Errorf("%w: %w", manifest.ErrInvalid, err)))
					continue
				}
			}
			k.Spec.Image = s
		case "ingress":
			path := "spec.ingress"
			if v == nil {
				continue
			}
			im, ok := v.(map[string]any)
			if !ok {
				errs = append(errs, spec.FieldError(path, wrongType("a mapping", v)))
				continue
			}
			k.Spec.Ingress = &v1alpha1.IngressSpec{}
			var ikeys [4]string
			for _, ik := range sortedKeys(ikeys[:0], im) {
				s, err := str(spec, path+"."+ik, im[ik])
				if err != nil {
					errs = append(errs, err)
					continue
				}
				switch ik {
				case "host":
					k.Spec.Ingress.Host = s
				case "path":
					k.Spec.Ingress.Path = s
				default:
					errs = append(errs, spec.FieldError(path+"."+ik, unknownField(ik, "host, path")))
				}
			}
		default:
			errs = append(errs, spec.FieldError("spec."+key, unknownField(key, "image, ingress")))
		}
	}
	if len(errs) > 0 {
		return nil, manifest.Join(errs)
	}
	return k, nil
}

// sortedKeys appends the keys of m to s, sorted.
func sortedKeys(s []string, m map[string]any) []string {
	for k := range m {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

func str(spec *manifest.Object, path string, v any) (string, error) {
	s, ok := v.(string)
	if !ok && v != nil {
		return "", spec.FieldError(path, wrongType("a string", v))
	}
	return s, nil
}

func wrongType(want string, v any) error {
	return fmt.Errorf("%w: want %s, got %s", manifest.ErrInvalid, want, describe(v))
}

func unknownField(name, known string) error {
	return fmt.Errorf("%w: unknown field %q (known: %s)", manifest.ErrInvalid, name, known)
}

func describe(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", t)
	case bool:
		return fmt.Sprintf("the boolean %v", t)
	case int64, float64:
		return fmt.Sprintf("the number %v", t)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}
