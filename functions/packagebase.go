package functions

import (
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// packageBase finds the folder the items' paths are relative to. kpt gives
// each item its path inside the package (config.kubernetes.io/path), but
// runs the function in the folder kpt was started in, which may be above
// the package (kpt fn render pkg/): the sources a spec names beside its
// file must be found from the package. It returns "" when the specs' files
// are where their paths say from the current folder, else the one folder
// below it holding a Kptfile and every spec's file (found by name and
// compared by content); anything else is an error saying what to do.
func packageBase(items []*yaml.RNode, reg generators.Registry) (string, error) {
	var paths []string
	var keys []manifest.Key
	for _, it := range items {
		g, _ := manifest.SplitAPIVersion(it.GetApiVersion())
		if _, ok := reg[g+"/"+it.GetKind()]; !ok {
			continue
		}
		a := it.GetAnnotations()
		p := a[kioutil.PathAnnotation]
		if p == "" {
			//lint:ignore SA1019 kustomize and older kpt still set the legacy path annotation
			p = a[kioutil.LegacyPathAnnotation]
		}
		if p != "" && !filepath.IsAbs(p) {
			paths = append(paths, filepath.FromSlash(p))
			keys = append(keys, itemKey(it))
		}
	}
	if len(paths) == 0 {
		return "", nil
	}
	// Every look below goes through the current folder as a root, as the
	// other doors read: the items' paths are the caller's input, and one
	// that leads out (../, a symlink), to a FIFO or to an oversized file
	// is no package file, never read.
	root, err := fsroot.OpenRoot(".")
	if err != nil {
		return "", fmt.Errorf("%w: the current folder: %w", render.ErrOptions, err)
	}
	defer root.Close()
	if holdsAll(root, "", paths, keys) {
		return "", nil
	}
	var found []string
	const maxDepth = 8
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > maxDepth || len(found) > 1 {
			return
		}
		if fi, err := root.Lstat(filepath.Join(dir, "Kptfile")); err == nil && fi.Mode().IsRegular() && holdsAll(root, dir, paths, keys) {
			found = append(found, dir)
		}
		entries, err := root.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				walk(filepath.Join(dir, e.Name()), depth+1)
			}
		}
	}
	walk(".", 0)
	if len(found) == 1 {
		return found[0], nil
	}
	if len(found) == 0 && !anyFile(root, paths) {
		// The items come from no file here (kustomize sends its own
		// paths, a test or a pipe may send any): paths are relative to the
		// current folder, and a source a spec names that is not there is
		// reported by its generator.
		return "", nil
	}
	return "", fmt.Errorf("%w: the specs' files (%s) are not below the current folder, and no single package folder below it holds them: run kpt from the package folder (kpt fn render --allow-exec .), or give the paths from where kpt runs", render.ErrOptions, strings.Join(paths, ", "))
}

// anyFile reports whether one of paths is a regular file from the current
// folder, inside it.
func anyFile(root *fsroot.Root, paths []string) bool {
	for _, p := range paths {
		if fi, err := root.CheckFile(p); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// holdsAll reports whether each file dir/paths[i] holds an object named
// like keys[i] (the namespace aside: kpt may have set one), reading
// through root: a path out of it, a file that is not regular or one over
// fsroot.MaxFileSize holds nothing.
func holdsAll(root *fsroot.Root, dir string, paths []string, keys []manifest.Key) bool {
	for i, p := range paths {
		f := filepath.Join(dir, p)
		b, err := root.ReadFile(f)
		if err != nil {
			return false
		}
		objs, err := manifest.Decode(f, b)
		if err != nil {
			return false
		}
		found := false
		for _, o := range objs {
			k := o.Key()
			found = found || k.Group == keys[i].Group && k.Kind == keys[i].Kind && k.Name == keys[i].Name
		}
		if !found {
			return false
		}
	}
	return true
}
