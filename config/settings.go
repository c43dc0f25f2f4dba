package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// Door is a way a setting reaches a render besides the RenderConfig (the
// project file, --config, a tree's record, the KRM function's
// RenderConfig), which takes every setting.
type Door uint8

const (
	// Flags: a flag of every rendering command (render, check, graph,
	// diff, fn).
	Flags Door = 1 << iota
	// TreeFlags: a flag of the commands that write or check a tree
	// (render, check).
	TreeFlags
	// ArgoCD: a parameter of the Argo CD plugin (ARGOCD_APP_PARAMETERS),
	// and its env entry ARGOCD_ENV_<NAME>.
	ArgoCD
	// ConfigMap: a key of the KRM function's ConfigMap functionConfig.
	ConfigMap
)

// Type is the shape of a setting's value.
type Type string

const (
	String Type = "string"
	// List is a comma-separated list in a flag, a parameter (or an array
	// parameter) and a ConfigMap key.
	List Type = "list"
	Int  Type = "int"
	// Section is a delivery section (flux, argocd): a boolean flag that
	// turns it on.
	Section Type = "bool"
)

// Setting is one row of the table of settings: where it lives in a
// RenderConfigSpec and how each door names it.
type Setting struct {
	// Path is the JSON path of the field in a RenderConfigSpec.
	Path string
	// Flag is the long flag ("update-policy"), Short its one-letter form.
	Flag, Short string
	// Param is the Argo CD plugin parameter ("" for none); its env entry
	// is ARGOCD_ENV_ and Param upper-cased, dashes as underscores.
	Param string
	// Key is the KRM function's ConfigMap key ("" for none).
	Key  string
	Type Type
	// Title is the parameter's title in Argo CD's UI.
	Title string
	// Help says what the setting does, in one sentence or two, without
	// its allowed values or its default (Values, Default).
	Help string
	// Values are the allowed values, when they are a few words.
	Values []string
	// Default is the value when no layer sets one, as users read it.
	Default string
	Doors   Door
}

// Takes reports whether the setting comes through door d.
func (s *Setting) Takes(d Door) bool { return s.Doors&d != 0 }

