// +kubebuilder:object:generate=true
// +groupName=wavesmith.io

package v1alpha1

import "sigs.k8s.io/controller-runtime/pkg/scheme"

var (
	// SchemeBuilder registers Component and ComponentList.
	//lint:ignore SA1019 the kubebuilder scaffold; only wavesmith-status and tests register these types
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&Component{}, &ComponentList{})
}
