package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/render"
)

// treeFlags choose what a GitOps tree holds besides the objects: the Flux
// Kustomizations of its waves, the Argo CD Applications that deploy it
// (the settings of config.Settings through config.TreeFlags).
type treeFlags struct{}

func (f *treeFlags) bind(c *cobra.Command) {
	bindSettings(c, config.TreeFlags, true)
	complete(c, "flux-source", "GitRepository/", "OCIRepository/", "Bucket/", "ExternalArtifact/")
}

// on reports whether the boolean flag name was given true.
func on(c *cobra.Command, name string) bool {
	fl := c.Flags().Lookup(name)
	return fl != nil && fl.Changed && fl.Value.String() == "true"
}

// check refuses delivery flags that enable nothing: a --flux-* flag
// without --flux, when no other layer asks for Flux either.
func (f *treeFlags) check(c *cobra.Command, s *setup) error {
	usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
	sp := s.merged.Spec
	fromFlags := func(path string) bool { l := s.merged.Source(path); return l != nil && l.Name == "flags" }
	if !on(c, "flux") && changedWithPrefix(c, "flux-") && fromFlags("flux") {
		return usage(errors.New("--flux-* flags need --flux"))
	}
	if !on(c, "argocd") && changedWithPrefix(c, "argocd-") && fromFlags("argocd") {
		return usage(errors.New("--argocd-* flags need --argocd"))
	}
	if sp.Flux == nil && sp.ArgoCD == nil && sp.TreePath != "" && fromFlags("treePath") {
		return usage(errors.New("--tree-path needs --flux or --argocd"))
	}
	return nil
}

// files is the tree of res to write at dir: the objects, the record of how
// it was rendered (outtree.RecordFile), and the delivery files of the engines
// the configuration asks for; the tree there now decides the Flux
// handoffs. recorder (nil: none) records the reads of the previous tree.
func files(c *cobra.Command, s *setup, res *render.Result, dir string, recorder *previousRecorder) (map[string][]byte, error) {
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
		prev, err := outtree.OpenFS(dir)
		switch {
		case err == nil:
			defer prev.Close()
			previous = prev
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("reading the previous tree: %w", err)
		}
		more, err := engines.Files(res.Plan(), files, recorder.wrap(previous), &spec)
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
	files[outtree.RecordFile] = rec
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
		"# Re-render it:  wavesmith render --config <this folder>/" + outtree.RecordFile + "\n"
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