// Settings is the table of settings, in the order flags, parameters and
// documentation list them. The flags (cmd/wavesmith), the Argo CD
// parameters (internal/argocdplugin), the ConfigMap keys (functions), the plugin's
// parameter announcement (kustomize/argocd/plugin.yaml) and the tables of
// docs/cli.md, docs/argocd.md and docs/krm-function.md are made from it.
var Settings = []Setting{
	{Path: "platform", Flag: "platform", Param: "platform", Key: "platform", Type: String, Title: "Platform",
		Help:    "Whether Kaoto gets an Ingress (kubernetes) or a Route (openshift); any case.",
		Values:  []string{"kubernetes", "openshift"},
		Default: "openshift when the API versions list route.openshift.io/v1, else kubernetes",
		Doors:   Flags | ArgoCD | ConfigMap},
	{Path: "namespace", Flag: "namespace", Short: "n", Key: "namespace", Type: String,
		Help:    "Namespace of specs and namespaced objects that have none.",
		Default: "env ARGOCD_APP_NAMESPACE, else default",
		Doors:   Flags | ConfigMap},
	{Path: "dialects", Flag: "dialects", Param: "dialects", Key: "dialects", Type: List, Title: "Annotation dialects",
		Help:    "Engines whose wave and policy annotations are written; none, alone, for wavesmith's native annotations only.",
		Values:  []string{"argocd", "flux", "none"},
		Default: "argocd,flux",
		Doors:   Flags | ArgoCD | ConfigMap},
	{Path: "kubeVersion", Flag: "kube-version", Key: "kubeVersion", Type: String,
		Help:    "Kubernetes version offered to charts and templates.",
		Default: "env KUBE_VERSION, else the version of the Kubernetes libraries wavesmith is built with (wavesmith version)",
		Doors:   Flags | ConfigMap},
	{Path: "apiVersions", Flag: "api-versions", Key: "apiVersions", Type: List,
		Help:    "API versions the target cluster serves, offered to charts and templates; route.openshift.io/v1 among them means OpenShift.",
		Default: "env KUBE_API_VERSIONS",
		Doors:   Flags | ConfigMap},
	{Path: "apiResources", Flag: "api-resources", Type: String,
		Help:  "A file holding the output of kubectl api-resources for the target cluster: which kinds are cluster-scoped, for custom resources whose CRD is not in the render.",
		Doors: Flags},
	{Path: "partOf", Flag: "part-of", Type: String,
		Help:    "app.kubernetes.io/part-of of objects without one.",
		Default: "the owning spec's name",
		Doors:   Flags},
	{Path: "wave", Flag: "wave", Param: "wave", Key: "wave", Type: Int, Title: "Default wave",
		Help:    "Default apply-order (wave) of objects whose spec and annotations set none, -32768..32767.",
		Default: "0",
		Doors:   Flags | ArgoCD | ConfigMap},
	{Path: "policies.adoption", Flag: "adoption-policy", Param: "adoption-policy", Key: "adoptionPolicy", Type: String, Title: "Adoption policy",
		Help:    "Default for objects that already exist in the cluster.",
		Values:  []string{"never", "if-unowned", "always"},
		Default: "if-unowned",
		Doors:   Flags | ArgoCD | ConfigMap},
	{Path: "policies.update", Flag: "update-policy", Param: "update-policy", Key: "updatePolicy", Type: String, Title: "Update policy",
		Help:    "Default way objects are updated.",
		Values:  []string{"replace", "ssa-merge", "ssa-override", "recreate"},
		Default: "ssa-override",
		Doors:   Flags | ArgoCD | ConfigMap},
	{Path: "policies.delete", Flag: "delete-policy", Param: "delete-policy", Key: "deletePolicy", Type: String, Title: "Delete policy",
		Help:    "Default for objects that leave the render or whose application is deleted.",
		Values:  []string{"delete", "orphan", "orphan-on-apply", "orphan-on-delete"},
		Default: "delete",
		Doors:   Flags | ArgoCD | ConfigMap},
	{Path: "policies.reconcile", Flag: "reconcile-policy", Param: "reconcile-policy", Key: "reconcilePolicy", Type: String, Title: "Reconcile policy",
		Help:    "Default for when objects are re-applied.",
		Values:  []string{"on-object-change", "on-object-or-component-change", "once"},
		Default: "on-object-change",
		Doors:   Flags | ArgoCD | ConfigMap},
	{Path: "timeout", Flag: "timeout", Param: "timeout", Type: String, Title: "Timeout",
		Help:    "Time a render may take, chart and kustomization templates included; a render that takes longer fails with a message.",
		Default: "1m",
		Doors:   Flags | ArgoCD},
	{Path: "treePath", Flag: "tree-path", Type: String,
		Help:    "Path of the tree inside the git repository Flux or Argo CD read.",
		Default: "the tree's folder relative to its enclosing git repository",
		Doors:   TreeFlags},
	{Path: "flux", Flag: "flux", Type: Section,
		Help:  "The tree holds _flux/: one Flux Kustomization per wave, chained with dependsOn and wait.",
		Doors: TreeFlags},
	{Path: "flux.name", Flag: "flux-name", Type: String,
		Help: "Prefix of the Kustomization names (<name>-wave-<n>).", Default: "wavesmith",
		Doors: TreeFlags},
	{Path: "flux.namespace", Flag: "flux-namespace", Type: String,
		Help: "Namespace of the Kustomizations.", Default: "flux-system",
		Doors: TreeFlags},
	{Path: "flux.source", Flag: "flux-source", Type: String,
		Help: "Source the Kustomizations read the tree from: KIND/NAME or KIND/NAMESPACE/NAME.", Default: "GitRepository/flux-system",
		Doors: TreeFlags},
	{Path: "flux.interval", Flag: "flux-interval", Type: String,
		Help: "Reconcile interval of the Kustomizations.", Default: "10m",
		Doors: TreeFlags},
	{Path: "flux.timeout", Flag: "flux-timeout", Type: String,
		Help: "Timeout of each wave: apply and health checks.", Default: "5m",
		Doors: TreeFlags},
	{Path: "argocd", Flag: "argocd", Type: Section,
		Help:  "The tree holds _argocd/: an Argo CD Application for the tree (an app of apps ordered by sync waves when Components depend on each other).",
		Doors: TreeFlags},
	{Path: "argocd.repo", Flag: "argocd-repo", Type: String,
		Help:  "URL of the git repository holding the tree (required with --argocd).",
		Doors: TreeFlags},
	{Path: "argocd.revision", Flag: "argocd-revision", Type: String,
		Help: "Branch, tag or commit the Applications follow.", Default: "HEAD",
		Doors: TreeFlags},
	{Path: "argocd.name", Flag: "argocd-name", Type: String,
		Help: "Name of the (root) Application, prefix of child Applications.", Default: "wavesmith",
		Doors: TreeFlags},
	{Path: "argocd.namespace", Flag: "argocd-namespace", Type: String,
		Help: "Namespace of the Application objects (Argo CD's).", Default: "argocd",
		Doors: TreeFlags},
	{Path: "argocd.project", Flag: "argocd-project", Type: String,
		Help: "Argo CD project of the Applications.", Default: "default",
		Doors: TreeFlags},
	{Path: "argocd.destinationNamespace", Flag: "argocd-dest-namespace", Type: String,
		Help: "Destination namespace for objects without one.", Default: "each spec's namespace",
		Doors: TreeFlags},
}

