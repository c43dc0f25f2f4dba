package functions

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// options merges the functionConfig (a RenderConfig, or a ConfigMap with
// the same keys flattened) with the door's layers. With Above (the door's
// flags), config.Merge takes each field from the first layer that sets it:
// Above, then the functionConfig, then Below, then the defaults. Without
// Above, the functionConfig's fields override the base options.
func (p *Processor) options(fc *yaml.RNode) (render.Options, error) {
	base := p.Options
	if fc == nil || fc.IsNilOrEmpty() || specConfig(fc, base) != nil {
		if p.Above == nil {
			return base, nil
		}
		return p.merged(nil)
	}
	var cfg v1alpha1.RenderConfigSpec
	switch fc.GetKind() {
	case v1alpha1.RenderConfigKind:
		// Read as the project file is (config.Parse): every mistake at
		// once, at its line, with the known fields.
		l, err := config.Parse(functionConfigFile(fc), []byte(fc.MustString()))
		if err != nil {
			return base, err
		}
		cfg = l.Spec
	case "ConfigMap":
		c, err := configFromData(fc.GetDataMap())
		if err != nil {
			return base, fmt.Errorf("ConfigMap %s: %w", fc.GetName(), err)
		}
		cfg = c
	default:
		return base, fmt.Errorf("%w: kind %s: want %s or ConfigMap", render.ErrOptions, fc.GetKind(), v1alpha1.RenderConfigKind)
	}
	layer := config.Layer{Name: fc.GetKind() + " " + fc.GetName(), Spec: cfg}
	if fc.GetKind() == "ConfigMap" {
		layer.FieldName = func(path string) string { return layer.Name + ": data." + configMapKey(path) }
	}
	if err := fnFields(layer); err != nil {
		return base, err
	}
	if p.Above != nil {
		return p.merged(&layer)
	}
	o, _, err := config.Merge(layer).Options(base.Root)
	if err != nil {
		return base, err
	}
	if cfg.Platform == "" && len(cfg.APIVersions) == 0 {
		o.Platform = base.Platform
	}
	if cfg.Dialects == nil {
		o.Dialects = base.Dialects
	}
	if o.Namespace == "" {
		o.Namespace = base.Namespace
	}
	for k, v := range base.Defaults {
		if _, set := o.Defaults[k]; !set {
			o.Defaults[k] = v
		}
	}
	o.Root, o.Generators, o.Engines, o.PartOf = base.Root, base.Generators, base.Engines, base.PartOf
	if o.KubeVersion == "" {
		o.KubeVersion = base.KubeVersion
	}
	return o, nil
}

// merged merges Above and the functionConfig's layer (when not nil),
// keeping from the base options what no layer holds (the generators, the
// GitOps engines, the root, how the engine keeps its inputs and objects).
func (p *Processor) merged(fc *config.Layer) (render.Options, error) {
	layers := append([]config.Layer(nil), p.Above...)
	if fc != nil {
		layers = append(layers, *fc)
	}
	layers = append(layers, p.Below...)
	o, _, err := config.Merge(layers...).Options(p.Options.Root)
	if err != nil {
		return p.Options, err
	}
	b := p.Options
	o.Generators, o.Engines, o.Root, o.KeepInputs, o.DiscardObjects, o.Progress = b.Generators, b.Engines, b.Root, b.KeepInputs, b.DiscardObjects, b.Progress
	return o, nil
}

// ErrNotForFn: a functionConfig sets a field that means nothing to the
// KRM function (its input and output are the ResourceList).
var ErrNotForFn = errors.New("the KRM function does not read this field")

// fnFields refuses the settings of wavesmith render that a KRM function
// cannot honour, naming each as its user wrote it.
func fnFields(l config.Layer) error {
	c := l.Spec
	var errs []error
	for _, f := range []struct {
		path, why string
		set       bool
	}{
		{"inputs", "the function's input is the ResourceList kpt or kustomize sends", len(c.Inputs) > 0},
		{"output", "the function's output is the ResourceList it writes back", c.Output != ""},
		{"treePath", "the function writes no GitOps tree", c.TreePath != ""},
		{"flux", "the function writes no Flux files (wavesmith render -o DIR --flux does)", c.Flux != nil},
		{"argocd", "the function writes no Argo CD Applications (wavesmith render -o DIR --argocd does)", c.ArgoCD != nil},
	} {
		if f.set {
			errs = append(errs, &config.FieldError{Name: l.Name + ": spec." + f.path, Err: fmt.Errorf("%w: %s; remove it from the functionConfig", ErrNotForFn, f.why)})
		}
	}
	return errors.Join(errs...)
}

// functionConfigFile names the functionConfig in errors: the file kpt
// read it from, else "functionConfig".
func functionConfigFile(fc *yaml.RNode) string {
	if p := fc.GetAnnotations()[kioutil.PathAnnotation]; p != "" {
		return p
	}
	return "functionConfig"
}

// configMapKey is the ConfigMap key of a configuration field
// (config.Settings).
func configMapKey(path string) string {
	if st := config.Lookup(path); st != nil && st.Key != "" {
		return st.Key
	}
	return path
}

// configFromData reads the ConfigMap form: the keys of the settings of
// config.Settings that come through config.ConfigMap (lists
// comma-separated). Every bad key and value is reported, in key order.
func configFromData(data map[string]string) (v1alpha1.RenderConfigSpec, error) {
	var c v1alpha1.RenderConfigSpec
	byKey := map[string]*config.Setting{}
	var known []string
	for i := range config.Settings {
		if st := &config.Settings[i]; st.Takes(config.ConfigMap) {
			byKey[st.Key] = st
			known = append(known, st.Key)
		}
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		st, ok := byKey[k]
		if !ok {
			errs = append(errs, fmt.Errorf("%w: data.%s: unknown key (known: %s)", render.ErrOptions, k, strings.Join(known, ", ")))
			continue
		}
		if err := st.Set(&c, data[k]); err != nil {
			errs = append(errs, fmt.Errorf("%w: data.%s: %v", render.ErrOptions, k, err))
		}
	}
	return c, errors.Join(errs...)
}

// specConfig returns a copy of the functionConfig when it is itself a spec
// (kustomize runs a generator with only its config as input), without the
// annotations that mark it as function configuration.
func specConfig(fc *yaml.RNode, opts render.Options) *yaml.RNode {
	if fc == nil || fc.IsNilOrEmpty() {
		return nil
	}
	g, _ := manifest.SplitAPIVersion(fc.GetApiVersion())
	if _, ok := opts.Generators[g+"/"+fc.GetKind()]; !ok {
		return nil
	}
	spec := fc.Copy()
	for _, a := range []string{"config.kubernetes.io/local-config", "config.kubernetes.io/function", "config.k8s.io/function"} {
		_ = spec.PipeE(yaml.ClearAnnotation(a))
	}
	return spec
}
