package render

import (
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
)

// Validating a name, a label or an annotation key with apimachinery's
// rules runs regular expressions, and a render validates tens of
// thousands of strings (every child of 10,000 specs carries its own name
// and instance label): measured, a fifth of a large render's CPU. The
// checks below accept exactly what those rules accept, by hand, without
// allocating; a string they refuse is checked again by apimachinery's own
// rules, so a refusal and its message are exactly apimachinery's.
// TestFastRulesAgree compares both on every string of a generated set.

func isAlnumLower(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isAlnumLower(c) || c >= 'A' && c <= 'Z' }

// okDNS1123Label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
func okDNS1123Label(s string) bool {
	return len(s) <= 63 && okLabelPart(s)
}

// okLabelPart: [a-z0-9]([-a-z0-9]*[a-z0-9])?, any length.
func okLabelPart(s string) bool {
	if s == "" || !isAlnumLower(s[0]) || !isAlnumLower(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnumLower(c) && c != '-' {
			return false
		}
	}
	return true
}

// okDNS1123Subdomain: labels (of any length) joined by dots, at most 253
// characters.
func okDNS1123Subdomain(s string) bool {
	if len(s) > 253 {
		return false
	}
	for {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			return okLabelPart(s)
		}
		if !okLabelPart(s[:i]) {
			return false
		}
		s = s[i+1:]
	}
}

// okDNS1035Label: [a-z]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
func okDNS1035Label(s string) bool {
	return s != "" && s[0] >= 'a' && s[0] <= 'z' && okDNS1123Label(s)
}

// okLabelName: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63
// characters.
func okLabelName(s string) bool {
	if s == "" || len(s) > 63 || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// okLabelValue: empty or a label name.
func okLabelValue(s string) bool { return s == "" || okLabelName(s) }

// okLabelKey: a label name with an optional DNS-1123 subdomain prefix and
// "/" (a qualified name).
func okLabelKey(s string) bool {
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return okLabelName(s)
	}
	return okDNS1123Subdomain(s[:i]) && okLabelName(s[i+1:])
}

// ownKey reports whether s is one of the label and annotation keys the
// engine writes on every object (the recommended labels, wavesmith's
// annotations): valid by construction (TestOwnKeysValid), so most keys of
// most objects are checked by a comparison, not byte by byte.
func ownKey(s string) bool {
	switch s {
	case LabelName, LabelInstance, LabelComponent, LabelPartOf, LabelManagedBy,
		inventory.ApplyOrder, inventory.DeleteOrder, inventory.PurgeOrder, inventory.AdoptionPolicy,
		inventory.ReconcilePolicy, inventory.UpdatePolicy, inventory.DeletePolicy, inventory.StatusHint,
		inventory.Hook, inventory.Inventory, inventory.RenderDigest, inventory.SpecDigest:
		return true
	}
	return false
}

// ownKeys lists ownKey's keys, for TestOwnKeysValid.
var ownKeys = []string{LabelName, LabelInstance, LabelComponent, LabelPartOf, LabelManagedBy,
	inventory.ApplyOrder, inventory.DeleteOrder, inventory.PurgeOrder, inventory.AdoptionPolicy,
	inventory.ReconcilePolicy, inventory.UpdatePolicy, inventory.DeletePolicy, inventory.StatusHint,
	inventory.Hook, inventory.Inventory, inventory.RenderDigest, inventory.SpecDigest}

// okAnnotationKey: a qualified name once lower-cased.
func okAnnotationKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return okLabelKey(strings.ToLower(s))
		}
	}
	return okLabelKey(s)
}

// okName: whether nameFunc(group, kind) accepts name.
func okName(group, kind, name string) bool {
	switch group + "/" + kind {
	case "/Service":
		return okDNS1035Label(name)
	case "/Namespace":
		return okDNS1123Label(name)
	case "rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/ClusterRole",
		"rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRoleBinding",
		"flowcontrol.apiserver.k8s.io/FlowSchema", "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration":
		return len(pathSegmentName(name, false)) == 0
	}
	return okDNS1123Subdomain(name)
}

// okKind: a kind whose lower-case form is a DNS-1035 label.
func okKind(kind string) bool {
	if kind == "" || len(kind) > 63 {
		return false
	}
	c := kind[0] | 0x20 // lower case of a letter
	if c < 'a' || c > 'z' {
		return false
	}
	last := kind[len(kind)-1]
	if !isAlnum(last) {
		return false
	}
	for i := 1; i < len(kind)-1; i++ {
		if c := kind[i]; !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}
