package render

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/wavesmith/wavesmith/internal/parallel"
	"github.com/wavesmith/wavesmith/manifest"
)

// ErrAPIRules: a name or a field breaks a rule the API server enforces;
// errors wrapping it also wrap manifest.ErrInvalid.
var ErrAPIRules = errors.New("refused by the API server's rules")

// validateNames checks every emitted object against the API server's own
// rules (apimachinery's validation): metadata.name per kind, the
// namespace, and, where the object's map is still at hand, label keys
// and values and annotation keys and total size after decoration. Each
// error names the file, the object and the field. A generated child's
// kind, name and namespace were checked with its metadata before it was
// decorated (checkMetadata, or when the record it was taken from was
// made), and decoration changes none of them: they are not checked again.
func validateNames(items []*Item) error {
	// On all cores: the errors are sorted in the end (sortedJoin), so
	// the order they are found in does not matter.
	var mu sync.Mutex
	var errs []error
	parallel.Do(len(items), func(i int) {
		it := items[i]
		var vs []violation
		if it.Role != Child {
			vs = nameViolations(it.Key)
		}
		if it.Object.Map != nil { // nil: a discarded child, whose map checkMetadata saw
			vs = append(vs, metadataViolations(it.Object)...)
		}
		if len(vs) == 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, v := range vs {
			errs = append(errs, it.fieldError(v.field, apiError(v.msgs)))
		}
	})
	return sortedJoin(errs)
}

// violation is a field and what is wrong with it.
type violation struct {
	field string
	msgs  []string
}

func apiError(msgs []string) error {
	return fmt.Errorf("%w: %w: %s", manifest.ErrInvalid, ErrAPIRules, strings.Join(msgs, "; "))
}

// nameFunc returns the API server's rule for the metadata.name of a kind:
// Service a DNS-1035 label, Namespace a DNS-1123 label, the RBAC and
// flow-control kinds a path segment, everything else (custom resources
// too) a DNS-1123 subdomain.
func nameFunc(group, kind string) apivalidation.ValidateNameFunc {
	switch group + "/" + kind {
	case "/Service":
		return apivalidation.NameIsDNS1035Label
	case "/Namespace":
		return apivalidation.ValidateNamespaceName
	case "rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/ClusterRole",
		"rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRoleBinding",
		"flowcontrol.apiserver.k8s.io/FlowSchema", "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration":
		return pathSegmentName
	}
	return apivalidation.NameIsDNSSubdomain
}

// nameViolations checks the name and the namespace of k: by hand
// (validfast.go), and by apimachinery's rules for what the hand-written
// checks refuse.
func nameViolations(k manifest.Key) []violation {
	if okKind(k.Kind) && (k.Group == "" || okDNS1123Subdomain(k.Group)) && okName(k.Group, k.Kind, k.Name) &&
		(k.Namespace == "" || okDNS1123Label(k.Namespace)) {
		return nil
	}
	return nameViolationsFull(k)
}

func nameViolationsFull(k manifest.Key) []violation {
	var out []violation
	// The API server serves a kind under its lower-case plural, a DNS-1035
	// label, and a group under a DNS-1123 subdomain (apiextensions'
	// validation of CRD names): anything else is no type it can serve,
	// and would name paths of the tree.
	if msgs := validation.IsDNS1035Label(strings.ToLower(k.Kind)); len(msgs) > 0 {
		out = append(out, violation{"kind", quoted(k.Kind, msgs)})
	}
	if k.Group != "" {
		if msgs := validation.IsDNS1123Subdomain(k.Group); len(msgs) > 0 {
			out = append(out, violation{"apiVersion", quoted(k.Group, append([]string{"the group"}, msgs...))})
		}
	}
	if msgs := nameFunc(k.Group, k.Kind)(k.Name, false); len(msgs) > 0 {
		out = append(out, violation{"metadata.name", quoted(k.Name, msgs)})
	}
	if k.Namespace != "" {
		if msgs := apivalidation.ValidateNamespaceName(k.Namespace, false); len(msgs) > 0 {
			out = append(out, violation{"metadata.namespace", quoted(k.Namespace, msgs)})
		}
	}
	return out
}

func quoted(v string, msgs []string) []string {
	if len(v) > 80 {
		v = v[:80] + "..."
	}
	return append([]string{fmt.Sprintf("%q", v)}, msgs...)
}

// metadataViolations checks labels and annotations; their values are
// strings (checkMetadata). As nameViolations: by hand, then by
// apimachinery's rules when the hand-written checks refuse.
func metadataViolations(o *manifest.Object) []violation {
	if okMetadata(o) {
		return nil
	}
	return metadataViolationsFull(o)
}

