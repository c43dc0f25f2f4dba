package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/render"
)

// treeFlags choose what a GitOps tree holds besides the objects: the Flux
// Kustomizations of its waves, the Argo CD Applications that deploy it.
type treeFlags struct {
	treePath                                                     string
	flux                                                         bool
	fluxName, fluxNamespace, fluxSource                          string
	fluxInterval, fluxTimeout                                    string
	argocd                                                       bool
	argoName, argoNamespace, argoProject, argoRepo, argoRevision string
	argoDestNamespace                                            string
}

func (f *treeFlags) bind(c *cobra.Command) {
	fs := c.Flags()
	fs.BoolVar(&f.flux, "flux", false, "also write DIR/flux/: one Flux Kustomization per wave, chained with dependsOn and wait")
	fs.StringVar(&f.fluxName, "flux-name", "wavesmith", "prefix of the Kustomization names (<name>-wave-<n>)")
	fs.StringVar(&f.fluxNamespace, "flux-namespace", "flux-system", "namespace of the Kustomizations")
	fs.StringVar(&f.fluxSource, "flux-source", "GitRepository/flux-system", "source of the Kustomizations: KIND/NAME or KIND/NAMESPACE/NAME")
	fs.StringVar(&f.fluxInterval, "flux-interval", "10m", "reconcile interval of the Kustomizations")
	fs.StringVar(&f.fluxTimeout, "flux-timeout", "5m", "timeout of each wave: apply and health checks")
	fs.BoolVar(&f.argocd, "argocd", false, "also write DIR/argocd/: an Argo CD Application for the tree (an app of apps ordered by sync waves when Components depend on each other)")
	fs.StringVar(&f.argoRepo, "argocd-repo", "", "URL of the git repository holding the tree (required with --argocd)")
	fs.StringVar(&f.argoRevision, "argocd-revision", "HEAD", "branch, tag or commit the Applications follow")
	fs.StringVar(&f.argoName, "argocd-name", "wavesmith", "name of the (root) Application, prefix of child Applications")
	fs.StringVar(&f.argoNamespace, "argocd-namespace", "argocd", "namespace of the Application objects (Argo CD's)")
	fs.StringVar(&f.argoProject, "argocd-project", "default", "Argo CD project of the Applications")
	fs.StringVar(&f.argoDestNamespace, "argocd-dest-namespace", "", "destination namespace for objects without one (default: each spec's namespace)")
	fs.StringVar(&f.treePath, "tree-path", "", "path of DIR inside the git repository Flux or Argo CD read (default: DIR relative to its enclosing git repository)")
}

// files is the tree of res to write at dir, with the delivery files of
// the engines the flags ask for; the tree there now decides the Flux
// handoffs.
func (f *treeFlags) files(c *cobra.Command, res *render.Result, dir string) (map[string][]byte, error) {
	files := res.Tree()
	usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
	if !f.flux && f.changed(c, "flux-") {
		return nil, usage(errors.New("--flux-* flags need --flux"))
	}
	if !f.argocd && f.changed(c, "argocd-") {
		return nil, usage(errors.New("--argocd-* flags need --argocd"))
	}
	if !f.flux && !f.argocd {
		if f.changed(c, "tree-path") {
			return nil, usage(errors.New("--tree-path needs --flux or --argocd"))
		}
		return files, nil
	}
	cfg := &v1alpha1.RenderConfigSpec{TreePath: f.treePath}
	if cfg.TreePath == "" {
		p, err := pathInRepository(dir)
		if err != nil {
			return nil, usage(err)
		}
		cfg.TreePath = p
	}
	if f.flux {
		cfg.Flux = &v1alpha1.FluxDelivery{Name: f.fluxName, Namespace: f.fluxNamespace, Source: f.fluxSource, Interval: f.fluxInterval, Timeout: f.fluxTimeout}
	}
	if f.argocd {
		cfg.ArgoCD = &v1alpha1.ArgoCDDelivery{Name: f.argoName, Namespace: f.argoNamespace, Project: f.argoProject, Repo: f.argoRepo,
			Revision: f.argoRevision, DestinationNamespace: f.argoDestNamespace}
	}
	var previous fs.FS
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		previous = os.DirFS(dir)
	}
	more, err := engines.Files(res.Plan(), files, previous, cfg)
	if err != nil {
		return nil, flagErrors(c, err)
	}
	for k, v := range more {
		files[k] = v
	}
	return files, nil
}

// deliveryFlags names the flag of each delivery setting.
var deliveryFlags = map[string]string{
	"treePath":  "--tree-path",
	"flux.name": "--flux-name", "flux.namespace": "--flux-namespace", "flux.source": "--flux-source",
	"flux.interval": "--flux-interval", "flux.timeout": "--flux-timeout",
	"argocd.repo": "--argocd-repo", "argocd.revision": "--argocd-revision", "argocd.name": "--argocd-name",
	"argocd.namespace": "--argocd-namespace", "argocd.project": "--argocd-project",
	"argocd.destinationNamespace": "--argocd-dest-namespace",
}

// flagErrors names, in delivery option errors, the flags the user typed;
// they become usage errors.
func flagErrors(c *cobra.Command, err error) error {
	var joined interface{ Unwrap() []error }
	var errs []error
	if errors.As(err, &joined) && !isOptionError(err) {
		errs = joined.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []error
	usage := false
	for _, e := range errs {
		var oe *gitops.OptionError
		if errors.As(e, &oe) {
			usage = true
			name := deliveryFlags[oe.Field]
			if name == "" {
				name = oe.Field
			}
			out = append(out, fmt.Errorf("%s: %w", name, oe.Err))
			continue
		}
		out = append(out, e)
	}
	if usage {
		return usageError{cmd: c.CommandPath(), err: errors.Join(out...)}
	}
	return err
}

func isOptionError(err error) bool {
	_, ok := err.(*gitops.OptionError)
	return ok
}

// changed reports whether a flag starting with prefix was given.
func (f *treeFlags) changed(c *cobra.Command, prefix string) bool {
	found := false
	c.Flags().Visit(func(fl *pflag.Flag) {
		found = found || strings.HasPrefix(fl.Name, prefix)
	})
	return found
}

// pathInRepository is dir relative to its enclosing git repository.
func pathInRepository(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	root, found := render.FindRepository(filepath.Dir(abs))
	rel, err := filepath.Rel(root, abs)
	if !found || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside a git repository: give its path inside the repository with --tree-path", dir)
	}
	return filepath.ToSlash(rel), nil
}
