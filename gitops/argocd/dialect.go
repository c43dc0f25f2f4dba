package argocd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// Argo CD annotations.
const (
	SyncWave         = "argocd.argoproj.io/sync-wave"
	SyncOptions      = "argocd.argoproj.io/sync-options"
	Hook             = "argocd.argoproj.io/hook"
	HookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	// TrackingID is set by Argo CD on apply (annotation tracking).
	TrackingID = "argocd.argoproj.io/tracking-id"
)

// Engine is Argo CD: its dialect and its Applications.
type Engine struct{}

// Name implements gitops.Dialect.
func (Engine) Name() string { return "argocd" }

// Markers implements gitops.Dialect.
func (Engine) Markers() (annotations, labels []string) { return []string{TrackingID}, nil }

// Annotate implements gitops.Dialect: the sync wave always, sync options
// for the update and delete policies, and PreSync/PostSync hooks for the
// objects wavesmith.io/hook marks.
func (e Engine) Annotate(obj *manifest.Object, lc *gitops.Lifecycle) []manifest.Warning {
	var warns []manifest.Warning
	warn := func(key, format string, args ...any) {
		warns = append(warns, obj.Warn(manifest.KeyPath("metadata.annotations", key), "argocd cannot express this: "+fmt.Sprintf(format, args...)))
	}
	e.SetWave(obj, lc.ApplyOrder)
	opts := make([]string, 0, 4)
	switch lc.Update {
	case inventory.UpdateReplace:
		opts = append(opts, "Replace=true")
	case inventory.UpdateRecreate:
		opts = append(opts, "Replace=true", "Force=true")
	default: // ssa-merge, ssa-override
		opts = append(opts, "ServerSideApply=true")
	}
	switch lc.Delete {
	case inventory.DeleteOrphan:
		opts = append(opts, "Prune=false", "Delete=false")
	case inventory.DeleteOrphanOnApply:
		opts = append(opts, "Prune=false")
	case inventory.DeleteOrphanOnDelete:
		opts = append(opts, "Delete=false")
	}
	mergeSyncOptions(obj, opts)
	isHook := lc.Hook != ""
	if isHook {
		e.annotateHook(obj, lc)
	}
	if lc.Reconcile == inventory.ReconcileOnce && lc.Explicit[inventory.ReconcilePolicy] && !isHook {
		warn(inventory.ReconcilePolicy, "reconcile-policy once (Argo CD re-applies on every sync; consider ignoreDifferences on the Application)")
	}
	if lc.Adoption != inventory.AdoptionIfUnowned && lc.Explicit[inventory.AdoptionPolicy] {
		warn(inventory.AdoptionPolicy, "adoption-policy %s per object (only the Application-wide FailOnSharedResource exists)", lc.Adoption)
	}
	if lc.DeleteOrder != 0 && lc.Explicit[inventory.DeleteOrder] {
		warn(inventory.DeleteOrder, "delete-order %d (Argo CD prunes in reverse sync-wave order)", lc.DeleteOrder)
	}
	if lc.PurgeOrder != nil && !isHook {
		warn(inventory.PurgeOrder, "purge-order %d on an object that is not a hook", *lc.PurgeOrder)
	}
	return warns
}

// Wave implements gitops.Dialect: argocd.argoproj.io/sync-wave.
func (Engine) Wave(obj *manifest.Object) (int, bool, error) {
	v, ok := obj.Annotation(SyncWave)
	if !ok {
		return 0, false, nil
	}
	n, err := inventory.ParseOrder(strings.TrimSpace(v))
	if err != nil {
		return 0, true, err
	}
	return n, true, nil
}

// SetWave implements gitops.Dialect: argocd.argoproj.io/sync-wave.
func (Engine) SetWave(obj *manifest.Object, wave int) {
	obj.SetAnnotation(SyncWave, strconv.Itoa(wave))
}

// annotateHook makes a wavesmith hook an Argo CD hook: pre-install runs in
// PreSync, post-install in PostSync (pre-install wins when both are
// given), pre-delete in PreDelete and post-delete in PostDelete (when the
// Application is deleted; a sync never applies them); a purge-order
// becomes HookSucceeded (Argo CD deletes the hook once it succeeded) and
// update-policy recreate BeforeHookCreation.
func (Engine) annotateHook(obj *manifest.Object, lc *gitops.Lifecycle) {
	var pre, post, preDelete, postDelete bool
	for _, h := range strings.Split(lc.Hook, ",") {
		switch strings.TrimSpace(h) {
		case inventory.HookPreInstall:
			pre = true
		case inventory.HookPostInstall:
			post = true
		case inventory.HookPreDelete:
			preDelete = true
		case inventory.HookPostDelete:
			postDelete = true
		}
	}
	var phases []string
	switch {
	case pre:
		phases = append(phases, "PreSync")
	case post:
		phases = append(phases, "PostSync")
	}
	if preDelete {
		phases = append(phases, "PreDelete")
	}
	if postDelete {
		phases = append(phases, "PostDelete")
	}
	phase := strings.Join(phases, ",")
	gitops.SetIfAbsent(obj, Hook, phase)
	var dp []string
	if lc.Update == inventory.UpdateRecreate {
		dp = append(dp, "BeforeHookCreation")
	}
	if lc.PurgeOrder != nil {
		dp = append(dp, "HookSucceeded")
	}
	if len(dp) > 0 {
		gitops.SetIfAbsent(obj, HookDeletePolicy, strings.Join(dp, ","))
	}
}

// DefaultWarnings implements gitops.Dialect.
func (Engine) DefaultWarnings(defaults map[string]string) []manifest.Warning {
	var w []manifest.Warning
	add := func(key, msg string) {
		w = append(w, manifest.Warning{Field: "defaults." + strings.TrimPrefix(key, inventory.Prefix), Message: "argocd cannot express this: " + msg})
	}
	if defaults[inventory.ReconcilePolicy] == inventory.ReconcileOnce {
		add(inventory.ReconcilePolicy, "reconcile-policy once")
	}
	if v := defaults[inventory.AdoptionPolicy]; v != "" && v != inventory.AdoptionIfUnowned {
		add(inventory.AdoptionPolicy, "adoption-policy "+v)
	}
	if v := defaults[inventory.DeleteOrder]; v != "" && v != "0" {
		add(inventory.DeleteOrder, "delete-order "+v)
	}
	return w
}

// mergeSyncOptions adds options whose key the object does not set yet;
// the object's own options come first and win.
func mergeSyncOptions(obj *manifest.Object, add []string) {
	cur, _ := obj.Annotation(SyncOptions)
	if cur == "" && distinctKeys(add) {
		// Nothing to merge with (most objects): the options as given.
		if len(add) > 0 {
			obj.SetAnnotation(SyncOptions, strings.Join(add, ","))
		}
		return
	}
	var out []string
	seen := map[string]bool{}
	for _, o := range strings.Split(cur, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
			seen[strings.SplitN(o, "=", 2)[0]] = true
		}
	}
	for _, o := range add {
		if k := strings.SplitN(o, "=", 2)[0]; !seen[k] {
			out = append(out, o)
			seen[k] = true
		}
	}
	if len(out) > 0 {
		obj.SetAnnotation(SyncOptions, strings.Join(out, ","))
	}
}

// distinctKeys reports whether no two options share a key (the part
// before "=").
func distinctKeys(opts []string) bool {
	for i, o := range opts {
		k, _, _ := strings.Cut(o, "=")
		for _, p := range opts[:i] {
			if pk, _, _ := strings.Cut(p, "="); pk == k {
				return false
			}
		}
	}
	return true
}
