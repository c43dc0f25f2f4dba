package helm

import (
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/release"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/manifest"
)

// hookField is the annotation field hooks are named by.
const hookField = "metadata.annotations." + release.HookAnnotation

// leftOut is what of a chart's hook no GitOps engine runs: a whole hook
// (field hookField) or its hook-failed delete policy.
type leftOut struct {
	obj    *manifest.Object
	field  string
	reason string
}

// translateHook maps a Helm hook onto waves and policies (for an install,
// revision 1), as component-operator-runtime does, and onto the native
// hook marker each GitOps dialect reads (Argo CD: PreSync, PostSync,
// PreDelete, PostDelete). A hook no engine runs (test, rollback,
// upgrade-only) returns no object, and is left out before anything only
// kept hooks need is checked; what is left out is returned for the
// chart's one warning (or, strict, an error). A kept hook's waves are
// returned relative to the Component's.
func translateHook(h *release.Hook, file string) (*manifest.Object, generators.Offset, []leftOut, error) {
	objs, err := decode(file, []byte(h.Manifest))
	if err != nil {
		return nil, generators.Offset{}, nil, err
	}
	if len(objs) == 0 {
		return nil, generators.Offset{}, nil, nil
	}
	o := objs[0]
	if err := component.CheckNoNativeAnnotations(o); err != nil {
		return nil, generators.Offset{}, nil, err
	}
	fail := func(format string, args ...any) error {
		return o.FieldError(hookField, fmt.Errorf("%w: "+format, append([]any{ErrHook}, args...)...))
	}
	var events []string
	seen := map[string]bool{}
	add := func(e string) {
		if !seen[e] {
			seen[e] = true
			events = append(events, e)
		}
	}
	for _, e := range h.Events {
		switch e {
		case release.HookPreInstall:
			add(inventory.HookPreInstall)
		case release.HookPostInstall:
			add(inventory.HookPostInstall)
		case release.HookPreDelete:
			add(inventory.HookPreDelete)
		case release.HookPostDelete:
			add(inventory.HookPostDelete)
		case release.HookPreUpgrade, release.HookPostUpgrade:
			// wavesmith renders an install: upgrade hooks alone are left out.
		case release.HookPreRollback, release.HookPostRollback, release.HookTest:
		default:
			return nil, generators.Offset{}, nil, fail("unknown hook %q", e)
		}
	}
	if len(events) == 0 {
		// test, rollback or upgrade-only hooks: no engine runs them.
		return nil, generators.Offset{}, []leftOut{{o, hookField, fmt.Sprintf("%v", h.Events)}}, nil
	}
	pre, post := seen[inventory.HookPreInstall], seen[inventory.HookPostInstall]
	install := pre || post
	// Only hooks that are kept need what follows.
	if install && (h.Weight < -100 || h.Weight > 100) {
		return nil, generators.Offset{}, nil, fail("weight %d is outside -100..100", h.Weight)
	}
	var left []leftOut
	succeeded, beforeCreation := false, len(h.DeletePolicies) == 0
	for _, p := range h.DeletePolicies {
		switch p {
		case release.HookSucceeded:
			succeeded = true
		case release.HookBeforeHookCreation:
			beforeCreation = true
		case release.HookFailed:
			// No native policy deletes a failed hook: it stays for
			// inspection.
			left = append(left, leftOut{o, "metadata.annotations." + release.HookDeleteAnnotation, "hook-delete-policy hook-failed"})
		}
	}
	// Waves relative to the Component's (the engine's wave plan makes
	// them absolute). Delete hooks alone keep the Component's wave: no
	// sync applies them, so they neither open a wave nor shift
	// dependents.
	off, purge := generators.Offset{}, 201
	switch {
	case pre:
		off.Apply = h.Weight - 101
		if !post {
			purge = -1
		}
	case post:
		off.Apply = h.Weight + 101
	}
	o.SetAnnotation(inventory.ReconcilePolicy, inventory.ReconcileOnce)
	if succeeded {
		off.Purge = &purge
	}
	if beforeCreation {
		o.SetAnnotation(inventory.UpdatePolicy, inventory.UpdateRecreate)
	}
	// The native hook marker; each GitOps dialect maps it to its
	// engine's hooks (Argo CD: PreSync/PostSync/PreDelete/PostDelete with
	// delete policies derived from purge-order and update-policy
	// recreate; Flux never applies a delete-only hook).
	sort.Strings(events)
	o.SetAnnotation(inventory.Hook, strings.Join(events, ","))
	return o, off, left, nil
}

// leftOutHooks turns what a chart's hooks left out into one warning on
// the Component, or, when spec.strictHooks is set, an error naming the
// first hook (by file, then object) and its field.
func leftOutHooks(spec *manifest.Object, strict bool, left []leftOut) ([]manifest.Warning, error) {
	if len(left) == 0 {
		return nil, nil
	}
	sort.SliceStable(left, func(i, j int) bool {
		a, b := left[i], left[j]
		if a.obj.Source.File != b.obj.Source.File {
			return a.obj.Source.File < b.obj.Source.File
		}
		return a.obj.Key().String() < b.obj.Key().String()
	})
	if strict {
		l := left[0]
		return nil, l.obj.FieldError(l.field, fmt.Errorf("%w: %s: no GitOps engine runs it (spec.strictHooks is set)", ErrHook, l.reason))
	}
	parts := make([]string, len(left))
	for i, l := range left {
		parts[i] = fmt.Sprintf("%s %s (%s)", l.obj.Source.File, l.obj.Key(), l.reason)
	}
	return []manifest.Warning{spec.Warn(chartField, "left out, since no GitOps engine runs them (spec.strictHooks: true makes this an error): "+strings.Join(parts, "; "))}, nil
}
