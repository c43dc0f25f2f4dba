package flux

import (
	"fmt"
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// kustomize-controller's annotations and labels.
const (
	// SSAAnnotation is kustomize-controller's per-object apply mode.
	SSAAnnotation   = "kustomize.toolkit.fluxcd.io/ssa"
	ForceAnnotation = "kustomize.toolkit.fluxcd.io/force"
	PruneAnnotation = "kustomize.toolkit.fluxcd.io/prune"
	// NameLabel and NamespaceLabel are the owner labels
	// kustomize-controller sets on apply.
	NameLabel      = "kustomize.toolkit.fluxcd.io/name"
	NamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// Engine is Flux: its dialect and its Kustomizations per wave.
type Engine struct{}

// Name implements gitops.Dialect.
func (Engine) Name() string { return "flux" }

// Markers implements gitops.Dialect.
func (Engine) Markers() (annotations, labels []string) {
	return nil, []string{NameLabel, NamespaceLabel}
}

// Wave implements gitops.Dialect: Flux has no wave annotation.
func (Engine) Wave(*manifest.Object) (int, bool, error) { return 0, false, nil }

// SetWave implements gitops.Dialect: Flux's waves are the Kustomizations of
// the tree (Files), not annotations.
func (Engine) SetWave(*manifest.Object, int) {}

// Annotate implements gitops.Dialect. Waves are not annotations for Flux:
// they are the Kustomizations of the tree (Files).
func (Engine) Annotate(obj *manifest.Object, lc *gitops.Lifecycle) []manifest.Warning {
	var warns []manifest.Warning
	warn := func(key, format string, args ...any) {
		warns = append(warns, obj.Warn(manifest.KeyPath("metadata.annotations", key), "flux cannot express this: "+fmt.Sprintf(format, args...)))
	}
	if inventory.DeleteOnly(lc.Hook) {
		// Flux runs no delete hooks: an Ignore object is never applied,
		// kept out of health checks and of garbage collection.
		gitops.SetIfAbsent(obj, SSAAnnotation, "Ignore")
		warn(inventory.Hook, "%s hook (Flux runs no hooks when it deletes objects): never applied", lc.Hook)
		return warns
	}
	if strings.Contains(lc.Hook, "-delete") {
		warn(inventory.Hook, "%s hook: applied as an object of its wave; its delete part never runs", lc.Hook)
	}
	switch {
	case lc.Reconcile == inventory.ReconcileOnce:
		gitops.SetIfAbsent(obj, SSAAnnotation, "IfNotPresent")
	case lc.Update == inventory.UpdateSSAMerge:
		gitops.SetIfAbsent(obj, SSAAnnotation, "Merge")
	}
	switch lc.Update {
	case inventory.UpdateRecreate:
		gitops.SetIfAbsent(obj, ForceAnnotation, "Enabled")
	case inventory.UpdateReplace:
		if lc.Explicit[inventory.UpdatePolicy] {
			warn(inventory.UpdatePolicy, "update-policy replace (Flux always uses server-side apply)")
		}
	}
	switch lc.Delete {
	case inventory.DeleteOrphan, inventory.DeleteOrphanOnApply:
		gitops.SetIfAbsent(obj, PruneAnnotation, "Disabled")
	case inventory.DeleteOrphanOnDelete:
		warn(inventory.DeletePolicy, "delete-policy orphan-on-delete per object (only the Kustomization's deletionPolicy: Orphan)")
	}
	if lc.Adoption != inventory.AdoptionIfUnowned && lc.Explicit[inventory.AdoptionPolicy] {
		warn(inventory.AdoptionPolicy, "adoption-policy %s (Flux takes over existing objects)", lc.Adoption)
	}
	if lc.DeleteOrder != 0 && lc.Explicit[inventory.DeleteOrder] {
		warn(inventory.DeleteOrder, "delete-order %d (Flux prunes without order)", lc.DeleteOrder)
	}
	if lc.PurgeOrder != nil {
		warn(inventory.PurgeOrder, "purge-order %d (Flux re-creates deleted objects)", *lc.PurgeOrder)
	}
	return warns
}

// DefaultWarnings implements gitops.Dialect.
func (Engine) DefaultWarnings(defaults map[string]string) []manifest.Warning {
	var w []manifest.Warning
	add := func(key, msg string) {
		w = append(w, manifest.Warning{Field: "defaults." + strings.TrimPrefix(key, inventory.Prefix), Message: "flux cannot express this: " + msg})
	}
	if v := defaults[inventory.AdoptionPolicy]; v != "" && v != inventory.AdoptionIfUnowned {
		add(inventory.AdoptionPolicy, "adoption-policy "+v)
	}
	if defaults[inventory.UpdatePolicy] == inventory.UpdateReplace {
		add(inventory.UpdatePolicy, "update-policy replace")
	}
	if defaults[inventory.DeletePolicy] == inventory.DeleteOrphanOnDelete {
		add(inventory.DeletePolicy, "delete-policy orphan-on-delete")
	}
	if v := defaults[inventory.DeleteOrder]; v != "" && v != "0" {
		add(inventory.DeleteOrder, "delete-order "+v)
	}
	return w
}
