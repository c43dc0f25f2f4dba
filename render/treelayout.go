package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/manifest"
)

// TreeHeader starts every kustomization.yaml of a tree (outtree.Header);
// outtree.Write refuses to replace a non-empty folder whose
// kustomization.yaml lacks it.
const TreeHeader = outtree.Header

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
	dirs, names := r.layout()
	files := make(map[string][]byte, len(r.Items)+len(r.Specs)+2)
	folders := make(map[string][]string, len(r.Specs)+1) // folder -> file names in output order
	for i, it := range r.Items {
		files[dirs[i]+"/"+names[i]] = it.YAML
		folders[dirs[i]] = append(folders[dirs[i]], names[i])
	}
	dirList := make([]string, 0, len(folders))
	for d, names := range folders {
		dirList = append(dirList, d)
		files[d+"/kustomization.yaml"] = KustomizationFile(names)
	}
	sort.Strings(dirList)
	files["kustomization.yaml"] = KustomizationFile(dirList)
	return files
}

// Paths returns the tree path of each item, in the order of Items:
// <namespace>/<kind>-<name>/<file> for specs and their children,
// _objects/<file> for the rest. Every segment is one safe file name
// (safeSegment), whatever the object's name and namespace, and paths are
// unique even on case-insensitive file systems: no name can reach outside
// the tree or overwrite another object's file.
func (r *Result) Paths() []string {
	dirs, names := r.layout()
	paths := make([]string, len(r.Items))
	for i := range paths {
		paths[i] = dirs[i] + "/" + names[i]
	}
	return paths
}

// layout returns the folder and file name of each item (Paths). Every
// folder and file name is a safe segment, lower case: names compare
// without case as they are.
func (r *Result) layout() (dirs, names []string) {
	specDirs := make([]string, len(r.Specs))
	usedDirs := make(map[treeName]bool, len(r.Specs)+1)
	usedDirs[treeName{name: PassThroughDir}] = true
	for i, s := range r.Specs {
		specDirs[i] = unique(specDir(s.Key), "", usedDirs)
	}
	dirs, names = make([]string, len(r.Items)), make([]string, len(r.Items))
	used := make(map[treeName]bool, len(r.Items))
	lower := map[string]string{} // kinds in lower case
	for i, it := range r.Items {
		dir := PassThroughDir
		if it.Spec >= 0 {
			dir = specDirs[it.Spec]
		}
		dirs[i], names[i] = dir, fileName(it.Key, dir, used, lower)
	}
	return dirs, names
}

// treeName is a file name in a folder of the tree, as compared for
// uniqueness.
type treeName struct{ dir, name string }

// specDir is the tree folder of a spec: <namespace>/<kind>-<name>.
func specDir(k manifest.Key) string {
	return safeSegment(k.Namespace) + "/" + safeSegment(strings.ToLower(k.Kind)+"-"+k.Name)
}

// fileName is <kind>-<name>.yaml, prefixed by the namespace in the
// pass-through folder, with the group added when two objects would share
// a name.
func fileName(k manifest.Key, dir string, used map[treeName]bool, lower map[string]string) string {
	kind, ok := lower[k.Kind]
	if !ok {
		kind = strings.ToLower(k.Kind)
		lower[k.Kind] = kind
	}
	var base, name string
	if dir != PassThroughDir || k.Namespace == "" {
		// Most names are safe as they are: one string for both.
		name = kind + "-" + k.Name + ".yaml"
		if base = name[:len(name)-len(".yaml")]; !isSafeSegment(base) {
			base = safeSegment(base)
			name = base + ".yaml"
		}
	} else {
		base = safeSegment(k.Namespace + "--" + kind + "-" + k.Name)
		name = base + ".yaml"
	}
	if used[treeName{dir, name}] && k.Group != "" {
		name = safeSegment(base+"."+k.Group) + ".yaml"
	}
	return unique(name, dir, used)
}

// unique returns name, or name with -2, -3, ... before its extension,
// the first not used in dir, and marks it used. Names are safe segments
// (safeSegment): lower case, so equal without case only when equal.
func unique(name, dir string, used map[treeName]bool) string {
	stem, ext := name, ""
	if strings.HasSuffix(name, ".yaml") {
		stem, ext = strings.TrimSuffix(name, ".yaml"), ".yaml"
	}
	for i := 2; used[treeName{dir, name}]; i++ {
		name = fmt.Sprintf("%s-%d%s", stem, i, ext)
	}
	used[treeName{dir, name}] = true
	return name
}

// maxSegment leaves room in a file name (255 bytes) for a group, a
// counter and ".yaml".
const maxSegment = 200

// safeSegment returns s when it is a safe file name: lowercase letters,
// digits, '-', '.' and '_', starting with a letter or digit, at most
// maxSegment bytes. Anything else (a slash, "..", upper case, a colon,
// control characters, a too long name) becomes a readable, deterministic
// stand-in: the safe characters of s with the others as '-', cut short,
// then '-' and 12 hex digits of the SHA-256 of s, so that two different
// names never meet in one file.
func safeSegment(s string) string {
	if isSafeSegment(s) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxSegment-13; i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte('-')
		}
	}
	stem := strings.TrimLeft(b.String(), "-._")
	if stem == "" {
		stem = "x"
	}
	return stem + "-" + hex.EncodeToString(sum[:6])
}

func isSafeSegment(s string) bool {
	if s == "" || len(s) > maxSegment {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// KustomizationFile is a tree's kustomization.yaml listing resources.
func KustomizationFile(resources []string) []byte { return gitops.KustomizationFile(resources) }
