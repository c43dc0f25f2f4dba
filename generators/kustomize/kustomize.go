package kustomize

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/manifest"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrKustomization: the kustomization is refused (a remote reference,
	// a plugin, helmCharts, a path or symlink leaving the root, a file
	// outside its kustomization's folder, a bad ConfigFile) or kustomize
	// cannot build it.
	ErrKustomization = errors.New("kustomization")
	// ErrTemplate: a template does not parse, fails to execute, or
	// renders invalid YAML.
	ErrTemplate = errors.New("template")
	// ErrRequired: the template function required got nil or "". It
	// comes wrapped in ErrTemplate.
	ErrRequired = errors.New("missing required value")
	// ErrBudget: rendering took too long (the context's deadline; the
	// error wraps the context's error too), a template exceeded a limit
	// of the template sandbox (internal/tmplsandbox) or the build one of
	// its own (see the package documentation). Within a template it
	// comes wrapped in ErrTemplate. It is generators.ErrBudget, the
	// value helm.ErrBudget is too.
	ErrBudget = generators.ErrBudget
)

// Files in the component folder that configure it; they are neither
// templates nor resources.
const (
	// ConfigFile holds templateSuffix, leftTemplateDelimiter,
	// rightTemplateDelimiter and default values, as in
	// component-operator-runtime.
	ConfigFile = ".component-config.yaml"
	// IgnoreFile lists, in .gitignore syntax, files to leave out.
	IgnoreFile = ".component-ignore"
)

// Source is the key of spec.source a kustomization Component sets: the
// source this generator renders (generators/builtin registers it by it).
const Source = "kustomization"

// sourceField is the spec field naming the folder.
const sourceField = "spec.source.kustomization.path"

// Generator renders Components whose source is a kustomization.
type Generator struct{}

var _ generators.Generator = Generator{}

// Generate implements generators.Generator for a Component with
// spec.source.kustomization: it reads the folder, renders its templates,
// refuses what cannot run offline, builds it with kustomize and gives
// namespaced objects without a namespace the placement namespace.
func (g Generator) Generate(ctx context.Context, spec *manifest.Object, opts generators.Options) (generators.Result, error) {
	c, err := component.Decode(spec)
	if err != nil {
		return generators.Result{}, err
	}
	return g.GenerateComponent(ctx, spec, c, opts)
}

var _ component.Source = Generator{}

// GenerateComponent implements component.Source: Generate from the
// Component the Component generator decoded.
func (Generator) GenerateComponent(ctx context.Context, spec *manifest.Object, c *v1alpha1.Component, opts generators.Options) (generators.Result, error) {
	if c.Spec.Source.Kustomization == nil {
		return generators.Result{}, spec.FieldError("spec.source.kustomization", fmt.Errorf("%w: the Component's source is not a kustomization", manifest.ErrInvalid))
	}
	dir, err := component.ResolvePath(spec, sourceField, c.Spec.Source.Kustomization.Path, opts.Root)
	if err != nil {
		return generators.Result{}, err
	}
	values, err := component.Values(spec, c, opts.Root)
	if err != nil {
		return generators.Result{}, err
	}
	j := &job{spec: spec, dir: dir, opts: opts, values: values, template: c.Spec.Source.Kustomization.Template}
	j.namespace, j.name = component.Placement(c)
	objs, err := j.run(ctx)
	if err != nil {
		return generators.Result{}, err
	}
	warns := append(j.warnings, component.SetNamespaces(spec, c, objs, j.namespace, opts.Scope)...)
	component.StatusHints(c, objs)
	return generators.Result{Objects: objs, Warnings: warns, Defaults: component.Defaults(c)}, nil
}

// job is one rendering of one component folder.
type job struct {
	spec            *manifest.Object
	dir             string // the folder as resolved: Source.File of the objects
	namespace, name string // placement
	opts            generators.Options
	values          map[string]any // valuesFiles and spec.values
	template        *bool          // spec.source.kustomization.template
	t               *tree          // once open
	warnings        []manifest.Warning
}

// run reads, templates, checks and builds the folder.
func (j *job) run(ctx context.Context) ([]*manifest.Object, error) {
	t, cfg, templated, err := j.open()
	if err != nil {
		return nil, err
	}
	if templated {
		if err := j.render(ctx, t, cfg); err != nil {
			return nil, err
		}
	}
	if err := j.ctxErr(ctx, "reading the folder"); err != nil {
		return nil, err
	}
	ok, err := j.ensureKustomization(t)
	if err != nil {
		return nil, err
	}
	if !ok {
		j.warnings = append(j.warnings, j.spec.Warn(sourceField, fmt.Sprintf("%s has no kustomization and no YAML files: it renders nothing", j.dir)))
		return nil, nil
	}
	if err := j.check(t); err != nil {
		return nil, err
	}
	if err := j.ctxErr(ctx, "checking the kustomization"); err != nil {
		return nil, err
	}
	return j.build(ctx, t)
}

// ctxErr is ErrBudget naming the Component and the stage when ctx is
// done.
func (j *job) ctxErr(ctx context.Context, stage string) error {
	if err := ctx.Err(); err != nil {
		return j.spec.FieldError(sourceField, fmt.Errorf("%w: %s %s: %w", ErrBudget, stage, j.dir, err))
	}
	return nil
}

// path returns the path of a file of the tree (relative to its root) as
// the user knows it: from the component folder as the Component names it.
func (j *job) path(rel string) string {
	if rel == "" {
		return j.dir
	}
	top := "."
	if j.t != nil {
		top = j.t.top
	}
	r, err := filepath.Rel(filepath.FromSlash(top), filepath.FromSlash(rel))
	if err != nil || r == "." {
		return j.dir
	}
	return filepath.Join(j.dir, r)
}

// fileError locates a problem in a file of the folder (rel is relative
// to it, "" for the folder itself), at a line and field path of that file
// when known.
func (j *job) fileError(rel string, line int, field string, err error) *manifest.Error {
	return &manifest.Error{File: j.path(rel), Line: line, Object: j.spec.Key().String(), Field: field, Err: err, Ref: j.spec.Ref()}
}

// refuse is fileError for ErrKustomization.
func (j *job) refuse(rel string, line int, field, format string, args ...any) *manifest.Error {
	return j.fileError(rel, line, field, fmt.Errorf("%w: "+format, append([]any{ErrKustomization}, args...)...))
}

// warn records a warning about a file of the folder.
func (j *job) warn(rel, field, message string) {
	j.warnings = append(j.warnings, manifest.Warning{File: j.path(rel), Object: j.spec.Key().String(), Field: field, Message: message, Ref: j.spec.Ref()})
}
