package helm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/manifest"
)

// ErrChart: the chart cannot be loaded or rendered.
var ErrChart = errors.New("chart")

// ErrHook: a Helm hook that wavesmith cannot express.
var ErrHook = errors.New("unsupported Helm hook")

// ErrBudget: the chart's templates would exceed a limit of the template
// sandbox (internal/tmplsandbox: steps, a value, the output, the cost of
// key generations) or the time the context allows, or the chart's files
// its size. It is generators.ErrBudget, the value kustomize.ErrBudget is
// too.
var ErrBudget = generators.ErrBudget

// resourcePolicy: "keep" becomes delete-policy orphan.
const resourcePolicy = "helm.sh/resource-policy"

// Source is the key of spec.source a chart Component sets: the source
// this generator renders (generators/builtin registers it by it).
const Source = "chart"

// Generator renders chart Components.
type Generator struct{}

var _ component.Source = Generator{}

// Generate implements generators.Generator for a Component with
// spec.source.chart. It gives up with ErrBudget when ctx ends.
func (g Generator) Generate(ctx context.Context, spec *manifest.Object, opts generators.Options) (generators.Result, error) {
	c, err := component.Decode(spec)
	if err != nil {
		return generators.Result{}, err
	}
	return g.GenerateComponent(ctx, spec, c, opts)
}

// GenerateComponent implements component.Source: Generate from the
// Component the Component generator decoded.
func (Generator) GenerateComponent(ctx context.Context, spec *manifest.Object, c *v1alpha1.Component, opts generators.Options) (res generators.Result, err error) {
	if repoSource(c.Spec.Source.Chart) {
		// A chart of a repository has no path: name the chart.
		defer func() {
			var me *manifest.Error
			if errors.As(err, &me) && me.Field == chartField {
				me.Field = "spec.source.chart"
			}
			for i := range res.Warnings {
				if res.Warnings[i].Field == chartField {
					res.Warnings[i].Field = "spec.source.chart"
				}
			}
		}()
	}
	var dir string
	var load func() (*chart.Chart, error)
	if src := c.Spec.Source.Chart; repoSource(src) {
		// A chart of a repository: the lock and the cache only.
		chrt, where, err := loadLocked(ctx, opts.Root, src)
		if err != nil {
			field := repoField
			if se := (*stageError)(nil); errors.As(err, &se) {
				field, err = se.field, se.err
			}
			return generators.Result{}, spec.FieldError(field, fmt.Errorf("%w: %w", ErrChart, err))
		}
		dir, load = where, func() (*chart.Chart, error) { return chrt, addLockedDependencies(ctx, opts.Root, chrt) }
	} else {
		dir, err = component.ResolvePath(spec, chartField, src.Path, opts.Root)
		if err != nil {
			return generators.Result{}, err
		}
		// Helm's loader follows symlinks and reads any file: check the chart
		// (its subcharts and .Files included) stays inside the root first.
		if err := component.CheckTree(spec, chartField, dir, opts.Root); err != nil {
			return generators.Result{}, err
		}
		if err := checkChartSize(dir, opts.Root); err != nil {
			return generators.Result{}, stageFailure(spec, c.Spec.Name != "", err)
		}
		fileDeps, err := fileDependencies(spec, dir, opts.Root)
		if err != nil {
			return generators.Result{}, err
		}
		load = func() (*chart.Chart, error) {
			chrt, err := loader.Load(dir)
			if err != nil {
				return nil, err
			}
			if err := addFileDependencies(chrt, dir, fileDeps); err != nil {
				return nil, err
			}
			return chrt, addLockedDependencies(ctx, opts.Root, chrt)
		}
	}
	values, err := component.Values(spec, c, opts.Root)
	if err != nil {
		return generators.Result{}, err
	}
	ns, name := component.Placement(c)
	caps, err := capabilities(opts)
	if err != nil {
		return generators.Result{}, spec.FieldError(chartField, fmt.Errorf("%w: %v", ErrChart, err))
	}
	p := newProbe(ctx)
	rel := chartutil.ReleaseOptions{Name: name, Namespace: ns, Revision: 1, IsInstall: true}
	r, err := renderWithin(ctx, p, func() (*rendered, error) { return renderChart(dir, load, values, rel, caps, p) })
	if err != nil {
		return generators.Result{}, stageFailure(spec, c.Spec.Name != "", err)
	}
	// Templates are named <chart name>/templates/...: point at the file.
	source := func(tmpl string) string {
		rel := strings.TrimPrefix(tmpl, r.chart.Name()+"/")
		return filepath.Join(dir, filepath.FromSlash(rel))
	}

	var objs, crds []*manifest.Object
	var warns []manifest.Warning
	for _, crd := range r.chart.CRDObjects() {
		got, err := decode(source(crd.Filename), crd.File.Data)
		if err != nil {
			return generators.Result{}, chartError(spec, err)
		}
		crds = append(crds, got...)
	}
	kept := map[string]bool{} // templates whose output is in the result
	for _, m := range r.manifests {
		got, err := decode(source(m.Name), []byte(m.Content))
		if err != nil {
			return generators.Result{}, chartError(spec, err)
		}
		for _, o := range got {
			if err := component.CheckNoNativeAnnotations(o); err != nil {
				return generators.Result{}, err
			}
		}
		objs = append(objs, got...)
		kept[m.Name] = kept[m.Name] || len(got) > 0
	}
	// Hooks and CRDs are placed relative to the Component's wave: the
	// engine's wave plan decides it.
	offsets := map[*manifest.Object]generators.Offset{}
	earliest := 0
	var left []leftOut
	for _, h := range r.hooks {
		got, off, l, err := translateHook(h, source(h.Path))
		if err != nil {
			return generators.Result{}, err
		}
		left = append(left, l...)
		if got != nil {
			objs = append(objs, got)
			offsets[got] = off
			earliest = min(earliest, off.Apply)
		}
		kept[h.Path] = kept[h.Path] || got != nil
	}
	w, err := leftOutHooks(spec, c.Spec.StrictHooks, left)
	if err != nil {
		return generators.Result{}, err
	}
	warns = append(warns, w...)
	warns = append(warns, nondeterminismWarnings(spec, r, kept, source)...)
	for _, o := range objs {
		switch v, ok := o.Annotation(resourcePolicy); {
		case !ok:
		case v == "keep":
			o.SetAnnotation(inventory.DeletePolicy, inventory.DeleteOrphan)
		default:
			return generators.Result{}, o.FieldError("metadata.annotations."+resourcePolicy, fmt.Errorf("%w: %q: only keep is supported", manifest.ErrInvalid, v))
		}
	}
	// CRDs from crds/: in the earliest wave of the Component, never deleted
	// (Helm never deletes them either).
	for _, o := range crds {
		offsets[o] = generators.Offset{Apply: earliest}
		o.SetAnnotation(inventory.DeletePolicy, inventory.DeleteOrphan)
	}
	all := append(crds, objs...)
	warns = append(warns, component.SetNamespaces(spec, c, all, ns, opts.Scope)...)
	component.StatusHints(c, all)
	return generators.Result{Objects: all, Warnings: warns, Defaults: component.Defaults(c), Offsets: offsets}, nil
}

