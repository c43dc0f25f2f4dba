package helm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/manifest"
)

// ErrChart: the chart cannot be loaded or rendered.
var ErrChart = errors.New("chart")

// ErrHook: a Helm hook that wavesmith cannot express.
var ErrHook = errors.New("unsupported Helm hook")

// Argo CD hook annotations written for chart hooks.
const (
	argoHook             = "argocd.argoproj.io/hook"
	argoHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	resourcePolicy       = "helm.sh/resource-policy"
)

// Generator renders chart Components.
type Generator struct{}

// Generate implements generators.Generator for a Component with
// spec.source.chart.
func (Generator) Generate(_ context.Context, spec *manifest.Object, opts generators.Options) (generators.Result, error) {
	c, err := component.Decode(spec)
	if err != nil {
		return generators.Result{}, err
	}
	const field = "spec.source.chart.path"
	dir, err := component.ResolvePath(spec, field, c.Spec.Source.Chart.Path, opts.Root)
	if err != nil {
		return generators.Result{}, err
	}
	values, err := component.Values(spec, c, opts.Root)
	if err != nil {
		return generators.Result{}, err
	}
	chrt, err := loader.Load(dir)
	if err != nil {
		return generators.Result{}, spec.FieldError(field, fmt.Errorf("%w: loading %s: %v", ErrChart, dir, err))
	}
	ns, name := component.Placement(c)
	caps, err := capabilities(opts)
	if err != nil {
		return generators.Result{}, spec.FieldError(field, fmt.Errorf("%w: %v", ErrChart, err))
	}
	if chrt.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(chrt.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return generators.Result{}, spec.FieldError(field, fmt.Errorf("%w: %s requires kubeVersion %s, not %s", ErrChart, dir, chrt.Metadata.KubeVersion, caps.KubeVersion.String()))
	}
	vals, err := chartutil.ToRenderValues(chrt, values, chartutil.ReleaseOptions{Name: name, Namespace: ns, Revision: 1, IsInstall: true}, caps)
	if err != nil {
		return generators.Result{}, spec.FieldError("spec.values", fmt.Errorf("%w: %v", ErrChart, err))
	}
	files, err := render(chrt, vals)
	if err != nil {
		return generators.Result{}, spec.FieldError(field, fmt.Errorf("%w: %v", ErrChart, err))
	}
	for k := range files {
		if strings.HasSuffix(k, "NOTES.txt") {
			delete(files, k)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return generators.Result{}, spec.FieldError(field, fmt.Errorf("%w: %v", ErrChart, err))
	}
	// Templates are named <chart name>/templates/...: point errors at the file.
	source := func(tmpl string) string {
		rel := strings.TrimPrefix(tmpl, chrt.Name()+"/")
		return filepath.Join(dir, filepath.FromSlash(rel))
	}

	var objs, crds []*manifest.Object
	var warns []manifest.Warning
	for _, crd := range chrt.CRDObjects() {
		got, err := manifest.Decode(source(crd.Filename), crd.File.Data)
		if err != nil {
			return generators.Result{}, chartError(spec, err)
		}
		crds = append(crds, got...)
	}
	for _, m := range manifests {
		got, err := manifest.Decode(source(m.Name), []byte(m.Content))
		if err != nil {
			return generators.Result{}, chartError(spec, err)
		}
		for _, o := range got {
			if err := component.CheckNoNativeAnnotations(o); err != nil {
				return generators.Result{}, err
			}
		}
		objs = append(objs, got...)
	}
	wave := opts.Wave
	if c.Spec.Wave != nil {
		wave = int(*c.Spec.Wave)
	}
	for _, h := range hooks {
		got, w, err := translateHook(h, source(h.Path), wave)
		if err != nil {
			return generators.Result{}, err
		}
		warns = append(warns, w...)
		objs = append(objs, got...)
	}
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
	earliest := wave
	for _, o := range objs {
		if v, ok := o.Annotation(inventory.ApplyOrder); ok {
			if n, err := strconv.Atoi(v); err == nil && n < earliest {
				earliest = n
			}
		}
	}
	for _, o := range crds {
		o.SetAnnotation(inventory.ApplyOrder, strconv.Itoa(earliest))
		o.SetAnnotation(inventory.DeletePolicy, inventory.DeleteOrphan)
	}
	all := append(crds, objs...)
	component.SetNamespaces(all, ns)
	component.StatusHints(c, all)
	return generators.Result{Objects: all, Warnings: warns, Defaults: component.Defaults(c)}, nil
}

// engineMu guards Helm's template engine, whose function maps are shared.
var engineMu sync.Mutex

func render(chrt *chart.Chart, vals chartutil.Values) (map[string]string, error) {
	engineMu.Lock()
	defer engineMu.Unlock()
	var e engine.Engine // no cluster: lookup returns nothing, as in helm template
	return e.Render(chrt, vals)
}

func chartError(spec *manifest.Object, err error) error {
	var me *manifest.Error
	if errors.As(err, &me) {
		me.Object = spec.Key().String() + ": " + strings.TrimSpace(me.Object)
		me.Object = strings.TrimSuffix(me.Object, ": ")
		me.Err = fmt.Errorf("%w: the chart renders invalid YAML: %w", ErrChart, me.Err)
		return me
	}
	return spec.FieldError("spec.source.chart.path", fmt.Errorf("%w: %v", ErrChart, err))
}

// capabilities are helm template's: the default versions, the kube version
// and the extra API versions of the options.
func capabilities(opts generators.Options) (*chartutil.Capabilities, error) {
	caps := chartutil.DefaultCapabilities.Copy()
	if opts.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(opts.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kube version %q: %v", opts.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	if len(opts.APIVersions) > 0 {
		caps.APIVersions = append(append(chartutil.VersionSet{}, chartutil.DefaultVersionSet...), opts.APIVersions...)
	}
	return caps, nil
}

// translateHook maps a Helm hook onto waves and policies (for an install,
// revision 1), as component-operator-runtime does, and onto Argo CD's own
// hooks. It returns no object for hooks that do not run on install.
func translateHook(h *release.Hook, file string, wave int) ([]*manifest.Object, []manifest.Warning, error) {
	objs, err := manifest.Decode(file, []byte(h.Manifest))
	if err != nil {
		return nil, nil, err
	}
	if len(objs) == 0 {
		return nil, nil, nil
	}
	o := objs[0]
	if err := component.CheckNoNativeAnnotations(o); err != nil {
		return nil, nil, err
	}
	fail := func(format string, args ...any) error {
		return o.FieldError("metadata.annotations."+release.HookAnnotation, fmt.Errorf("%w: "+format, append([]any{ErrHook}, args...)...))
	}
	if h.Weight < -100 || h.Weight > 100 {
		return nil, nil, fail("weight %d is outside -100..100", h.Weight)
	}
	var pre, post bool
	for _, e := range h.Events {
		switch e {
		case release.HookPreInstall:
			pre = true
		case release.HookPostInstall:
			post = true
		case release.HookPreUpgrade, release.HookPostUpgrade:
			// wavesmith renders an install: upgrade hooks alone are left out.
		case release.HookPreDelete, release.HookPostDelete:
			return nil, nil, fail("%s hooks cannot run before or after a GitOps engine deletes objects; remove the hook from the chart", e)
		case release.HookPreRollback, release.HookPostRollback, release.HookTest:
		default:
			return nil, nil, fail("unknown hook %q", e)
		}
	}
	if !pre && !post {
		// test, rollback or upgrade-only hooks: nothing runs on install.
		return nil, []manifest.Warning{o.Warn("metadata.annotations."+release.HookAnnotation, fmt.Sprintf("hook %v does not run on install: left out", h.Events))}, nil
	}
	succeeded, beforeCreation := false, len(h.DeletePolicies) == 0
	for _, p := range h.DeletePolicies {
		switch p {
		case release.HookSucceeded:
			succeeded = true
		case release.HookBeforeHookCreation:
			beforeCreation = true
		case release.HookFailed:
			return nil, nil, fail("hook-delete-policy hook-failed cannot be expressed")
		}
	}
	applyOrder, purgeOrder := wave+h.Weight-101, wave+201
	argo := "PreSync"
	if !pre {
		applyOrder, argo = wave+h.Weight+101, "PostSync"
	}
	if pre && !post {
		purgeOrder = wave - 1
	}
	o.SetAnnotation(inventory.ApplyOrder, strconv.Itoa(applyOrder))
	o.SetAnnotation(inventory.ReconcilePolicy, inventory.ReconcileOnce)
	if succeeded {
		o.SetAnnotation(inventory.PurgeOrder, strconv.Itoa(purgeOrder))
	}
	if beforeCreation {
		o.SetAnnotation(inventory.UpdatePolicy, inventory.UpdateRecreate)
	}
	o.SetAnnotation(argoHook, argo)
	var dp []string
	if beforeCreation {
		dp = append(dp, "BeforeHookCreation")
	}
	if succeeded {
		dp = append(dp, "HookSucceeded")
	}
	sort.Strings(dp)
	o.SetAnnotation(argoHookDeletePolicy, strings.Join(dp, ","))
	return []*manifest.Object{o}, nil, nil
}
