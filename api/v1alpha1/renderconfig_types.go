package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +kubebuilder:object:generate=false

// RenderConfig holds the options of a render. It is the functionConfig of
// the KRM function; a ConfigMap with the same keys (flattened: platform,
// namespace, wave, adoptionPolicy, ..., dialects as a comma-separated list)
// works too.
type RenderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RenderConfigSpec `json:"spec,omitempty"`
}

// RenderConfigSpec are the render options.
type RenderConfigSpec struct {
	// Platform is kubernetes (Ingress) or openshift (Route).
	Platform string `json:"platform,omitempty"`
	// Namespace for specs and namespaced objects that have none.
	Namespace string `json:"namespace,omitempty"`
	// Wave is the default apply-order.
	Wave *int32 `json:"wave,omitempty"`
	// Policies are the default lifecycle policies.
	Policies *Policies `json:"policies,omitempty"`
	// Dialects are the engines whose annotations are written: argocd, flux.
	Dialects []string `json:"dialects,omitempty"`
	// KubeVersion and APIVersions are the capabilities offered to charts
	// and templates.
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
}
