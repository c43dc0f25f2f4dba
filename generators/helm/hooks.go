package helm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/release"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/manifest"
)

// translateHook maps a Helm hook onto waves and policies (for an install,
// revision 1), as component-operator-runtime does, and onto Argo CD's own
// hooks. It returns no object for hooks that do not run on install, which
// are left out before anything only kept hooks need is checked.
func translateHook(h *release.Hook, file string, wave int) ([]*manifest.Object, []manifest.Warning, error) {
	objs, err := decode(file, []byte(h.Manifest))
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
	// Only hooks that run on install need what follows.
	if h.Weight < -100 || h.Weight > 100 {
		return nil, nil, fail("weight %d is outside -100..100", h.Weight)
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
	var events []string
	if pre {
		events = append(events, inventory.HookPreInstall)
	}
	if post {
		events = append(events, inventory.HookPostInstall)
	}
	if !pre {
		applyOrder = wave + h.Weight + 101
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
	// The native hook marker; each GitOps dialect maps it to its
	// engine's hooks (Argo CD: PreSync/PostSync with delete policies
	// derived from purge-order and update-policy recreate).
	sort.Strings(events)
	o.SetAnnotation(inventory.Hook, strings.Join(events, ","))
	return []*manifest.Object{o}, nil, nil
}
