// +kubebuilder:object:generate=true
// +groupName=designer.kaoto.io

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// SchemeBuilder registers Kaoto and KaotoList.
	//lint:ignore SA1019 the kubebuilder scaffold; only wavesmith-status and tests register these types
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&Kaoto{}, &KaotoList{})
}

var _ runtime.Object = &Kaoto{}
