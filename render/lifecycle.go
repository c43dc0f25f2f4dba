package render

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// lifecycle is the resolved set of waves and policies of one object.
type lifecycle struct {
	gitops.Lifecycle
}

// explicitKeys is a set of lifecycleKeys, by the bits of their indexes:
// the keys whose value came from the object or its spec.
type explicitKeys uint

// mark adds lifecycleKeys[i] when its value came from the object or its
// spec.
func (e *explicitKeys) mark(i int, from origin) {
	if from == fromObject || from == fromSpec {
		*e |= 1 << i
	}
}

// explicitSets holds the Lifecycle.Explicit of each set of keys met, made
// once and shared by every object with that set (the dialects only read
// it): a map per object was 6 MB and 50,000 allocations at 10,000
// Kaotos, whose children all have the same set.
var explicitSets = make([]atomic.Pointer[map[string]bool], 1<<len(lifecycleKeys))

// explicitMap is Lifecycle.Explicit of e: nil when empty (a missing key
// reads false), else the shared map holding e's keys.
func explicitMap(e explicitKeys) map[string]bool {
	if e == 0 {
		return nil
	}
	if m := explicitSets[e].Load(); m != nil {
		return *m
	}
	m := make(map[string]bool, bits.OnesCount(uint(e)))
	for i, k := range lifecycleKeys {
		if e&(1<<i) != 0 {
			m[k] = true
		}
	}
	explicitSets[e].CompareAndSwap(nil, &m)
	return *explicitSets[e].Load()
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
	case inventory.Hook:
		return checkHook(v)
	}
	allowed, ok := inventory.Allowed[key]
	if !ok {
		return "", fmt.Errorf("%w: unknown wavesmith annotation", ErrAnnotation)
	}
	nv := inventory.PolicyValue(strings.TrimSpace(v))
	for _, a := range allowed {
		if nv == a {
			return nv, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not one of %s", ErrAnnotation, v, strings.Join(allowed, ", "))
}

func checkStatusHint(v string) error {
	if err := inventory.ValidateStatusHint(v); err != nil {
		return fmt.Errorf("%w: %w", ErrAnnotation, err)
	}
	return nil
}

// checkHook validates a wavesmith.io/hook value (inventory.ValidateHook)
// and returns it sorted.
func checkHook(v string) (string, error) {
	hooks := strings.Split(strings.ReplaceAll(v, " ", ""), ",")
	sort.Strings(hooks)
	nv := strings.Join(hooks, ",")
	if err := inventory.ValidateHook(nv); err != nil {
		return "", fmt.Errorf("%w: %v", ErrAnnotation, err)
	}
	return nv, nil
}

// checkKnownAnnotations refuses wavesmith.io/* annotations wavesmith does
// not know (a misspelt wavesmith.io/aply-order would otherwise be ignored
// and leave the object in the default wave), suggesting the closest known
// one.
func checkKnownAnnotations(obj *manifest.Object) error {
	var errs []error
	keys := make([]string, 0, len(obj.Annotations()))
	for k := range obj.Annotations() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, inventory.Prefix) || isKnownAnnotation(k) {
			continue
		}
		msg := "unknown wavesmith annotation"
		if s := closest(k, inventory.Known); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		errs = append(errs, obj.FieldError(annotationPath(k), fmt.Errorf("%w: %s", ErrAnnotation, msg)))
	}
	return manifest.Join(errs)
}

func isKnownAnnotation(k string) bool {
	for _, a := range inventory.Known {
		if a == k {
			return true
		}
	}
	return false
}

