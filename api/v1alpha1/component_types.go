package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Component is one Helm chart or kustomization plus its parameters, rendered
// offline into labelled manifests with waves and policies.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=components,shortName=wsc,categories={wavesmith}
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Component struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ComponentSpec   `json:"spec"`
	Status ComponentStatus `json:"status,omitempty"`
}

// ComponentSpec defines what to render and how its objects are applied.
type ComponentSpec struct {
	// Source is the chart or kustomization to render.
	Source Source `json:"source"`
	// Values are the parameters: Helm values, or the data of a templated
	// kustomization. Free-form, but a mapping.
	// +kubebuilder:validation:Type=object
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
	// ValuesFiles are merged in order, then Values on top. Paths are
	// relative to the spec file and may not leave the repository root.
	ValuesFiles []string `json:"valuesFiles,omitempty"`
	// Namespace is the deployment namespace (default: the Component's).
	Namespace string `json:"namespace,omitempty"`
	// Name is the deployment name, the Helm release name (default: the Component's).
	Name string `json:"name,omitempty"`
	// Wave is the default apply-order of the Component's objects.
	// +kubebuilder:validation:Minimum=-32768
	// +kubebuilder:validation:Maximum=32767
	Wave *int32 `json:"wave,omitempty"`
	// Policies are the defaults for the Component's objects.
	Policies *Policies `json:"policies,omitempty"`
	// DependsOn lists Components that must be applied and ready first.
	DependsOn []ComponentReference `json:"dependsOn,omitempty"`
	// AdditionalManagedTypes are types whose instances are applied after
	// the regular objects of their wave, as for CRDs of the Component.
	AdditionalManagedTypes []TypeMatcher `json:"additionalManagedTypes,omitempty"`
	// StatusHints are wavesmith.io/status-hint values per kind.
	StatusHints []StatusHint `json:"statusHints,omitempty"`
	// Scopes declares whether kinds the render cannot know (custom
	// resources whose CRD is not in the render) are namespaced or
	// cluster-scoped; objects without a namespace get the Component's
	// only when namespaced. They win over the CRDs in the render and the
	// built-in kinds.
	// +optional
	Scopes []KindScope `json:"scopes,omitempty"`
	// StrictHooks makes what a chart's hooks leave out an error instead
	// of one warning: hooks no GitOps engine runs (test, rollback,
	// upgrade-only) and the hook-failed delete policy. Charts only.
	// +optional
	StrictHooks bool `json:"strictHooks,omitempty"`
}

// Source names exactly one of a chart and a kustomization.
//
// +kubebuilder:validation:XValidation:rule="has(self.chart) != has(self.kustomization)",message="exactly one of chart and kustomization"
type Source struct {
	Chart         *PathSource          `json:"chart,omitempty"`
	Kustomization *KustomizationSource `json:"kustomization,omitempty"`
}

// PathSource is a chart: a folder relative to the spec file (path), or a
// chart of a Helm repository (repo, name, version), which `wavesmith
// fetch` resolves into the lock file and the chart cache.
type PathSource struct {
	// Path is the chart's folder, relative to the spec file.
	// +optional
	Path string `json:"path,omitempty"`
	// Repo is the URL of a Helm chart repository (https:// or http://).
	// +optional
	Repo string `json:"repo,omitempty"`
	// Name is the chart's name in Repo.
	// +optional
	Name string `json:"name,omitempty"`
	// Version is a chart version or a semver range (as helm's --version).
	// +optional
	Version string `json:"version,omitempty"`
}

// KustomizationSource is a kustomization folder, relative to the spec file.
type KustomizationSource struct {
	Path string `json:"path"`
	// Template makes the folder's files Go templates, in the manner of
	// component-operator-runtime, with .Values from values and
	// valuesFiles. The default is on when the folder holds a
	// .component-config.yaml, off otherwise: a plain kustomization builds
	// as kustomize build does.
	// +optional
	Template *bool `json:"template,omitempty"`
}

// Policies are the default lifecycle policies of a Component's objects.
// Each takes the values of the wavesmith.io/<name> annotation.
type Policies struct {
	// +kubebuilder:validation:Enum=never;if-unowned;always
	Adoption string `json:"adoption,omitempty"`
	// +kubebuilder:validation:Enum=replace;ssa-merge;ssa-override;recreate
	Update string `json:"update,omitempty"`
	// +kubebuilder:validation:Enum=delete;orphan;orphan-on-apply;orphan-on-delete
	Delete string `json:"delete,omitempty"`
	// +kubebuilder:validation:Enum=on-object-change;on-object-or-component-change;once
	Reconcile string `json:"reconcile,omitempty"`
}

// ComponentReference names another Component; the namespace defaults to
// the referring Component's.
type ComponentReference struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// TypeMatcher matches types by group and kind; "*" and "*.suffix" match.
type TypeMatcher struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

// Kind scopes.
const (
	ScopeNamespaced = "Namespaced"
	ScopeCluster    = "Cluster"
)

// KindScope is the scope of one kind, as a CRD's spec.scope says it.
type KindScope struct {
	// Group is the API group ("" for the core group).
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// +kubebuilder:validation:Enum=Namespaced;Cluster
	Scope string `json:"scope"`
}

// StatusHint sets the wavesmith.io/status-hint of objects of one kind.
type StatusHint struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// Hint is a comma-separated list: has-observed-generation,
	// has-ready-condition, conditions=A;B.
	Hint string `json:"hint"`
}

// ComponentStatus is written by wavesmith-status only.
type ComponentStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	State              string             `json:"state,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	Inventory          []InventoryItem    `json:"inventory,omitempty"`
}

// InventoryItem is the observed health of one child.
type InventoryItem struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Status is the kstatus of the child: Current, InProgress, Failed,
	// NotFound, or Unknown for what the controller may not read (Secrets).
	Status string `json:"status"`
}

// ComponentList is a list of Component.
//
// +kubebuilder:object:root=true
type ComponentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Component `json:"items"`
}
