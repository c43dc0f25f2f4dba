package kustomize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	gitignore "github.com/monochromegane/go-gitignore"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// tree is what the checks and kustomize see: the files in mem (rendered
// templates, a generated kustomization) over, when disk is set, the
// render root on disk, read only where a path is asked for. The component
// folder is top below root: a plain folder's kustomization may reach
// other kustomization folders of the root (a base beside its overlays),
// as kustomize build does in a repository; a templated folder is read
// whole into mem and is its own root (top "."). Names are not restricted:
// a path is whatever the folder holds.
//
// Every disk access resolves symlinks first and refuses a path that
// resolves outside root, a symlink loop, and anything that is neither a
// regular file nor a folder; it then reads the resolved path.
type tree struct {
	j *job
	// root is the folder nothing is read outside of, absolute with
	// symlinks resolved: the render root for a plain folder, the
	// component folder for a templated one. Paths are relative to it.
	root string
	// top is the component folder, a clean slash path relative to root
	// ("." when it is root).
	top  string
	disk bool
	mem  map[string][]byte // by slash path relative to root
	// memDirs are the folders of mem's files, with ".".
	memDirs map[string]bool
	// hidden are the paths of the files that configure the component
	// (ConfigFile, IgnoreFile in top): they do not exist for kustomize.
	hidden map[string]bool
	// ignore applies IgnoreFile below top.
	ignore gitignore.IgnoreMatcher
	// origin maps a rendered path to the template it came from, when
	// the two differ (a template suffix was dropped).
	origin map[string]string

	mu      sync.Mutex
	refusal error // the first refusal met while kustomize ran
	// budget accounts the reads of a build, nil outside one.
	budget *buildBudget
}

// entry is what stat finds at a path.
type entry struct {
	dir bool
	// real is the path relative to root with symlinks resolved (the
	// path itself for files in mem).
	real string
	// size is a file's size in bytes.
	size int64
}

// source returns the path, relative to the folder, of the file a
// rendered path came from.
func (t *tree) source(rel string) string {
	if o, ok := t.origin[rel]; ok {
		return o
	}
	return rel
}

// setMem replaces the files in mem.
func (t *tree) setMem(files map[string][]byte) {
	t.mem = files
	t.memDirs = map[string]bool{".": true}
	for p := range files {
		t.addDirs(p)
	}
}

// put adds one file to mem.
func (t *tree) put(rel string, b []byte) {
	if t.mem == nil {
		t.setMem(map[string][]byte{})
	}
	t.mem[rel] = b
	t.addDirs(rel)
}

func (t *tree) addDirs(p string) {
	for d := path.Dir(p); d != "." && !t.memDirs[d]; d = path.Dir(d) {
		t.memDirs[d] = true
	}
}

// stat finds rel, a clean slash path relative to the folder ("." for
// the folder). ok is false when nothing is there (or it is hidden or
// ignored); err refuses what is there but may not be read.
func (t *tree) stat(rel string) (e entry, ok bool, err error) {
	if rel != "." {
		if t.hidden[rel] {
			return entry{}, false, nil
		}
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if t.ignored(d, true) {
				return entry{}, false, nil
			}
		}
	}
	if b, ok := t.mem[rel]; ok {
		return entry{real: rel, size: int64(len(b))}, true, nil
	}
	if t.memDirs[rel] && !t.disk { // on disk, folders are the disk's
		return entry{dir: true, real: rel}, true, nil
	}
	if !t.disk {
		return entry{}, false, nil
	}
	p := filepath.Join(t.root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return entry{}, false, nil
	case err != nil:
		return entry{}, false, t.j.refuse(rel, 0, "", "cannot resolve: %v", err)
	}
	if !within(real, t.root) {
		return entry{}, false, t.j.refuse(rel, 0, "", "symlink points to %s, outside %s", real, t.bound())
	}
	st, err := os.Stat(real)
	if err != nil {
		return entry{}, false, t.j.refuse(rel, 0, "", "%v", err)
	}
	r, _ := filepath.Rel(t.root, real)
	e = entry{dir: st.IsDir(), real: filepath.ToSlash(r), size: st.Size()}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return entry{}, false, t.j.refuse(rel, 0, "", "not a regular file or folder")
	}
	if rel != "." && t.ignored(rel, e.dir) {
		return entry{}, false, nil
	}
	return e, true, nil
}

// readCapped reads the regular file p below the folder root, refusing
// one of more than fsroot.MaxFileSize bytes before reading it.
func readCapped(root, p string) ([]byte, error) {
	b, err := fsroot.ReadFile(root, p)
	if errors.Is(err, fsroot.ErrTooLarge) {
		return nil, fmt.Errorf("%w (the most wavesmith reads)", err)
	}
	return b, err
}

// isNotDir reports an ENOTDIR failure: a path through a file.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func (t *tree) ignored(rel string, isDir bool) bool {
	if t.ignore == nil {
		return false
	}
	r, ok := t.fromTop(rel)
	return ok && r != "." && t.ignore.Match("/"+r, isDir)
}

