package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
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
// _objects/<file> for the rest. Every segment is one safe file name
// (safeSegment), whatever the object's name and namespace, and paths are
// unique even on case-insensitive file systems: no name can reach outside
// the tree or overwrite another object's file.
func (r *Result) Paths() []string {
	specDirs := make([]string, len(r.Specs))
	usedDirs := map[string]bool{strings.ToLower(PassThroughDir): true}
	for i, s := range r.Specs {
		specDirs[i] = unique(specDir(s.Key), "", usedDirs)
	}
	paths := make([]string, len(r.Items))
	used := map[string]bool{}
	for i, it := range r.Items {
		dir := PassThroughDir
		if it.Spec >= 0 {
			dir = specDirs[it.Spec]
		}
		paths[i] = dir + "/" + fileName(it.Key, dir, used)
	}
	return paths
}

// specDir is the tree folder of a spec: <namespace>/<kind>-<name>.
func specDir(k manifest.Key) string {
	return safeSegment(k.Namespace) + "/" + safeSegment(strings.ToLower(k.Kind)+"-"+k.Name)
}

// fileName is <kind>-<name>.yaml, prefixed by the namespace in the
// pass-through folder, with the group added when two objects would share
// a name.
func fileName(k manifest.Key, dir string, used map[string]bool) string {
	base := strings.ToLower(k.Kind) + "-" + k.Name
	if dir == PassThroughDir && k.Namespace != "" {
		base = k.Namespace + "--" + base
	}
	base = safeSegment(base)
	name := base + ".yaml"
	if used[strings.ToLower(dir+"/"+name)] && k.Group != "" {
		name = safeSegment(base+"."+k.Group) + ".yaml"
	}
	return unique(name, dir+"/", used)
}

// unique returns name, or name with -2, -3, ... before its extension,
// the first whose prefix+name is not used (compared without case), and
// marks it used.
func unique(name, prefix string, used map[string]bool) string {
	stem, ext := name, ""
	if strings.HasSuffix(name, ".yaml") {
		stem, ext = strings.TrimSuffix(name, ".yaml"), ".yaml"
	}
	for i := 2; used[strings.ToLower(prefix+name)]; i++ {
		name = fmt.Sprintf("%s-%d%s", stem, i, ext)
	}
	used[strings.ToLower(prefix+name)] = true
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