// closest returns the candidate nearest to s by edit distance, if near
// enough to be a likely typo.
func closest(s string, candidates []string) string {
	best, bestD := "", len(s)/2+1
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// order is an apply-order known as a number before resolution: an
// object's own (its wavesmith.io/apply-order, read once, or an engine's
// wave taken as it, or where its generator placed it), or the wave of a
// spec's objects.
type order struct {
	n   int
	set bool
	// err: the object's annotation does not parse; resolve reports it.
	err error
}

// readApplyOrder reads obj's own wavesmith.io/apply-order: the one place
// a written apply-order is parsed (an absent or non-string value is none;
// checkMetadata refuses the latter).
func readApplyOrder(obj *manifest.Object) order {
	v, ok := obj.Annotation(inventory.ApplyOrder)
	if !ok {
		return order{}
	}
	n, err := inventory.ParseOrder(strings.TrimSpace(v))
	if err != nil {
		return order{err: obj.FieldError(annotationPath(inventory.ApplyOrder), fmt.Errorf("%w: %v", ErrAnnotation, err))}
	}
	return order{n: n, set: true}
}

// checkOrder refuses a wave outside -32768..32767 that the plan or a
// generator's offset computed, with the message of a written one.
func checkOrder(n int) error {
	if n >= inventory.MinOrder && n <= inventory.MaxOrder {
		return nil
	}
	_, err := inventory.ParseOrder(strconv.Itoa(n))
	return fmt.Errorf("%w: %v", ErrAnnotation, err)
}

// adoptEngineWaves takes an object's wave written in an engine's own
// vocabulary (a chart's argocd.argoproj.io/sync-wave) as its apply-order
// when it has none (own), so that every engine applies it in that wave;
// one that contradicts its apply-order is an error. The adopted wave is
// written as the object's wavesmith.io/apply-order too (an input kept as
// written shows it).
func adoptEngineWaves(obj *manifest.Object, engines []gitops.Dialect, own order) (order, error) {
	for _, d := range engines {
		w, ok, err := d.Wave(obj)
		if !ok {
			continue
		}
		if err != nil {
			return own, obj.FieldError("metadata.annotations", fmt.Errorf("%w: %s wave: %v", ErrAnnotation, d.Name(), err))
		}
		switch {
		case own.err != nil: // resolve reports it
		case !own.set:
			own = order{n: w, set: true}
			obj.SetAnnotation(inventory.ApplyOrder, strconv.Itoa(w))
		case own.n != w:
			return own, obj.FieldError(annotationPath(inventory.ApplyOrder), fmt.Errorf("%w: apply-order %d contradicts the %s wave %d the object also sets; keep one of them", ErrAnnotation, own.n, d.Name(), w))
		}
	}
	return own, nil
}

// waves are what is known of an object's orders before resolution, as
// numbers: its own apply-order, the wave of its spec's objects (for a
// child), and a purge-order its generator placed.
type waves struct {
	own, spec order
	purge     *int
}

// resolve computes the lifecycle of obj: its own annotations (and waves),
// then the spec's defaults, then the render options, then wavesmith's
// defaults.
func resolve(obj *manifest.Object, w waves, spec map[string]string, opts *Options) (lifecycle, error) {
	var lc lifecycle
	var explicit explicitKeys
	own := obj.Annotations()
	var errs []error
	for i, key := range lifecycleKeys {
		if key == inventory.ApplyOrder {
			var o order
			var from origin
			switch {
			case w.own.err != nil:
				errs = append(errs, w.own.err)
				continue
			case w.own.set:
				o, from = w.own, fromObject
			case w.spec.set:
				o, from = w.spec, fromSpec
			case opts.wave.set:
				o, from = opts.wave, fromConfig
			default:
				continue
			}
			explicit.mark(i, from)
			if err := checkOrder(o.n); err != nil {
				errs = append(errs, obj.FieldError(annotationPath(key), err))
				continue
			}
			lc.ApplyOrder = o.n
			continue
		}
		if key == inventory.PurgeOrder && w.purge != nil {
			n := *w.purge
			explicit.mark(i, fromObject)
			if err := checkOrder(n); err != nil {
				errs = append(errs, obj.FieldError(annotationPath(key), err))
				continue
			}
			lc.PurgeOrder = &n
			continue
		}
		var v string
		var have bool
		var from origin
		if s, ok := own[key]; ok {
			str, isStr := s.(string)
			if !isStr {
				errs = append(errs, obj.FieldError(annotationPath(key), fmt.Errorf("%w: annotation values must be strings", ErrAnnotation)))
				continue
			}
			v, have, from = str, true, fromObject
		} else if s, ok := spec[key]; ok {
			v, have, from = s, true, fromSpec
		} else if s, ok := opts.Defaults[key]; ok {
			v, have, from = s, true, fromConfig
		}
		if !have {
			continue
		}
		explicit.mark(i, from)
		nv, err := checkLifecycleValue(key, v)
		if err != nil {
			errs = append(errs, obj.FieldError(annotationPath(key), err))
			continue
		}
		switch key {
		case inventory.DeleteOrder:
			lc.DeleteOrder, _ = strconv.Atoi(nv)
		case inventory.PurgeOrder:
			n, _ := strconv.Atoi(nv)
			lc.PurgeOrder = &n
		case inventory.AdoptionPolicy:
			lc.Adoption = nv
		case inventory.ReconcilePolicy:
			lc.Reconcile = nv
		case inventory.UpdatePolicy:
			lc.Update = nv
		case inventory.DeletePolicy:
			lc.Delete = nv
		case inventory.StatusHint:
			lc.StatusHint = nv
		}
	}
	if h, ok := obj.Annotation(inventory.Hook); ok {
		nv, err := checkHook(h)
		if err != nil {
			errs = append(errs, obj.FieldError(annotationPath(inventory.Hook), err))
		}
		lc.Hook = nv
	}
	for _, d := range [...]struct {
		key string
		p   *string
	}{
		{inventory.AdoptionPolicy, &lc.Adoption}, {inventory.ReconcilePolicy, &lc.Reconcile},
		{inventory.UpdatePolicy, &lc.Update}, {inventory.DeletePolicy, &lc.Delete},
	} {
		if *d.p == "" {
			*d.p = inventory.Allowed[d.key][0]
		}
	}
	if lc.PurgeOrder != nil && isManagedTypeKind(obj) {
		errs = append(errs, obj.FieldError(annotationPath(inventory.PurgeOrder), fmt.Errorf("%w: purge-order is not allowed on a %s", ErrAnnotation, obj.Kind())))
	}
	lc.Explicit = explicitMap(explicit)
	return lc, errors.Join(errs...)
}

func isManagedTypeKind(obj *manifest.Object) bool {
	switch obj.Key().Group + "/" + obj.Kind() {
	case "/Namespace", "apiextensions.k8s.io/CustomResourceDefinition", "apiregistration.k8s.io/APIService":
		return true
	}
	return false
}

// annotationPath is the field path of an annotation:
// metadata.annotations[wavesmith.io/update-policy].
func annotationPath(key string) string {
	return manifest.KeyPath("metadata.annotations", key)
}

// checkLifecycleAnnotations checks the values of the lifecycle annotations
// an object carries itself (waves, policies, status hint, hook), once, at
// the object's own file and line: on a spec they are the defaults of its
// children, which must not each report them again.
func checkLifecycleAnnotations(obj *manifest.Object) error {
	own := obj.Annotations()
	var errs []error
	for _, key := range append(lifecycleKeys[:len(lifecycleKeys):len(lifecycleKeys)], inventory.Hook) {
		v, ok := own[key].(string) // a value that is not a string: checkMetadata
		if !ok {
			continue
		}
		if _, err := checkLifecycleValue(key, v); err != nil {
			errs = append(errs, obj.FieldError(annotationPath(key), err))
		}
	}
	return manifest.Join(errs)
}

// annotate writes the native annotations and those of each dialect, and
// returns a warning for every explicit policy an engine cannot express.
func (lc *lifecycle) annotate(obj *manifest.Object, opts *Options, specDigest *specDigest) []manifest.Warning {
	setAnnotation(obj, inventory.ApplyOrder, strconv.Itoa(lc.ApplyOrder))
	setAnnotation(obj, inventory.DeleteOrder, strconv.Itoa(lc.DeleteOrder))
	if lc.PurgeOrder != nil {
		setAnnotation(obj, inventory.PurgeOrder, strconv.Itoa(*lc.PurgeOrder))
	}
	setAnnotation(obj, inventory.AdoptionPolicy, lc.Adoption)
	setAnnotation(obj, inventory.ReconcilePolicy, lc.Reconcile)
	setAnnotation(obj, inventory.UpdatePolicy, lc.Update)
	setAnnotation(obj, inventory.DeletePolicy, lc.Delete)
	if lc.StatusHint != "" {
		setAnnotation(obj, inventory.StatusHint, lc.StatusHint)
	}
	if lc.Hook != "" {
		setAnnotation(obj, inventory.Hook, lc.Hook)
	}
	if lc.Reconcile == inventory.ReconcileOnObjectOrComponentChange && specDigest != nil {
		// Every engine re-applies an object whose manifest changed: bake
		// the spec's digest in, so a spec change changes the object.
		obj.SetAnnotation(inventory.SpecDigest, specDigest.get())
	}
	var warns []manifest.Warning
	for _, d := range opts.Dialects {
		warns = append(warns, d.Annotate(obj, &lc.Lifecycle)...)
	}
	return warns
}

// stripApplierMarkers removes the markers the appliers of every engine set
// themselves (Argo CD's tracking id, Flux's owner labels), and returns a
// warning for each one removed.
func stripApplierMarkers(obj *manifest.Object, engines []markers) []manifest.Warning {
	var warns []manifest.Warning
	for _, e := range engines {
		for _, a := range e.annotations {
			if _, ok := obj.Annotation(a); ok {
				obj.DeleteAnnotation(a)
				warns = append(warns, obj.Warn(annotationPath(a), "removed: the applier sets this marker itself"))
			}
		}
		for _, l := range e.labels {
			if _, ok := obj.Labels()[l]; ok {
				obj.DeleteLabel(l)
				warns = append(warns, obj.Warn("metadata.labels."+l, "removed: the applier sets this marker itself"))
			}
		}
	}
	return warns
}

// defaultWarnings reports, once, render-wide defaults an engine cannot
// express.
func defaultWarnings(opts *Options) []manifest.Warning {
	var w []manifest.Warning
	for _, d := range opts.Dialects {
		w = append(w, d.DefaultWarnings(opts.Defaults)...)
	}
	return w
}

// CheckPolicy validates a lifecycle value given for a native annotation
// (wavesmith.io/update-policy, ...) and returns it normalised (CamelCase
// values become kebab-case).
func CheckPolicy(key, v string) (string, error) { return checkLifecycleValue(key, v) }

// boxedValues are the annotation values most objects share (policies,
// small orders), each stored in an interface once: a string set into a
// map[string]any is otherwise boxed anew for every object.
var boxedValues = func() map[string]any {
	m := map[string]any{}
	for _, vs := range inventory.Allowed {
		for _, v := range vs {
			m[v] = v
		}
	}
	for i := -20; i <= 100; i++ {
		m[strconv.Itoa(i)] = strconv.Itoa(i)
	}
	return m
}()

// setAnnotation is obj.SetAnnotation with a shared box for common values.
func setAnnotation(obj *manifest.Object, key, value string) {
	if a := obj.Annotations(); a != nil {
		if v, ok := boxedValues[value]; ok {
			a[key] = v
			return
		}
	}
	obj.SetAnnotation(key, value)
}
