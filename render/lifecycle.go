package render

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/manifest"
)

// Engine annotations written by the dialects.
const (
	ArgoSyncWave    = "argocd.argoproj.io/sync-wave"
	ArgoSyncOptions = "argocd.argoproj.io/sync-options"
	ArgoHook        = "argocd.argoproj.io/hook"
	ArgoTrackingID  = "argocd.argoproj.io/tracking-id"

	FluxSSA       = "kustomize.toolkit.fluxcd.io/ssa"
	FluxForce     = "kustomize.toolkit.fluxcd.io/force"
	FluxPrune     = "kustomize.toolkit.fluxcd.io/prune"
	FluxName      = "kustomize.toolkit.fluxcd.io/name"
	FluxNamespace = "kustomize.toolkit.fluxcd.io/namespace"
)

// lifecycle is the resolved set of waves and policies of one object.
type lifecycle struct {
	applyOrder, deleteOrder int
	purgeOrder              *int
	adoption, reconcile     string
	update, delete          string
	statusHint              string
	// from tells, per native annotation, where the value came from.
	from map[string]origin
}

type origin int

const (
	fromDefault origin = iota // wavesmith's built-in default
	fromConfig                // render options
	fromSpec                  // the owning spec
	fromObject                // the object itself
)

// checkLifecycleValue validates one native annotation value and returns it
// normalised (CamelCase policy values become kebab-case, as
// component-operator-runtime accepts them).
func checkLifecycleValue(key, v string) (string, error) {
	switch key {
	case inventory.ApplyOrder, inventory.DeleteOrder, inventory.PurgeOrder:
		if _, err := inventory.ParseOrder(strings.TrimSpace(v)); err != nil {
			return "", fmt.Errorf("%w: %v", ErrAnnotation, err)
		}
		return strings.TrimSpace(v), nil
	case inventory.StatusHint:
		return v, checkStatusHint(v)
	}
	allowed, ok := inventory.Allowed[key]
	if !ok {
		return "", fmt.Errorf("%w: unknown wavesmith annotation", ErrAnnotation)
	}
	nv := toKebab(strings.TrimSpace(v))
	for _, a := range allowed {
		if nv == a {
			return nv, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not one of %s", ErrAnnotation, v, strings.Join(allowed, ", "))
}

func checkStatusHint(v string) error {
	for _, h := range strings.Split(v, ",") {
		h = strings.TrimSpace(h)
		switch {
		case h == "has-observed-generation", h == "has-ready-condition":
		case strings.HasPrefix(h, "conditions="):
			for _, c := range strings.Split(strings.TrimPrefix(h, "conditions="), ";") {
				if strings.TrimSpace(c) == "" {
					return fmt.Errorf("%w: status hint %q has an empty condition type", ErrAnnotation, h)
				}
			}
		default:
			return fmt.Errorf("%w: status hint %q is not one of has-observed-generation, has-ready-condition, conditions=A;B", ErrAnnotation, h)
		}
	}
	return nil
}

func toKebab(s string) string {
	if strings.ContainsAny(s, "-") || strings.ToLower(s) == s {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// resolve computes the lifecycle of obj: its own annotations, then the
// spec's defaults, then the render options, then wavesmith's defaults.
func resolve(obj *manifest.Object, spec map[string]string, opts *Options) (lifecycle, error) {
	lc := lifecycle{from: make(map[string]origin, len(lifecycleKeys))}
	own := obj.Annotations()
	var errs []error
	for _, key := range lifecycleKeys {
		var v string
		var have bool
		if s, ok := own[key]; ok {
			str, isStr := s.(string)
			if !isStr {
				errs = append(errs, obj.FieldError(annotationPath(key), fmt.Errorf("%w: annotation values must be strings", ErrAnnotation)))
				continue
			}
			v, have, lc.from[key] = str, true, fromObject
		} else if s, ok := spec[key]; ok {
			v, have, lc.from[key] = s, true, fromSpec
		} else if s, ok := opts.Defaults[key]; ok {
			v, have, lc.from[key] = s, true, fromConfig
		}
		if !have {
			continue
		}
		nv, err := checkLifecycleValue(key, v)
		if err != nil {
			errs = append(errs, obj.FieldError(annotationPath(key), err))
			continue
		}
		switch key {
		case inventory.ApplyOrder:
			lc.applyOrder, _ = strconv.Atoi(nv)
		case inventory.DeleteOrder:
			lc.deleteOrder, _ = strconv.Atoi(nv)
		case inventory.PurgeOrder:
			n, _ := strconv.Atoi(nv)
			lc.purgeOrder = &n
		case inventory.AdoptionPolicy:
			lc.adoption = nv
		case inventory.ReconcilePolicy:
			lc.reconcile = nv
		case inventory.UpdatePolicy:
			lc.update = nv
		case inventory.DeletePolicy:
			lc.delete = nv
		case inventory.StatusHint:
			lc.statusHint = nv
		}
	}
	for key, p := range map[string]*string{
		inventory.AdoptionPolicy: &lc.adoption, inventory.ReconcilePolicy: &lc.reconcile,
		inventory.UpdatePolicy: &lc.update, inventory.DeletePolicy: &lc.delete,
	} {
		if *p == "" {
			*p = inventory.Allowed[key][0]
		}
	}
	if lc.purgeOrder != nil && isManagedTypeKind(obj) {
		errs = append(errs, obj.FieldError(annotationPath(inventory.PurgeOrder), fmt.Errorf("%w: purge-order is not allowed on a %s", ErrAnnotation, obj.Kind())))
	}
	return lc, errors.Join(errs...)
}

func isManagedTypeKind(obj *manifest.Object) bool {
	switch obj.Key().Group + "/" + obj.Kind() {
	case "/Namespace", "apiextensions.k8s.io/CustomResourceDefinition", "apiregistration.k8s.io/APIService":
		return true
	}
	return false
}

func annotationPath(key string) string {
	return "metadata.annotations." + key
}

// explicit reports whether the value of key was chosen by the user on the
// object or its spec (not a default).
func (lc *lifecycle) explicit(key string) bool {
	o := lc.from[key]
	return o == fromObject || o == fromSpec
}

// annotate writes the native annotations and those of each dialect, and
// returns a warning for every explicit policy an engine cannot express.
func (lc *lifecycle) annotate(obj *manifest.Object, opts *Options, specDigest string) []manifest.Warning {
	obj.SetAnnotation(inventory.ApplyOrder, strconv.Itoa(lc.applyOrder))
	obj.SetAnnotation(inventory.DeleteOrder, strconv.Itoa(lc.deleteOrder))
	if lc.purgeOrder != nil {
		obj.SetAnnotation(inventory.PurgeOrder, strconv.Itoa(*lc.purgeOrder))
	}
	obj.SetAnnotation(inventory.AdoptionPolicy, lc.adoption)
	obj.SetAnnotation(inventory.ReconcilePolicy, lc.reconcile)
	obj.SetAnnotation(inventory.UpdatePolicy, lc.update)
	obj.SetAnnotation(inventory.DeletePolicy, lc.delete)
	if lc.statusHint != "" {
		obj.SetAnnotation(inventory.StatusHint, lc.statusHint)
	}
	if lc.reconcile == inventory.ReconcileOnObjectOrComponentChange && specDigest != "" {
		// Every engine re-applies an object whose manifest changed: bake
		// the spec's digest in, so a spec change changes the object.
		obj.SetAnnotation(inventory.SpecDigest, specDigest)
	}
	var warns []manifest.Warning
	warn := func(d Dialect, key, format string, args ...any) {
		warns = append(warns, obj.Warn(annotationPath(key), fmt.Sprintf("%s cannot express this: ", d)+fmt.Sprintf(format, args...)))
	}
	if opts.hasDialect(ArgoCD) {
		lc.annotateArgo(obj, warn)
	}
	if opts.hasDialect(Flux) {
		lc.annotateFlux(obj, warn)
	}
	return warns
}

type warnFunc func(d Dialect, key, format string, args ...any)

func (lc *lifecycle) annotateArgo(obj *manifest.Object, warn warnFunc) {
	setIfAbsent(obj, ArgoSyncWave, strconv.Itoa(lc.applyOrder))
	var opts []string
	switch lc.update {
	case inventory.UpdateReplace:
		opts = append(opts, "Replace=true")
	case inventory.UpdateRecreate:
		opts = append(opts, "Replace=true", "Force=true")
	default: // ssa-merge, ssa-override
		opts = append(opts, "ServerSideApply=true")
	}
	switch lc.delete {
	case inventory.DeleteOrphan:
		opts = append(opts, "Prune=false", "Delete=false")
	case inventory.DeleteOrphanOnApply:
		opts = append(opts, "Prune=false")
	case inventory.DeleteOrphanOnDelete:
		opts = append(opts, "Delete=false")
	}
	mergeSyncOptions(obj, opts)
	_, isHook := obj.Annotation(ArgoHook)
	if lc.reconcile == inventory.ReconcileOnce && lc.explicit(inventory.ReconcilePolicy) && !isHook {
		warn(ArgoCD, inventory.ReconcilePolicy, "reconcile-policy once (Argo CD re-applies on every sync; consider ignoreDifferences on the Application)")
	}
	if lc.adoption != inventory.AdoptionIfUnowned && lc.explicit(inventory.AdoptionPolicy) {
		warn(ArgoCD, inventory.AdoptionPolicy, "adoption-policy %s per object (only the Application-wide FailOnSharedResource exists)", lc.adoption)
	}
	if lc.deleteOrder != 0 && lc.explicit(inventory.DeleteOrder) {
		warn(ArgoCD, inventory.DeleteOrder, "delete-order %d (Argo CD prunes in reverse sync-wave order)", lc.deleteOrder)
	}
	if lc.purgeOrder != nil && !isHook {
		warn(ArgoCD, inventory.PurgeOrder, "purge-order %d on an object that is not a hook", *lc.purgeOrder)
	}
}

func (lc *lifecycle) annotateFlux(obj *manifest.Object, warn warnFunc) {
	switch {
	case lc.reconcile == inventory.ReconcileOnce:
		setIfAbsent(obj, FluxSSA, "IfNotPresent")
	case lc.update == inventory.UpdateSSAMerge:
		setIfAbsent(obj, FluxSSA, "Merge")
	}
	switch lc.update {
	case inventory.UpdateRecreate:
		setIfAbsent(obj, FluxForce, "Enabled")
	case inventory.UpdateReplace:
		if lc.explicit(inventory.UpdatePolicy) {
			warn(Flux, inventory.UpdatePolicy, "update-policy replace (Flux always uses server-side apply)")
		}
	}
	switch lc.delete {
	case inventory.DeleteOrphan, inventory.DeleteOrphanOnApply:
		setIfAbsent(obj, FluxPrune, "Disabled")
	case inventory.DeleteOrphanOnDelete:
		warn(Flux, inventory.DeletePolicy, "delete-policy orphan-on-delete per object (only the Kustomization's deletionPolicy: Orphan)")
	}
	if lc.adoption != inventory.AdoptionIfUnowned && lc.explicit(inventory.AdoptionPolicy) {
		warn(Flux, inventory.AdoptionPolicy, "adoption-policy %s (Flux takes over existing objects)", lc.adoption)
	}
	if lc.deleteOrder != 0 && lc.explicit(inventory.DeleteOrder) {
		warn(Flux, inventory.DeleteOrder, "delete-order %d (Flux prunes without order)", lc.deleteOrder)
	}
	if lc.purgeOrder != nil {
		warn(Flux, inventory.PurgeOrder, "purge-order %d (Flux re-creates deleted objects)", *lc.purgeOrder)
	}
}

func setIfAbsent(obj *manifest.Object, key, value string) {
	if _, ok := obj.Annotation(key); !ok {
		obj.SetAnnotation(key, value)
	}
}

// mergeSyncOptions adds options whose key the object does not set yet;
// the object's own options come first and win.
func mergeSyncOptions(obj *manifest.Object, add []string) {
	cur, _ := obj.Annotation(ArgoSyncOptions)
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
		obj.SetAnnotation(ArgoSyncOptions, strings.Join(out, ","))
	}
}
