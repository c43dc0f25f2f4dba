package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group, version and kind of the Kaoto resource.
const (
	Group    = "designer.kaoto.io"
	Version  = "v1alpha1"
	Kind     = "Kaoto"
	ListKind = "KaotoList"
	Plural   = "kaotoes"
)

// GroupVersion is designer.kaoto.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// APIVersion is the apiVersion string of a Kaoto resource.
var APIVersion = GroupVersion.String()

// Kaoto is the Schema for the kaotoes API.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=kaotoes,shortName=kd,categories={integration,camel}
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="The phase"
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,description="The endpoint"
type Kaoto struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KaotoSpec   `json:"spec,omitempty"`
	Status KaotoStatus `json:"status,omitempty"`
}

// KaotoSpec defines the desired state of Kaoto.
type KaotoSpec struct {
	// Image of the Kaoto designer; the default image when empty.
	Image string `json:"image,omitempty"`
	// Ingress exposes the designer. Absent means no Ingress or Route;
	// present but empty ({}) means one with defaults.
	Ingress *IngressSpec `json:"ingress,omitempty"`
}

// IngressSpec chooses host and path of the Ingress or Route.
type IngressSpec struct {
	Host string `json:"host,omitempty"`
	Path string `json:"path,omitempty"`
}

// KaotoStatus defines the observed state of Kaoto.
type KaotoStatus struct {
	Phase              string             `json:"phase"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Endpoint           string             `json:"endpoint,omitempty"`
}

// KaotoList contains a list of Kaoto.
//
// +kubebuilder:object:root=true
type KaotoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Kaoto `json:"items"`
}
