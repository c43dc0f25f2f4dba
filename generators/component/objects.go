package component

import (
	"strconv"
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/manifest"
)

// clusterScoped lists the built-in cluster-scoped kinds by group/Kind.
var clusterScoped = map[string]bool{
	"/Namespace": true, "/Node": true, "/PersistentVolume": true, "/ComponentStatus": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"apiextensions.k8s.io/CustomResourceDefinition": true, "apiregistration.k8s.io/APIService": true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":     true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration":   true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": true,
	"storage.k8s.io/StorageClass":                                   true, "storage.k8s.io/CSIDriver": true, "storage.k8s.io/CSINode": true,
	"storage.k8s.io/VolumeAttachment": true, "scheduling.k8s.io/PriorityClass": true,
	"node.k8s.io/RuntimeClass": true, "networking.k8s.io/IngressClass": true,
	"policy/PodSecurityPolicy": true, "certificates.k8s.io/CertificateSigningRequest": true,
	"flowcontrol.apiserver.k8s.io/FlowSchema": true, "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration": true,
}

// SetNamespaces gives namespaced objects without a namespace the placement
// namespace. Scope comes from the built-in kinds and from the CRDs among
// objs; unknown kinds count as namespaced, as kubectl assumes.
func SetNamespaces(objs []*manifest.Object, namespace string) {
	cluster := map[string]bool{}
	for _, o := range objs {
		if o.Kind() == "CustomResourceDefinition" && o.Group() == "apiextensions.k8s.io" {
			spec, _ := o.Map["spec"].(map[string]any)
			names, _ := spec["names"].(map[string]any)
			g, _ := spec["group"].(string)
			k, _ := names["kind"].(string)
			if scope, _ := spec["scope"].(string); scope == "Cluster" {
				cluster[g+"/"+k] = true
			}
		}
	}
	for _, o := range objs {
		gk := o.Group() + "/" + o.Kind()
		if o.Namespace() == "" && !clusterScoped[gk] && !cluster[gk] {
			o.SetNamespace(namespace)
		}
	}
}

// Defaults returns the lifecycle defaults a Component sets for its
// objects: spec.wave and spec.policies, and its status hints are applied
// by StatusHints.
func Defaults(c *v1alpha1.Component) map[string]string {
	d := map[string]string{}
	if c.Spec.Wave != nil {
		d[inventory.ApplyOrder] = strconv.Itoa(int(*c.Spec.Wave))
	}
	if p := c.Spec.Policies; p != nil {
		for k, v := range map[string]string{inventory.AdoptionPolicy: p.Adoption, inventory.UpdatePolicy: p.Update, inventory.DeletePolicy: p.Delete, inventory.ReconcilePolicy: p.Reconcile} {
			if v != "" {
				d[k] = v
			}
		}
	}
	return d
}

// StatusHints writes spec.statusHints on the objects of the matching kind
// that do not carry a hint of their own.
func StatusHints(c *v1alpha1.Component, objs []*manifest.Object) {
	for _, h := range c.Spec.StatusHints {
		for _, o := range objs {
			if o.Kind() == h.Kind && (h.Group == "" || h.Group == o.Group()) {
				if _, ok := o.Annotation(inventory.StatusHint); !ok {
					o.SetAnnotation(inventory.StatusHint, h.Hint)
				}
			}
		}
	}
}

// CheckNoNativeAnnotations refuses objects from a chart or kustomization
// that set wavesmith.io/* annotations themselves, as component-operator-
// runtime refuses its own prefix in Helm charts. allowed names exceptions.
func CheckNoNativeAnnotations(o *manifest.Object, allowed ...string) error {
	for k := range o.Annotations() {
		if !strings.HasPrefix(k, inventory.Prefix) {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return o.FieldError("metadata.annotations."+k, errNative)
		}
	}
	return nil
}
