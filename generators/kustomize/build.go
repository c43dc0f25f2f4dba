package kustomize

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"

	"github.com/wavesmith/wavesmith/manifest"
)

// buildMu serialises kustomize builds: kustomize keeps global state, the
// OpenAPI schema, which a kustomization's openapi field replaces. The
// parsed default schema is kept between builds (parsing it is most of a
// build's cost); a build that leaves another schema behind resets it.
var buildMu sync.Mutex

// schemaDirty reports whether kustomize's global schema is not the
// default one.
func schemaDirty() bool { return openapi.GetSchemaVersion() != openapi.DefaultOpenAPI }

// build runs kustomize on the rendered folder, held in an in-memory
// filesystem at the folder's real path, with the options of kustomize
// build: files load only at or below their kustomization, builtin plugins
// only, helm disabled, legacy output order. The objects come back in
// kustomize's order with Source.File set to the folder.
func (j *job) build(f *folder) ([]*manifest.Object, error) {
	fsys := filesys.MakeFsInMemory()
	paths := make([]string, 0, len(f.files))
	for p := range f.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	root := filepath.ToSlash(f.real)
	for _, p := range paths {
		full := path.Join(root, p)
		if err := fsys.MkdirAll(path.Dir(full)); err != nil {
			return nil, j.fileError(p, 0, "", fmt.Errorf("%w: %v", ErrKustomization, err))
		}
		if err := fsys.WriteFile(full, f.files[p]); err != nil {
			return nil, j.fileError(p, 0, "", fmt.Errorf("%w: %v", ErrKustomization, err))
		}
	}
	out, err := kustomize(fsys, root)
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

// kustomize runs krusty under buildMu and turns a panic into an error.
func kustomize(fsys filesys.FileSystem, root string) (out []byte, err error) {
	buildMu.Lock()
	defer buildMu.Unlock()
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
	return m.AsYaml()
}
