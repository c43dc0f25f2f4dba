package inventory

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Prefix is the prefix of every native wavesmith annotation.
const Prefix = "wavesmith.io/"

// Native lifecycle annotations (the vocabulary of component-operator-runtime).
const (
	ApplyOrder      = Prefix + "apply-order"
	DeleteOrder     = Prefix + "delete-order"
	PurgeOrder      = Prefix + "purge-order"
	AdoptionPolicy  = Prefix + "adoption-policy"
	ReconcilePolicy = Prefix + "reconcile-policy"
	UpdatePolicy    = Prefix + "update-policy"
	DeletePolicy    = Prefix + "delete-policy"
	StatusHint      = Prefix + "status-hint"
	// Hook marks a Helm hook the renderer kept: a comma-separated list of
	// HookValues. Argo CD may create a post-install hook only after the
	// spec's wave is healthy, and a hook may be deleted once it succeeded.
	// A pre-delete or post-delete hook is never applied by a sync: it runs
	// when the engine deletes the application, if the engine can.
	Hook = Prefix + "hook"
)

// Known lists the wavesmith.io/* annotations an input may carry: the
// lifecycle vocabulary, and what a render writes (a rendered object fed
// back keeps them). wavesmith refuses any other; the editors' schemas
// (schemas/) list these.
var Known = []string{
	ApplyOrder, DeleteOrder, PurgeOrder,
	AdoptionPolicy, ReconcilePolicy, UpdatePolicy, DeletePolicy,
	StatusHint, Hook,
	Inventory, RenderDigest, SpecDigest,
}

// Hook values.
const (
	HookPreInstall  = "pre-install"
	HookPostInstall = "post-install"
	HookPreDelete   = "pre-delete"
	HookPostDelete  = "post-delete"
)

// HookValues lists the values a wavesmith.io/hook list may hold.
var HookValues = []string{HookPreInstall, HookPostInstall, HookPreDelete, HookPostDelete}

// DeleteOnly reports whether a wavesmith.io/hook value names only
// pre-delete and post-delete: an object no sync applies.
func DeleteOnly(hook string) bool {
	if hook == "" {
		return false
	}
	for _, h := range strings.Split(hook, ",") {
		if h = strings.TrimSpace(h); h != HookPreDelete && h != HookPostDelete {
			return false
		}
	}
	return true
}

// Annotations written on the rendered copy of a spec.
const (
	// Inventory lists the spec's children, one Entry per line, sorted.
	Inventory = Prefix + "inventory"
	// RenderDigest is "sha256:<hex>" of the spec's rendered children.
	RenderDigest = Prefix + "render-digest"
	// SpecDigest is written on children whose reconcile-policy is
	// on-object-or-component-change: it changes with the spec, so every
	// engine re-applies the child when the spec changes.
	SpecDigest = Prefix + "spec-digest"
)

// Policy values.
const (
	AdoptionNever     = "never"
	AdoptionIfUnowned = "if-unowned"
	AdoptionAlways    = "always"

	ReconcileOnObjectChange            = "on-object-change"
	ReconcileOnObjectOrComponentChange = "on-object-or-component-change"
	ReconcileOnce                      = "once"

	UpdateReplace     = "replace"
	UpdateSSAMerge    = "ssa-merge"
	UpdateSSAOverride = "ssa-override"
	UpdateRecreate    = "recreate"

	DeleteDelete         = "delete"
	DeleteOrphan         = "orphan"
	DeleteOrphanOnApply  = "orphan-on-apply"
	DeleteOrphanOnDelete = "orphan-on-delete"
)

// Allowed lists the values each enumerated policy annotation accepts, the
// first being the default.
var Allowed = map[string][]string{
	AdoptionPolicy:  {AdoptionIfUnowned, AdoptionNever, AdoptionAlways},
	ReconcilePolicy: {ReconcileOnObjectChange, ReconcileOnObjectOrComponentChange, ReconcileOnce},
	UpdatePolicy:    {UpdateSSAOverride, UpdateReplace, UpdateSSAMerge, UpdateRecreate},
	DeletePolicy:    {DeleteDelete, DeleteOrphan, DeleteOrphanOnApply, DeleteOrphanOnDelete},
}

// Policies lists the enumerated policy annotations in a fixed order.
var Policies = []string{AdoptionPolicy, ReconcilePolicy, UpdatePolicy, DeletePolicy}

// Orders lists the integer order annotations in a fixed order.
var Orders = []string{ApplyOrder, DeleteOrder, PurgeOrder}

// The range of order annotations (apply, delete and purge orders): an
// int16, as Argo CD's sync waves.
const (
	MinOrder = -1 << 15
	MaxOrder = 1<<15 - 1
)

// ParseOrder parses an order annotation value: an integer in -32768..32767.
func ParseOrder(v string) (int, error) {
	n, err := strconv.ParseInt(v, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer in -32768..32767", v)
	}
	return int(n), nil
}

// ValidateStatusHint checks a wavesmith.io/status-hint value: a
// comma-separated list of has-observed-generation, has-ready-condition and
// conditions=A;B.
func ValidateStatusHint(v string) error {
	for _, h := range strings.Split(v, ",") {
		h = strings.TrimSpace(h)
		switch {
		case h == "has-observed-generation", h == "has-ready-condition":
		case strings.HasPrefix(h, "conditions="):
			for _, c := range strings.Split(strings.TrimPrefix(h, "conditions="), ";") {
				if strings.TrimSpace(c) == "" {
					return fmt.Errorf("status hint %q has an empty condition type", h)
				}
			}
		default:
			return fmt.Errorf("status hint %q is not one of has-observed-generation, has-ready-condition, conditions=A;B", h)
		}
	}
	return nil
}

// PolicyValue reads a policy value written in CamelCase (IfUnowned, as the
// component-operator-runtime spells them) as its kebab-case spelling
// (if-unowned), the one this package's constants and the engine use; a
// value already in kebab or lower case is returned as it is.
func PolicyValue(s string) string {
	if strings.Contains(s, "-") || strings.ToLower(s) == s {
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
