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

// RenderConfigSpec are the render options. Every field is optional; an
// empty one takes the next layer's value (flags, Argo CD parameters, the
// project file .wavesmith.yaml, defaults: see package config).
type RenderConfigSpec struct {
	// Inputs are the files and folders to render, relative to the file
	// that holds this configuration (default: its folder).
	Inputs []string `json:"inputs,omitempty"`
	// Output is "-" for a YAML stream or the folder of a GitOps tree,
	// relative to the file that holds this configuration.
	Output string `json:"output,omitempty"`
	// Timeout bounds the whole render, templates included (a duration;
	// default 1m).
	Timeout string `json:"timeout,omitempty"`
	// PartOf is the app.kubernetes.io/part-of of objects without one.
	PartOf string `json:"partOf,omitempty"`
	// Platform is kubernetes (Ingress) or openshift (Route); wavesmith
	// reads any case, the schema asks for the lowercase spelling.
	// +kubebuilder:validation:Enum=kubernetes;openshift
	Platform string `json:"platform,omitempty"`
	// Namespace for specs and namespaced objects that have none.
	Namespace string `json:"namespace,omitempty"`
	// Wave is the default apply-order.
	// +kubebuilder:validation:Minimum=-32768
	// +kubebuilder:validation:Maximum=32767
	Wave *int32 `json:"wave,omitempty"`
	// Policies are the default lifecycle policies.
	Policies *Policies `json:"policies,omitempty"`
	// Dialects are the engines whose annotations are written: argocd,
	// flux, or none for native annotations only.
	// +kubebuilder:validation:items:Enum=argocd;flux;none
	Dialects []string `json:"dialects,omitempty"`
	// KubeVersion and APIVersions are the capabilities offered to charts
	// and templates.
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
	// APIResources is a file holding the output of kubectl api-resources
	// for the target cluster: it declares which kinds are cluster-scoped
	// (custom resources whose CRD is not in the render). Relative to the
	// file that sets it.
	APIResources string `json:"apiResources,omitempty"`

	// TreePath is the folder of the rendered tree inside the git repository
	// Flux or Argo CD read (default: the output folder relative to its
	// enclosing git repository).
	TreePath string `json:"treePath,omitempty"`
	// Flux, when set, adds _flux/ to a tree: one Flux Kustomization per
	// wave, chained with dependsOn and wait.
	Flux *FluxDelivery `json:"flux,omitempty"`
	// ArgoCD, when set, adds _argocd/ to a tree: an Argo CD Application for
	// the tree, or an app of apps ordered by sync waves.
	ArgoCD *ArgoCDDelivery `json:"argocd,omitempty"`
}

// FluxDelivery shapes the Flux Kustomizations of a tree. Empty fields take
// the defaults.
type FluxDelivery struct {
	// Name prefixes the Kustomization names: <name>-wave-<n> (default
	// wavesmith).
	Name string `json:"name,omitempty"`
	// Namespace of the Kustomizations (default flux-system).
	Namespace string `json:"namespace,omitempty"`
	// Source the Kustomizations read the tree from: KIND/NAME or
	// KIND/NAMESPACE/NAME (default GitRepository/flux-system).
	Source string `json:"source,omitempty"`
	// Interval and Timeout are durations (default 10m and 5m).
	Interval string `json:"interval,omitempty"`
	Timeout  string `json:"timeout,omitempty"`
}

// ArgoCDDelivery shapes the Argo CD Applications of a tree. Empty fields
// take the defaults; Repo is required.
type ArgoCDDelivery struct {
	// Repo is the URL of the git repository holding the tree.
	Repo string `json:"repo,omitempty"`
	// Revision is the branch, tag or commit the Applications follow
	// (default HEAD).
	Revision string `json:"revision,omitempty"`
	// Name of the (root) Application, prefix of child Applications
	// (default wavesmith).
	Name string `json:"name,omitempty"`
	// Namespace of the Application objects (default argocd).
	Namespace string `json:"namespace,omitempty"`
	// Project of the Applications (default default).
	Project string `json:"project,omitempty"`
	// DestinationNamespace is the namespace of objects without one
	// (default: each spec's namespace).
	DestinationNamespace string `json:"destinationNamespace,omitempty"`
}
