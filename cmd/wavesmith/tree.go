package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/load"
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
	fs.BoolVar(&f.flux, "flux", false, "also write DIR/_flux/: one Flux Kustomization per wave, chained with dependsOn and wait")
	fs.StringVar(&f.fluxName, "flux-name", "wavesmith", "prefix of the Kustomization names (<name>-wave-<n>)")
	fs.StringVar(&f.fluxNamespace, "flux-namespace", "flux-system", "namespace of the Kustomizations")
	fs.StringVar(&f.fluxSource, "flux-source", "GitRepository/flux-system", "source of the Kustomizations: KIND/NAME or KIND/NAMESPACE/NAME")
	fs.StringVar(&f.fluxInterval, "flux-interval", "10m", "reconcile interval of the Kustomizations")
	fs.StringVar(&f.fluxTimeout, "flux-timeout", "5m", "timeout of each wave: apply and health checks")
	fs.BoolVar(&f.argocd, "argocd", false, "also write DIR/_argocd/: an Argo CD Application for the tree (an app of apps ordered by sync waves when Components depend on each other)")
	fs.StringVar(&f.argoRepo, "argocd-repo", "", "URL of the git repository holding the tree (required with --argocd)")
	fs.StringVar(&f.argoRevision, "argocd-revision", "HEAD", "branch, tag or commit the Applications follow")
	fs.StringVar(&f.argoName, "argocd-name", "wavesmith", "name of the (root) Application, prefix of child Applications")
	fs.StringVar(&f.argoNamespace, "argocd-namespace", "argocd", "namespace of the Application objects (Argo CD's)")
	fs.StringVar(&f.argoProject, "argocd-project", "default", "Argo CD project of the Applications")
	fs.StringVar(&f.argoDestNamespace, "argocd-dest-namespace", "", "destination namespace for objects without one (default: each spec's namespace)")
	fs.StringVar(&f.treePath, "tree-path", "", "path of DIR inside the git repository Flux or Argo CD read (default: DIR relative to its enclosing git repository)")
	complete(c, "flux-source", "GitRepository/", "OCIRepository/", "Bucket/", "ExternalArtifact/")
}

// layer writes the tree flags given on the command line into s.
func (f *treeFlags) layer(c *cobra.Command, s *v1alpha1.RenderConfigSpec) {
	changed := func(name string) bool { fl := c.Flags().Lookup(name); return fl != nil && fl.Changed }
	str := func(name string, dst *string, v string) {
		if changed(name) {
			*dst = v
		}
	}
	str("tree-path", &s.TreePath, f.treePath)
	if f.flux || changedWithPrefix(c, "flux-") {
		s.Flux = &v1alpha1.FluxDelivery{}
		str("flux-name", &s.Flux.Name, f.fluxName)
		str("flux-namespace", &s.Flux.Namespace, f.fluxNamespace)
		str("flux-source", &s.Flux.Source, f.fluxSource)
		str("flux-interval", &s.Flux.Interval, f.fluxInterval)
		str("flux-timeout", &s.Flux.Timeout, f.fluxTimeout)
	}
	if f.argocd || changedWithPrefix(c, "argocd-") {
		s.ArgoCD = &v1alpha1.ArgoCDDelivery{}
		str("argocd-repo", &s.ArgoCD.Repo, f.argoRepo)
		str("argocd-revision", &s.ArgoCD.Revision, f.argoRevision)
		str("argocd-name", &s.ArgoCD.Name, f.argoName)
		str("argocd-namespace", &s.ArgoCD.Namespace, f.argoNamespace)
		str("argocd-project", &s.ArgoCD.Project, f.argoProject)
		str("argocd-dest-namespace", &s.ArgoCD.DestinationNamespace, f.argoDestNamespace)
	}
}

// check refuses delivery flags that enable nothing: a --flux-* flag
// without --flux, when no other layer asks for Flux either.
func (f *treeFlags) check(c *cobra.Command, s *setup) error {
	usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
	sp := s.merged.Spec
	fromFlags := func(path string) bool { l := s.merged.Source(path); return l != nil && l.Name == "flags" }
	if !f.flux && changedWithPrefix(c, "flux-") && fromFlags("flux") {
		return usage(errors.New("--flux-* flags need --flux"))
	}
	if !f.argocd && changedWithPrefix(c, "argocd-") && fromFlags("argocd") {
		return usage(errors.New("--argocd-* flags need --argocd"))
	}
	if sp.Flux == nil && sp.ArgoCD == nil && sp.TreePath != "" && fromFlags("treePath") {
		return usage(errors.New("--tree-path needs --flux or --argocd"))
	}
	return nil
}

// files is the tree of res to write at dir: the objects, the record of how
// it was rendered (tree.RecordFile), and the delivery files of the engines
// the configuration asks for; the tree there now decides the Flux
// handoffs.
func files(c *cobra.Command, s *setup, res *render.Result, dir string) (map[string][]byte, error) {
	files := res.Tree()
	spec := s.merged.Spec
	if spec.Flux != nil || spec.ArgoCD != nil {
		if spec.TreePath == "" {
			p, err := pathInRepository(dir)
			if err != nil {
				return nil, usageError{cmd: c.CommandPath(), err: err}
			}
			spec.TreePath = p
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
		more, err := engines.Files(res.Plan(), files, previous, &spec)
		if err != nil {
			return nil, deliveryError(c, s.merged, err)
		}
		for k, v := range more {
			files[k] = v
		}
	}
	rec, err := record(s, dir)
	if err != nil {
		return nil, err
	}
	files[tree.RecordFile] = rec
	return files, nil
}

// record is the RenderConfig a tree at dir was rendered with: the merged
// settings, with the inputs relative to dir, so that the same render from
// another folder writes the same record, and `wavesmith render --config
// DIR/.wavesmith-tree.yaml` renders it again.
func record(s *setup, dir string) ([]byte, error) {
	spec := s.merged.Spec
	spec.Output = "."
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	spec.Inputs = nil
	for _, in := range s.inputs {
		if in == "-" {
			spec.Inputs = append(spec.Inputs, in)
			continue
		}
		abs, err := filepath.Abs(in)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(absDir, abs)
		if err != nil {
			return nil, err
		}
		spec.Inputs = append(spec.Inputs, filepath.ToSlash(rel))
	}
	head := "# How this tree was rendered (wavesmith render writes it; do not edit).\n" +
		"# It marks the folder as rendered output: never an input, never discovered.\n" +
		"# Check it:      wavesmith check -o <this folder>\n" +
		"# Re-render it:  wavesmith render --config <this folder>/" + tree.RecordFile + "\n"
	return append([]byte(head), config.Encode(spec, "tree")...), nil
}

// pathInRepository is dir relative to its enclosing git repository.
func pathInRepository(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	root, found := load.FindRepository(filepath.Dir(abs))
	rel, err := filepath.Rel(root, abs)
	if !found || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside a git repository: give its path inside the repository with --tree-path", dir)
	}
	return filepath.ToSlash(rel), nil
}
