package render

import (
	"cmp"
	"slices"
	"strings"

	"github.com/wavesmith/wavesmith/generators"
)

// kindOrder is the order of kinds within a wave: Namespaces and CRDs
// first, then the order Argo CD and Helm apply kinds in, then kinds this
// list does not know (custom resources, by group and kind), and webhook
// configurations last, once the services they call exist.
var kindOrder = map[string]int{}

const (
	rankUnknown = 1000
	rankManaged = 1500 // instances of managed types: after the regular objects of their wave
	rankLast    = 2000
)

func init() {
	for i, k := range []string{
		"Namespace", "CustomResourceDefinition",
		"NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
		"ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume",
		"PersistentVolumeClaim", "PriorityClass", "RuntimeClass", "ClusterRole", "ClusterRoleList",
		"ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
		"Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
		"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "Route",
		"APIService",
	} {
		kindOrder[k] = i
	}
	kindOrder["MutatingWebhookConfiguration"] = rankLast
	kindOrder["ValidatingWebhookConfiguration"] = rankLast + 1
}

func kindRank(kind string) int {
	if r, ok := kindOrder[kind]; ok {
		return r
	}
	return rankUnknown
}

// compareItems orders by wave, kind rank, group and kind (for kinds of the
// same rank), namespace, name.
func compareItems(a, b *Item) int {
	if c := cmp.Compare(a.Wave, b.Wave); c != 0 {
		return c
	}
	ka, kb := &a.Key, &b.Key
	if c := cmp.Compare(a.rank, b.rank); c != 0 {
		return c
	}
	if c := cmp.Compare(ka.Group, kb.Group); c != 0 {
		return c
	}
	if c := cmp.Compare(ka.Kind, kb.Kind); c != 0 {
		return c
	}
	if c := cmp.Compare(ka.Namespace, kb.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(ka.Name, kb.Name)
}

func sortItems(items []*Item) {
	slices.SortStableFunc(items, compareItems)
}

// markManagedInstances ranks the instances of managed types after the
// regular objects of their wave, as component-operator-runtime applies
// them once their operator runs: types defined by a CRD in the set, and
// those a spec names (generators.TypeManager, e.g. a Component's
// spec.additionalManagedTypes).
func markManagedInstances(res *Result, reg generators.Registry) {
	defined := map[string]bool{}
	for _, it := range res.Items {
		if it.defines != "" {
			defined[it.defines] = true
		}
	}
	matchers := make([][]generators.TypePattern, len(res.Specs))
	for i, s := range res.Specs {
		g, _ := reg.Lookup(s.Object)
		if tm, ok := g.(generators.TypeManager); ok {
			matchers[i] = tm.ManagedTypes(s.Object)
		}
	}
	for _, it := range res.Items {
		managed := defined[it.Key.Group+"/"+it.Key.Kind]
		if !managed && it.Role == Child {
			for _, m := range matchers[it.Spec] {
				managed = managed || matchType(m.Group, it.Key.Group) && (m.Kind == "*" || m.Kind == it.Key.Kind)
			}
		}
		if managed && it.rank < rankManaged {
			it.rank = rankManaged
		}
	}
}

// matchType matches a group against "*", "*.suffix" (one or more labels
// before the suffix) or an exact group.
func matchType(pattern, group string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasPrefix(pattern, "*."):
		return strings.HasSuffix(group, pattern[1:]) && len(group) > len(pattern)-1
	}
	return pattern == group
}
