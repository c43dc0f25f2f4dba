package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/render"
)

// renderFlags are the options every rendering command shares. Their
// defaults come from the environment Argo CD gives a plugin: explicit flags
// win over ARGOCD_APP_PARAMETERS, which wins over ARGOCD_ENV_* (argocd.go).
type renderFlags struct {
	platform, namespace, dialects, kubeVersion, apiVersions, root, partOf string
	wave                                                                  int
	adoption, update, delete, reconcile                                   string
	quiet                                                                 bool
}

func (f *renderFlags) bind(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.platform, "platform", "", "kubernetes (Ingress) or openshift (Route); default: openshift when --api-versions lists route.openshift.io/v1, else kubernetes"+argocdHelp("platform"))
	fs.StringVarP(&f.namespace, "namespace", "n", os.Getenv("ARGOCD_APP_NAMESPACE"), "namespace of specs that have none (env ARGOCD_APP_NAMESPACE; else \"default\")")
	fs.StringVar(&f.dialects, "dialects", "argocd,flux", "engines whose annotations are written: argocd, flux, or none"+argocdHelp("dialects"))
	fs.StringVar(&f.kubeVersion, "kube-version", os.Getenv("KUBE_VERSION"), "Kubernetes version offered to charts and templates (env KUBE_VERSION)")
	fs.StringVar(&f.apiVersions, "api-versions", os.Getenv("KUBE_API_VERSIONS"), "comma-separated API versions of the target cluster (env KUBE_API_VERSIONS)")
	fs.StringVar(&f.root, "root", "", "folder chart and kustomization sources may not leave (default: under Argo CD the checkout, the current folder less env ARGOCD_APP_SOURCE_PATH; else the enclosing git repository, else the current folder)")
	fs.StringVar(&f.partOf, "part-of", "", "app.kubernetes.io/part-of for objects without one (default: the owning spec's name)")
	fs.IntVar(&f.wave, "wave", 0, "default apply-order (wave) of objects, -32768..32767"+argocdHelp("wave"))
	fs.StringVar(&f.adoption, "adoption-policy", "", "default adoption-policy: never, if-unowned, always"+argocdHelp("adoption-policy"))
	fs.StringVar(&f.update, "update-policy", "", "default update-policy: replace, ssa-merge, ssa-override, recreate"+argocdHelp("update-policy"))
	fs.StringVar(&f.delete, "delete-policy", "", "default delete-policy: delete, orphan, orphan-on-apply, orphan-on-delete"+argocdHelp("delete-policy"))
	fs.StringVar(&f.reconcile, "reconcile-policy", "", "default reconcile-policy: on-object-change, on-object-or-component-change, once"+argocdHelp("reconcile-policy"))
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print warnings")
}

// options builds the engine options; mistakes are usage errors.
func (f *renderFlags) options(c *cobra.Command) (render.Options, error) {
	if err := f.applyArgoCD(c); err != nil {
		return render.Options{}, usageError{cmd: c.CommandPath(), err: err}
	}
	cfg := v1alpha1.RenderConfigSpec{
		Platform: f.platform, Namespace: f.namespace, KubeVersion: f.kubeVersion,
		APIVersions: render.SplitList(f.apiVersions), Dialects: []string{f.dialects},
	}
	if c.Flags().Changed("wave") {
		w := int32(f.wave)
		if int(w) != f.wave || f.wave < -32768 || f.wave > 32767 {
			return render.Options{}, usageError{cmd: c.CommandPath(), err: fmt.Errorf("--wave %d: want -32768..32767", f.wave)}
		}
		cfg.Wave = &w
	}
	p := v1alpha1.Policies{Adoption: f.adoption, Update: f.update, Delete: f.delete, Reconcile: f.reconcile}
	if p != (v1alpha1.Policies{}) {
		cfg.Policies = &p
	}
	opts, err := render.OptionsFromConfig(cfg)
	if err != nil {
		return opts, usageError{cmd: c.CommandPath(), err: err}
	}
	opts.Generators = builtin.Registry()
	opts.PartOf = f.partOf
	opts.DiscardObjects = true // the CLI only needs the encoded objects
	opts.Root = f.root
	if opts.Root == "" {
		opts.Root = argocdRoot()
	}
	if opts.Root == "" {
		opts.Root = render.FindRoot(".")
	}
	return opts, nil
}

func (f *renderFlags) printWarnings(c *cobra.Command, res *render.Result) {
	if f.quiet {
		return
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(c.ErrOrStderr(), "warning: %s\n", w.String())
	}
}

// render loads the paths (the current folder when none) and renders them.
func (f *renderFlags) render(c *cobra.Command, args []string) (*render.Result, error) {
	opts, err := f.options(c)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	objs, err := render.Load(args, c.InOrStdin())
	if err != nil {
		return nil, err
	}
	return render.Render(c.Context(), objs, opts)
}
