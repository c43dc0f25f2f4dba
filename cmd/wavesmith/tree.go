package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wavesmith/wavesmith/gitops/argocd"
	"github.com/wavesmith/wavesmith/gitops/flux"
	"github.com/wavesmith/wavesmith/render"
	"github.com/wavesmith/wavesmith/tree"
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

// files is the tree of res to write at dir; the tree there now decides the
// Flux handoffs.
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
	p := f.treePath
	if p == "" {
		var err error
		if p, err = pathInRepository(dir); err != nil {
			return nil, usage(err)
		}
	}
	add := func(more map[string][]byte) {
		for k, v := range more {
			files[k] = v
		}
	}
	if f.flux {
		src, err := flux.ParseSource(f.fluxSource)
		if err != nil {
			return nil, usage(fmt.Errorf("--flux-source: %w", err))
		}
		var previous fs.FS
		prev, err := tree.OpenFS(dir)
		switch {
		case err == nil:
			defer prev.Close()
			previous = prev
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("reading the previous tree: %w", err)
		}
		more, err := flux.Files(res, previous, flux.Options{
			Name: f.fluxName, Namespace: f.fluxNamespace, Source: src, Path: p,
			Interval: f.fluxInterval, Timeout: f.fluxTimeout,
		})
		if errors.Is(err, flux.ErrOption) {
			return nil, usage(err)
		}
		if err != nil {
			return nil, err
		}
		add(more)
	}
	if f.argocd {
		more, err := argocd.Applications(res, argocd.Options{
			Name: f.argoName, Namespace: f.argoNamespace, Project: f.argoProject,
			RepoURL: f.argoRepo, TargetRevision: f.argoRevision, Path: p,
			DestinationNamespace: f.argoDestNamespace,
		})
		if errors.Is(err, argocd.ErrOptions) {
			return nil, usage(err)
		}
		if err != nil {
			return nil, err
		}
		add(more)
	}
	return files, nil
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
	root := render.FindRoot(filepath.Dir(abs))
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside a git repository: give its path inside the repository with --tree-path", dir)
	}
	return filepath.ToSlash(rel), nil
}
