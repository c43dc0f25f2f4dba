package helm

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// rendered is a chart as helm template renders it.
type rendered struct {
	// chart has its dependencies processed: disabled ones are gone.
	chart *chart.Chart
	// manifests and hooks end with a line break, as helm template prints
	// them (Helm trims each document).
	manifests []releaseutil.Manifest
	hooks     []*release.Hook
	// files is what each template wrote, as Helm's engine returned it.
	files map[string]string
	// calls maps templates to the nondeterministic functions they called
	// in the probe; probed is what those templates wrote there.
	calls  map[string]map[string]bool
	probed map[string]string
}

// stageError is a failure of a stage, with the spec field it concerns.
type stageError struct {
	field string
	err   error
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

const (
	chartField  = "spec.source.chart.path"
	repoField   = "spec.source.chart.repo"
	valuesField = "spec.values"
	nameField   = "spec.name"
)

func failed(field, format string, args ...any) error {
	return &stageError{field: field, err: fmt.Errorf(format, args...)}
}

// renderChart runs, in order, the steps of `helm template` (the install
// action in client-only dry-run mode: helm.sh/helm/v3/cmd/helm/install.go
// runInstall, pkg/action/install.go RunWithContext and action.go
// renderResources) with Helm's own functions, so that dependencies
// (condition, tags, alias, import-values, library charts), values
// coalescing, schema validation, NOTES and manifest splitting are Helm's.
// Between computing the values and rendering, the probe rehearses the
// templates within its limits. CRDs are taken from the processed chart by
// the caller.
//
// load gives the chart (nil: Helm's loader reads the folder dir); dir
// names it in messages.
func renderChart(dir string, load func() (*chart.Chart, error), values map[string]any, rel chartutil.ReleaseOptions, caps *chartutil.Capabilities, p *probe) (*rendered, error) {
	if load == nil {
		load = func() (*chart.Chart, error) { return loader.Load(dir) }
	}
	chrt, err := load()
	if err != nil {
		return nil, failed(chartField, "loading %s: %w", dir, err)
	}
	if t := chrt.Metadata.Type; t != "" && t != "application" {
		return nil, failed(chartField, "%s: %s charts are not installable", dir, t)
	}
	if err := checkDependencies(chrt); err != nil {
		return nil, failed(chartField, "%s: %v", dir, err)
	}
	if err := checkSchemas(chrt, dir); err != nil {
		return nil, failed(chartField, "%v", err)
	}
	if err := chartutil.ValidateReleaseName(rel.Name); err != nil {
		return nil, failed(nameField, "release name %q: %v", rel.Name, err)
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, values); err != nil {
		return nil, failed(valuesField, "%v", err)
	}
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, values, rel, caps, false)
	if err != nil {
		return nil, failed(valuesField, "%v", err)
	}
	if kv := chrt.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, failed(chartField, "%s requires kubeVersion %s, not %s (set --kube-version)", dir, kv, caps.KubeVersion.String())
	}
	if err := p.run(chrt, vals); err != nil {
		return nil, &stageError{field: chartField, err: err}
	}
	var e engine.Engine // no cluster: lookup finds nothing, as in helm template
	files, err := e.Render(chrt, vals)
	if err != nil {
		return nil, failed(chartField, "%v", err)
	}
	written := make(map[string]string, len(files))
	for k, v := range files {
		written[k] = v
		if strings.HasSuffix(k, "NOTES.txt") {
			delete(files, k)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, failed(chartField, "%v", err)
	}
	for i := range manifests {
		manifests[i].Content += "\n"
	}
	for _, h := range hooks {
		h.Manifest += "\n"
	}
	return &rendered{chart: chrt, manifests: manifests, hooks: hooks, files: written, calls: p.calls, probed: p.out}, nil
}

// checkDependencies refuses a chart whose Chart.yaml lists dependencies
// missing from charts/, as helm template does (action.CheckDependencies).
func checkDependencies(chrt *chart.Chart) error {
	var missing []string
outer:
	for _, r := range chrt.Metadata.Dependencies {
		for _, d := range chrt.Dependencies() {
			if d.Name() == r.Name {
				continue outer
			}
		}
		missing = append(missing, r.Name)
	}
	if len(missing) > 0 {
		return fmt.Errorf("found in Chart.yaml, but missing in charts/ directory: %s", strings.Join(missing, ", "))
	}
	return nil
}

// renderWithin runs render on its own goroutine and gives up when ctx
// ends: the probe (whose sandbox watches ctx) stops at its next step,
// function call or write, and the
// caller gets an ErrBudget error naming the template that was running.
// What cannot be stopped (Helm's engine, a loop that calls nothing) goes
// on in the background until it ends or the process exits.
func renderWithin(ctx context.Context, p *probe, render func() (*rendered, error)) (*rendered, error) {
	if ctx.Err() != nil {
		return nil, atDeadline(ctx, p)
	}
	type outcome struct {
		r   *rendered
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- outcome{err: failed(chartField, "rendering panicked: %v", v)}
			}
		}()
		r, err := render()
		done <- outcome{r, err}
	}()
	select {
	case o := <-done:
		if o.err != nil && ctx.Err() != nil && errors.Is(o.err, ErrBudget) {
			return nil, atDeadline(ctx, p)
		}
		return o.r, o.err
	case <-ctx.Done():
		return nil, atDeadline(ctx, p)
	}
}

func atDeadline(ctx context.Context, p *probe) error {
	where := "while rendering the chart"
	if t := p.template(); t != "" {
		where = "while rendering " + path.Clean(t)
	}
	return &stageError{field: chartField, err: fmt.Errorf("%w: %s: %w", ErrBudget, where, context.Cause(ctx))}
}