// stageFailure turns a rendering failure into an error about the spec
// field it concerns. The release name is spec.name when set, else the
// Component's own.
func stageFailure(spec *manifest.Object, hasName bool, err error) error {
	field := chartField
	var se *stageError
	if errors.As(err, &se) {
		field, err = se.field, se.err
	}
	if field == nameField && !hasName {
		field = "metadata.name"
	}
	if errors.Is(err, ErrBudget) {
		return spec.FieldError(field, err)
	}
	return spec.FieldError(field, fmt.Errorf("%w: %w", ErrChart, err))
}

// nondeterminismWarnings names, for each template whose output is kept
// and differs between the probe's rehearsal and Helm's run, the functions
// it called whose result changes on every render, and the first object
// and field that differ. A template whose output ignores them (a default
// given, now only checking a duration) is not reported.
func nondeterminismWarnings(spec *manifest.Object, r *rendered, kept map[string]bool, source func(string) string) []manifest.Warning {
	var out []manifest.Warning
	for tmpl, fns := range r.calls {
		if !kept[tmpl] || len(fns) == 0 || r.probed[tmpl] == r.files[tmpl] {
			continue
		}
		file := source(tmpl)
		where, differs := firstDifference(file, r.files[tmpl], r.probed[tmpl])
		if !differs {
			continue // comments or layout only: the objects are the same
		}
		names := make([]string, 0, len(fns))
		for fn := range fns {
			names = append(names, fn)
		}
		sort.Strings(names)
		out = append(out, spec.Warn(chartField, fmt.Sprintf("%s calls %s, whose result changes on every render: a second render differs (%s), so the output is never the same twice (wavesmith check keeps failing); give the value in spec.values or refer to an existing Secret instead", file, strings.Join(names, ", "), where)))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Message < out[j].Message })
	return out
}

func chartError(spec *manifest.Object, err error) error {
	var me *manifest.Error
	if errors.As(err, &me) {
		me.Object = spec.Key().String() + ": " + strings.TrimSpace(me.Object)
		me.Object = strings.TrimSuffix(me.Object, ": ")
		me.Err = fmt.Errorf("%w: the chart renders invalid YAML: %w", ErrChart, me.Err)
		return me
	}
	return spec.FieldError(chartField, fmt.Errorf("%w: %v", ErrChart, err))
}

// decode reads a chart's output as helm install and Argo CD read it
// (sigs.k8s.io/yaml, YAML 1.1): an unquoted on, off, yes, no, y or n is a
// boolean, as the API server then receives it.
func decode(file string, data []byte) ([]*manifest.Object, error) {
	objs, err := manifest.Decode(file, data)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		v, err := o.YAML11()
		if err != nil {
			return nil, o.FieldError("", err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		o.Map = m
	}
	return objs, nil
}
