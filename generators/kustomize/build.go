package kustomize

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"

	"github.com/wavesmith/wavesmith/manifest"
)

// buildSlot serialises kustomize builds: kustomize keeps global state,
// the OpenAPI schema, which a kustomization's openapi field replaces. The
// parsed default schema is kept between builds (parsing it is most of a
// build's cost); a build that leaves another schema behind resets it.
var buildSlot = make(chan struct{}, 1)

// schemaDirty reports whether kustomize's global schema is not the
// default one.
func schemaDirty() bool { return openapi.GetSchemaVersion() != openapi.DefaultOpenAPI }

// build runs kustomize on the folder as the tree shows it, at the
// folder's real path, with the options of kustomize build: files load
// only at or below their kustomization, builtin plugins only, helm
// disabled, legacy output order. The objects come back in kustomize's
// order with Source.File set to the folder. A refusal met while
// kustomize reads (a symlink leaving the folder) is the error.
func (j *job) build(ctx context.Context, t *tree) ([]*manifest.Object, error) {
	t.budget = &buildBudget{ctx: ctx}
	out, err := kustomize(ctx, treeFS{t}, filepath.Join(t.root, filepath.FromSlash(t.top)))
	if r := t.firstRefusal(); r != nil {
		return nil, r
	}
	if errors.Is(err, ErrBudget) {
		return nil, j.spec.FieldError(sourceField, fmt.Errorf("kustomize build %s: %w", j.dir, err))
	}
	if err != nil {
		return nil, j.spec.FieldError(sourceField, fmt.Errorf("%w: kustomize build %s: %v", ErrKustomization, j.dir, err))
	}
	objs, err := manifest.Decode(j.dir, out)
	if err != nil {
		return nil, j.spec.FieldError(sourceField, fmt.Errorf("%w: kustomize build %s: %w", ErrKustomization, j.dir, err))
	}
	// Lines of kustomize's output mean nothing to the user: keep the
	// folder and the position only.
	for i, o := range objs {
		objs[i] = manifest.New(o.Map)
		objs[i].Source = manifest.Source{File: j.dir, Index: i}
	}
	return objs, nil
}

// kustomize runs krusty alone (buildSlot) and turns a panic into an
// error. When ctx ends first it returns ErrBudget at once; the build
// goes on in the background until it finishes and frees the slot.
func kustomize(ctx context.Context, fsys filesys.FileSystem, root string) ([]byte, error) {
	select {
	case buildSlot <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for another kustomize build: %w", ErrBudget, ctx.Err())
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-buildSlot }()
		out, err := run(fsys, root)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrBudget, ctx.Err())
	}
}

// run is one krusty build; the caller holds buildSlot.
func run(fsys filesys.FileSystem, root string) (out []byte, err error) {
	if schemaDirty() {
		openapi.ResetOpenAPI()
	}
	defer func() {
		if schemaDirty() {
			openapi.ResetOpenAPI()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // kustomize build's default: legacy order unless sortOptions
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(fsys, root)
	if err != nil {
		return nil, err
	}
	if n := m.Size(); n > maxBuildObjects {
		return nil, fmt.Errorf("%w: the build makes %d objects, more than %d", ErrBudget, n, maxBuildObjects)
	}
	out, err = m.AsYaml()
	if err == nil && len(out) > maxBuildOutput {
		return nil, fmt.Errorf("%w: the build writes %d bytes of YAML, more than %d", ErrBudget, len(out), maxBuildOutput)
	}
	return out, err
}