// Lookup returns the setting of a JSON path, nil when there is none.
func Lookup(path string) *Setting {
	for i := range Settings {
		if Settings[i].Path == path {
			return &Settings[i]
		}
	}
	return nil
}

// EnvVar is the Argo CD env entry of a parameter:
// update-policy -> ARGOCD_ENV_UPDATE_POLICY.
func EnvVar(param string) string {
	return "ARGOCD_ENV_" + strings.ToUpper(strings.ReplaceAll(param, "-", "_"))
}

// Set writes v, as a flag, a parameter or a ConfigMap key gives it, into
// spec at the setting's path, creating the sections on the way: a list
// is split at commas, an int parsed, a section turned on by "true". The
// value itself is checked later, by Merged.OptionsIn, which names the
// layer it came from.
func (s *Setting) Set(spec *v1alpha1.RenderConfigSpec, v string) error {
	v = strings.TrimSpace(v)
	f := field(reflect.ValueOf(spec).Elem(), s.Path, true)
	switch s.Type {
	case List:
		l := SplitList(v)
		if l == nil {
			l = []string{} // given empty: set, to none
		}
		f.Set(reflect.ValueOf(l))
	case Int:
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%q: want an integer in -32768..32767", v)
		}
		w := int32(n)
		f.Set(reflect.ValueOf(&w))
	case Section:
		on, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q: want true or false", v)
		}
		if on && f.IsNil() {
			f.Set(reflect.New(f.Type().Elem()))
		} else if !on {
			f.Set(reflect.Zero(f.Type()))
		}
	default:
		f.SetString(v)
	}
	return nil
}

// Get returns the setting's value in spec as Set reads it, "" when unset.
func (s *Setting) Get(spec *v1alpha1.RenderConfigSpec) string {
	f := field(reflect.ValueOf(spec).Elem(), s.Path, false)
	if !f.IsValid() {
		return ""
	}
	switch s.Type {
	case List:
		return strings.Join(f.Interface().([]string), ",")
	case Int:
		if f.IsNil() {
			return ""
		}
		return strconv.Itoa(int(f.Elem().Int()))
	case Section:
		if f.IsNil() {
			return ""
		}
		return "true"
	}
	return f.String()
}

// field returns the field of v at a dotted JSON path; through a nil
// section it makes the section when create is set, else returns the zero
// Value.
func field(v reflect.Value, path string, create bool) reflect.Value {
	head, rest, more := strings.Cut(path, ".")
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if strings.Split(t.Field(i).Tag.Get("json"), ",")[0] != head {
			continue
		}
		f := v.Field(i)
		if !more {
			return f
		}
		if f.IsNil() {
			if !create {
				return reflect.Value{}
			}
			f.Set(reflect.New(f.Type().Elem()))
		}
		return field(f.Elem(), rest, create)
	}
	panic("config: no field " + path + " in " + t.String()) // the table names a field that does not exist: TestSettingsPaths
}

// Describe is the setting's help with its allowed values and default, as
// the flags' help and the parameters' tooltips say it.
func (s *Setting) Describe() string {
	var more []string
	if len(s.Values) > 0 {
		more = append(more, "one of "+strings.Join(s.Values, ", "))
	}
	if s.Default != "" {
		more = append(more, "default: "+s.Default)
	}
	d := strings.TrimSuffix(s.Help, ".")
	if len(more) > 0 {
		d += " (" + strings.Join(more, "; ") + ")"
	}
	return d
}