// fromTop returns rel (relative to root) relative to the component
// folder, and whether it lies in it.
func (t *tree) fromTop(rel string) (string, bool) {
	switch {
	case t.top == ".":
		return rel, true
	case rel == t.top:
		return ".", true
	}
	r, ok := strings.CutPrefix(rel, t.top+"/")
	return r, ok
}

// bound names the folder nothing is read outside of, for messages.
func (t *tree) bound() string {
	if t.disk {
		return "the root " + t.root + " (--root sets another)"
	}
	return "the templated component folder " + t.root + " (a templated folder is read whole and alone)"
}

// errNotFile is what reading a missing file or a folder gives.
var errNotFile = errors.New("no such file")

// readFile returns the content of the file at rel. A file on disk of
// more than fsroot.MaxFileSize bytes is refused before it is read (and
// so is one that grows past it while read).
func (t *tree) readFile(rel string) ([]byte, error) {
	e, ok, err := t.stat(rel)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%s: %w", rel, fs.ErrNotExist)
	case e.dir:
		return nil, fmt.Errorf("%s: %w: a folder", rel, errNotFile)
	}
	if b, ok := t.mem[e.real]; ok {
		return b, nil
	}
	b, err := readCapped(t.root, filepath.Join(t.root, filepath.FromSlash(e.real)))
	if err != nil {
		return nil, t.j.refuse(rel, 0, "", "%w", err)
	}
	return b, nil
}

// readDir returns the sorted names in the folder at rel.
func (t *tree) readDir(rel string) ([]string, error) {
	e, ok, err := t.stat(rel)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%s: %w", rel, fs.ErrNotExist)
	case !e.dir:
		return nil, fmt.Errorf("%s: not a folder", rel)
	}
	isDir := map[string]bool{} // name: whether a folder
	prefix := e.real + "/"
	if e.real == "." {
		prefix = ""
	}
	for p := range t.mem {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			first, _, nested := strings.Cut(rest, "/")
			isDir[first] = isDir[first] || nested
		}
	}
	if t.disk {
		entries, err := os.ReadDir(filepath.Join(t.root, filepath.FromSlash(e.real)))
		if err != nil {
			return nil, t.j.refuse(rel, 0, "", "%v", err)
		}
		for _, d := range entries {
			isDir[d.Name()] = isDir[d.Name()] || d.IsDir()
		}
	}
	out := make([]string, 0, len(isDir))
	for n, dir := range isDir {
		if p := path.Join(rel, n); t.hidden[p] || t.ignored(p, dir) {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// yamlFiles lists the *.yaml and *.yml files below the component folder
// (relative to it), sorted, following symlinks that stay inside the root,
// except hidden files and folders and the kustomization files of
// subfolders.
func (t *tree) yamlFiles() ([]string, error) {
	var out []string
	onPath := map[string]bool{}
	var walk func(rel string, real string) error
	walk = func(rel, real string) error {
		if onPath[real] {
			return t.j.refuse(rel, 0, "", "symlink loop: %s is one of its own parents", path.Join(t.root, real))
		}
		onPath[real] = true
		defer delete(onPath, real)
		names, err := t.readDir(rel)
		if err != nil {
			return err
		}
		for _, n := range names {
			if strings.HasPrefix(n, ".") {
				continue
			}
			child := path.Join(rel, n)
			ext := path.Ext(n)
			yamlName := (ext == ".yaml" || ext == ".yml") && !isKustomizationName(n)
			// Only what the listing needs is resolved: folders to
			// descend and YAML files to list.
			if !yamlName && !t.maybeDir(child) {
				continue
			}
			e, ok, err := t.stat(child)
			if err != nil {
				return err
			}
			switch {
			case !ok:
			case e.dir:
				if err := walk(child, e.real); err != nil {
					return err
				}
			case yamlName:
				out = append(out, child)
			}
		}
		return nil
	}
	if err := walk(t.top, t.top); err != nil {
		return nil, err
	}
	for i, p := range out {
		out[i], _ = t.fromTop(p)
	}
	sort.Strings(out)
	return out, nil
}

// maybeDir reports whether rel may be a folder without resolving it: a
// folder in mem, or on disk a folder or a symlink.
func (t *tree) maybeDir(rel string) bool {
	if t.memDirs[rel] {
		return true
	}
	if !t.disk {
		return false
	}
	st, err := os.Lstat(filepath.Join(t.root, filepath.FromSlash(rel)))
	return err == nil && (st.IsDir() || st.Mode()&fs.ModeSymlink != 0)
}

// refused records the first refusal met while kustomize runs.
func (t *tree) refused(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refusal == nil {
		t.refusal = err
	}
}

// firstRefusal returns what refused recorded (kustomize may still be
// reading in the background after the context ended).
func (t *tree) firstRefusal() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refusal
}
