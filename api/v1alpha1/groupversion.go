package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// Group and version of the wavesmith API.
const (
	Group   = "wavesmith.io"
	Version = "v1alpha1"

	ComponentKind    = "Component"
	ComponentPlural  = "components"
	RenderConfigKind = "RenderConfig"
)

// GroupVersion is wavesmith.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// APIVersion is the apiVersion string of wavesmith resources.
var APIVersion = GroupVersion.String()
