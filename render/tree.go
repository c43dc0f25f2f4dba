package render

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// TreeHeader starts every kustomization.yaml of a tree; Write refuses to
// replace a non-empty folder whose kustomization.yaml lacks it.
const TreeHeader = gitops.TreeHeader

// PassThroughDir holds the objects that no spec generated. Namespaces are
// DNS labels and cannot start with "_", so it never clashes with one.
const PassThroughDir = "_objects"

// Tree returns the GitOps tree of the result: file path (slash-separated,
// relative) to content. Each spec gets <namespace>/<kind>-<name>/ with its
// rendered copy and children, one file per object and a
// kustomization.yaml; objects of no spec go to _objects/; a root
// kustomization.yaml lists the folders. `kustomize build` of the root
// gives the same objects as the stream.
func (r *Result) Tree() map[string][]byte {
	files := map[string][]byte{}
	folders := map[string][]string{} // folder -> file names in output order
	for i, p := range r.Paths() {
		dir, name := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		files[p] = r.Items[i].YAML
		folders[dir] = append(folders[dir], name)
	}
	dirs := make([]string, 0, len(folders))
	for d, names := range folders {
		dirs = append(dirs, d)
		files[d+"/kustomization.yaml"] = KustomizationFile(names)
	}
	sort.Strings(dirs)
	files["kustomization.yaml"] = KustomizationFile(dirs)
	return files
}

// Paths returns the tree path of each item, in the order of Items:
// <namespace>/<kind>-<name>/<file> for specs and their children,
// _objects/<file> for the rest.
func (r *Result) Paths() []string {
	paths := make([]string, len(r.Items))
	used := map[string]bool{}
	for i, it := range r.Items {
		dir := PassThroughDir
		if it.Spec >= 0 {
			dir = specDir(r.Specs[it.Spec].Key)
		}
		paths[i] = dir + "/" + fileName(it.Key, dir, used)
	}
	return paths
}

// specDir is the tree folder of a spec: <namespace>/<kind>-<name>.
func specDir(k manifest.Key) string {
	return k.Namespace + "/" + strings.ToLower(k.Kind) + "-" + k.Name
}

// fileName is <kind>-<name>.yaml, prefixed by the namespace in the
// pass-through folder, with the group added when two objects would share
// a name.
func fileName(k manifest.Key, dir string, used map[string]bool) string {
	base := strings.ToLower(k.Kind) + "-" + k.Name
	if dir == PassThroughDir && k.Namespace != "" {
		base = k.Namespace + "--" + base
	}
	name := base + ".yaml"
	if used[dir+"/"+name] && k.Group != "" {
		name = base + "." + k.Group + ".yaml"
	}
	for i := 2; used[dir+"/"+name]; i++ {
		name = fmt.Sprintf("%s-%d.yaml", base, i)
	}
	used[dir+"/"+name] = true
	return name
}

// KustomizationFile is a tree's kustomization.yaml listing resources.
func KustomizationFile(resources []string) []byte { return gitops.KustomizationFile(resources) }

// WriteTree writes files as the tree at dir: into a temporary folder next
// to it, then swapped in whole, so a failure leaves the previous tree as
// it was and files that no longer belong disappear.
func WriteTree(dir string, files map[string][]byte) (err error) {
	dir = filepath.Clean(dir)
	if err := checkReplaceable(dir); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrTree, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTree, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrTree, err)
	}
	if err := writeFiles(tmp, files); err != nil {
		return fmt.Errorf("%w: %v", ErrTree, err)
	}
	var old string
	if _, statErr := os.Lstat(dir); statErr == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("%w: %v", ErrTree, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return fmt.Errorf("%w: %v", ErrTree, err)
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	return nil
}

// writeFiles creates the folders, then writes the files with several
// writers: file creation is latency-bound, not CPU-bound.
func writeFiles(root string, files map[string][]byte) error {
	dirs := map[string]bool{}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
		dirs[path.Dir(p)] = true
	}
	sort.Strings(paths)
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	for _, d := range sorted {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	errs := make([]error, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(paths) {
					return
				}
				errs[i] = os.WriteFile(filepath.Join(root, filepath.FromSlash(paths[i])), files[paths[i]], 0o644)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkReplaceable refuses to replace a folder that is not a wavesmith
// tree: a missing or empty folder, or one whose kustomization.yaml starts
// with TreeHeader.
func checkReplaceable(dir string) error {
	fi, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTree, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrTree, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTree, err)
	}
	if len(entries) == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil || !bytes.HasPrefix(b, []byte(TreeHeader)) {
		return fmt.Errorf("%w: refusing to replace %s: it is not empty and not a tree wavesmith wrote", ErrTree, dir)
	}
	return nil
}

// ReadTree reads every regular file under dir, keyed like Tree.
func ReadTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if os.IsNotExist(err) {
		return files, nil
	}
	return files, err
}
