package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/gitops/flux"
	"github.com/wavesmith/wavesmith/render"
)

// treeFlags choose what a GitOps tree holds besides the objects: the Flux
// Kustomizations of its waves.
type treeFlags struct {
	flux                                           bool
	fluxName, fluxNamespace, fluxSource, fluxPath string
	fluxInterval, fluxTimeout                      string
}

func (f *treeFlags) bind(c *cobra.Command) {
	fs := c.Flags()
	fs.BoolVar(&f.flux, "flux", false, "also write DIR/flux/: one Flux Kustomization per wave, chained with dependsOn and wait")
	fs.StringVar(&f.fluxName, "flux-name", "wavesmith", "prefix of the Kustomization names (<name>-wave-<n>)")
	fs.StringVar(&f.fluxNamespace, "flux-namespace", "flux-system", "namespace of the Kustomizations")
	fs.StringVar(&f.fluxSource, "flux-source", "GitRepository/flux-system", "source of the Kustomizations: KIND/NAME or KIND/NAMESPACE/NAME")
	fs.StringVar(&f.fluxPath, "flux-path", "", "path of DIR inside the source (default: DIR relative to the enclosing git repository)")
	fs.StringVar(&f.fluxInterval, "flux-interval", "10m", "reconcile interval of the Kustomizations")
	fs.StringVar(&f.fluxTimeout, "flux-timeout", "5m", "timeout of each wave: apply and health checks")
}

// files is the tree of res to write at dir; previous is the tree there now
// (Flux handoffs depend on it).
func (f *treeFlags) files(c *cobra.Command, res *render.Result, dir string, previous map[string][]byte) (map[string][]byte, error) {
	files := res.Tree()
	if !f.flux {
		if f.anyFluxFlag(c) {
			return nil, usageError{cmd: c.CommandPath(), err: errors.New("--flux-* flags need --flux")}
		}
		return files, nil
	}
	src, err := flux.ParseSource(f.fluxSource)
	if err != nil {
		return nil, usageError{cmd: c.CommandPath(), err: fmt.Errorf("--flux-source: %w", err)}
	}
	p := f.fluxPath
	if p == "" {
		if p, err = pathInRepository(dir); err != nil {
			return nil, usageError{cmd: c.CommandPath(), err: err}
		}
	}
	more, err := flux.Files(res, previous, flux.Options{
		Name: f.fluxName, Namespace: f.fluxNamespace, Source: src, Path: p,
		Interval: f.fluxInterval, Timeout: f.fluxTimeout,
	})
	if err != nil {
		if errors.Is(err, flux.ErrOption) {
			return nil, usageError{cmd: c.CommandPath(), err: err}
		}
		return nil, err
	}
	for k, v := range more {
		files[k] = v
	}
	return files, nil
}

func (f *treeFlags) anyFluxFlag(c *cobra.Command) bool {
	for _, n := range []string{"flux-name", "flux-namespace", "flux-source", "flux-path", "flux-interval", "flux-timeout"} {
		if c.Flags().Changed(n) {
			return true
		}
	}
	return false
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
		return "", fmt.Errorf("%s is not inside a git repository: give its path inside the Flux source with --flux-path", dir)
	}
	return filepath.ToSlash(rel), nil
}