// okMetadata reports whether apimachinery's rules accept o's labels and
// annotations (keys, values, the annotations' total size).
func okMetadata(o *manifest.Object) bool {
	meta, _ := o.Map["metadata"].(map[string]any) // read once: o.Labels(), o.Annotations()
	labels, _ := meta["labels"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	for k, v := range labels {
		if s, ok := v.(string); ok && (!ownKey(k) && !okLabelKey(k) || !okLabelValue(s)) {
			return false
		}
	}
	size := 0
	for k, v := range annotations {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if !ownKey(k) && !okAnnotationKey(k) {
			return false
		}
		size += len(k) + len(s)
	}
	return size <= apivalidation.TotalAnnotationSizeLimitB
}

func metadataViolationsFull(o *manifest.Object) []violation {
	var out []violation
	if labels := stringMap(o.Labels()); len(labels) > 0 {
		out = append(out, fieldViolations(metav1validation.ValidateLabels(labels, field.NewPath("metadata", "labels")))...)
	}
	if ann := stringMap(o.Annotations()); len(ann) > 0 {
		out = append(out, fieldViolations(apivalidation.ValidateAnnotations(ann, field.NewPath("metadata", "annotations")))...)
	}
	return out
}

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// fieldViolations turns apimachinery's field errors into violations, in
// a stable order. The field path is written as manifest does
// (metadata.labels.app.kubernetes.io/name).
func fieldViolations(list field.ErrorList) []violation {
	out := make([]violation, 0, len(list))
	for _, e := range list {
		f := strings.NewReplacer("[", ".", "]", "").Replace(e.Field)
		msg := e.ErrorBody()
		out = append(out, violation{f, []string{msg}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].field < out[j].field })
	return out
}

// objectViolations checks what the API server checks of one object
// before it is decorated: its name per kind, its namespace, its labels
// and annotations, the hosts and paths of an Ingress and the host and
// path of a Route.
func objectViolations(o *manifest.Object) []violation {
	out := nameViolations(o.Key())
	out = append(out, metadataViolations(o)...)
	switch o.Group() + "/" + o.Kind() {
	case "networking.k8s.io/Ingress", "extensions/Ingress":
		out = append(out, ingressViolations(o)...)
	case "route.openshift.io/Route":
		out = append(out, routeViolations(o)...)
	}
	return out
}

// ingressViolations checks spec.rules[].host, spec.tls[].hosts[] and
// spec.rules[].http.paths[].path as the API server's Ingress validation
// does.
func ingressViolations(o *manifest.Object) []violation {
	var out []violation
	spec, _ := o.Map["spec"].(map[string]any)
	rules, _ := spec["rules"].([]any)
	for i, r := range rules {
		rule, _ := r.(map[string]any)
		if host, ok := rule["host"].(string); ok && host != "" {
			if msgs := hostViolations(host); len(msgs) > 0 {
				out = append(out, violation{fmt.Sprintf("spec.rules[%d].host", i), quoted(host, msgs)})
			}
		}
		http, _ := rule["http"].(map[string]any)
		paths, _ := http["paths"].([]any)
		for j, p := range paths {
			pm, _ := p.(map[string]any)
			path, _ := pm["path"].(string)
			pathType, _ := pm["pathType"].(string)
			if msgs := ingressPathViolations(path, pathType); len(msgs) > 0 {
				out = append(out, violation{fmt.Sprintf("spec.rules[%d].http.paths[%d].path", i, j), quoted(path, msgs)})
			}
		}
	}
	tls, _ := spec["tls"].([]any)
	for i, t := range tls {
		tm, _ := t.(map[string]any)
		hosts, _ := tm["hosts"].([]any)
		for j, h := range hosts {
			if host, ok := h.(string); ok {
				if msgs := hostViolations(host); len(msgs) > 0 {
					out = append(out, violation{fmt.Sprintf("spec.tls[%d].hosts[%d]", i, j), quoted(host, msgs)})
				}
			}
		}
	}
	return out
}

// hostViolations: a DNS-1123 subdomain or a wildcard one, not an IP
// address.
func hostViolations(host string) []string {
	if _, err := netip.ParseAddr(host); err == nil {
		return []string{"must be a DNS name, not an IP address"}
	}
	if strings.Contains(host, "*") {
		return validation.IsWildcardDNS1123Subdomain(host)
	}
	return validation.IsDNS1123Subdomain(host)
}

// ingressPathViolations: an absolute path; for Exact and Prefix also no
// "//", "/./", "/../", encoded slashes or a trailing "/." or "/..".
func ingressPathViolations(path, pathType string) []string {
	if path == "" && pathType == "ImplementationSpecific" {
		return nil
	}
	if !strings.HasPrefix(path, "/") {
		return []string{"must be an absolute path"}
	}
	if pathType == "Exact" || pathType == "Prefix" {
		for _, seq := range []string{"//", "/./", "/../", "%2f", "%2F"} {
			if strings.Contains(path, seq) {
				return []string{fmt.Sprintf("must not contain '%s'", seq)}
			}
		}
		for _, suf := range []string{"/..", "/."} {
			if strings.HasSuffix(path, suf) {
				return []string{fmt.Sprintf("cannot end with '%s'", suf)}
			}
		}
	}
	return nil
}

// routeViolations checks spec.host (a DNS-1123 subdomain of labels of at
// most 63 characters) and spec.path (starting with '/').
func routeViolations(o *manifest.Object) []violation {
	var out []violation
	spec, _ := o.Map["spec"].(map[string]any)
	if host, ok := spec["host"].(string); ok && host != "" {
		msgs := hostViolations(host)
		for label := range strings.SplitSeq(host, ".") {
			if len(label) > validation.DNS1123LabelMaxLength {
				msgs = append(msgs, fmt.Sprintf("label %q is longer than %d characters", label, validation.DNS1123LabelMaxLength))
			}
		}
		if len(msgs) > 0 {
			out = append(out, violation{"spec.host", quoted(host, msgs)})
		}
	}
	if path, ok := spec["path"].(string); ok && path != "" && !strings.HasPrefix(path, "/") {
		out = append(out, violation{"spec.path", quoted(path, []string{"must start with '/'"})})
	}
	return out
}

// pathSegmentName is the API server's rule for names that become a path
// segment (RBAC objects, flow-control objects): not "." or "..", and no
// "/" or "%".
func pathSegmentName(name string, prefix bool) []string {
	if !prefix && (name == "." || name == "..") {
		return []string{fmt.Sprintf("may not be '%s'", name)}
	}
	var msgs []string
	for _, illegal := range []string{"/", "%"} {
		if strings.Contains(name, illegal) {
			msgs = append(msgs, fmt.Sprintf("may not contain '%s'", illegal))
		}
	}
	return msgs
}
