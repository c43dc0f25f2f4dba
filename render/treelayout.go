package render

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
//
// The paths are substrings of a few large strings and the folders'
// kustomization.yaml files share one buffer (each capped at its own
// length): a 10,000-spec tree is made in a handful of allocations.
func (r *Result) Tree() map[string][]byte {
	l := r.layout()
	files := make(map[string][]byte, len(r.Items)+len(l.dirs)+1)
	for i, it := range r.Items {
		files[l.paths[i]] = it.YAML
	}
	dirList := make([]string, 0, len(l.dirs))
	keySize, fileSize := 0, 0
	for f, d := range l.dirs {
		if names := l.folder(f); len(names) > 0 {
			dirList = append(dirList, d)
			keySize += len(d) + len("/kustomization.yaml")
			fileSize += len(gitops.KustomizationHead) + gitops.ResourcesSize("", names)
		}
	}
	var keys strings.Builder
	keys.Grow(keySize)
	buf := make([]byte, 0, fileSize)
	for f, d := range l.dirs {
		names := l.folder(f)
		if len(names) == 0 {
			continue
		}
		k := keys.Len()
		keys.WriteString(d)
		keys.WriteString("/kustomization.yaml")
		b := len(buf)
		buf = gitops.AppendResources(append(buf, gitops.KustomizationHead...), "", names)
		files[keys.String()[k:]] = buf[b:len(buf):len(buf)]
	}
	slices.Sort(dirList)
	files["kustomization.yaml"] = KustomizationFile(dirList)
	return files
}

// Paths returns the tree path of each item, in the order of Items:
// <namespace>/<kind>-<name>/<file> for specs and their children,
// _objects/<file> for the rest. Every segment is one safe file name
// (safeSegment), whatever the object's name and namespace, and paths are
// unique even on case-insensitive file systems: no name can reach outside
// the tree or overwrite another object's file.
func (r *Result) Paths() []string { return r.layout().paths }

// treeLayout is where the items of a result go in the tree.
type treeLayout struct {
	// dirs are the folders: the specs', by spec index, then
	// PassThroughDir.
	dirs []string
	// paths are the items' files, by item index: folder, "/", file name.
	paths []string
	// names are the file names of each folder in item order: folder f's
	// are names[start[f]:start[f+1]] (substrings of paths).
	names []string
	start []int
}

// folder returns the file names of folder f, in item order.
func (l *treeLayout) folder(f int) []string { return l.names[l.start[f]:l.start[f+1]] }

// smallFolder is the number of files up to which a folder's names are
// compared one by one for uniqueness; a larger folder gets a map.
const smallFolder = 32

// layout returns the folder and file name of each item (Paths). Every
// folder and file name is a safe segment, lower case: names compare
// without case as they are.
//
// Every spec has a folder of its own (specDirs), so a file name is
// unique when no earlier item of the same spec (or, for objects of no
// spec, of the pass-through folder) took it: the few names of a spec
// are compared one by one, no map of every path is needed.
func (r *Result) layout() *treeLayout {
	pass := len(r.Specs) // the folder index of PassThroughDir
	l := &treeLayout{dirs: r.specDirs(), paths: make([]string, len(r.Items)),
		names: make([]string, len(r.Items)), start: make([]int, pass+2)}
	size := 0
	for _, it := range r.Items {
		f := pass
		if it.Spec >= 0 {
			f = it.Spec
		}
		l.start[f+1]++
		size += len(l.dirs[f]) + len(it.Key.Kind) + len(it.Key.Name) + len("/-.yaml")
	}
	for f := 1; f < len(l.start); f++ {
		l.start[f] += l.start[f-1]
	}
	n := folderNames{l: l, next: slices.Clone(l.start[:pass+1])}
	var b strings.Builder
	b.Grow(size)
	var p []byte // the candidate path: folder, '/', file name
	for i, it := range r.Items {
		f := pass
		if it.Spec >= 0 {
			f = it.Spec
		}
		dir := l.dirs[f]
		p = append(append(p[:0], dir...), '/')
		p = n.fileName(p, f, it.Key, f == pass)
		k := b.Len()
		b.Write(p)
		path := b.String()[k:]
		l.paths[i] = path
		n.add(f, path[len(dir)+1:])
	}
	return l
}

// folderNames are the file names taken in each folder so far.
type folderNames struct {
	l *treeLayout
	// next is, per folder, where its next name goes in l.names.
	next []int
	// big holds the names of folders of more than smallFolder files.
	big map[int]map[string]bool
}

func (n *folderNames) taken(f int, name []byte) bool {
	if n.l.start[f+1]-n.l.start[f] > smallFolder {
		return n.big[f][string(name)]
	}
	for _, s := range n.l.names[n.l.start[f]:n.next[f]] {
		if s == string(name) {
			return true
		}
	}
	return false
}

func (n *folderNames) add(f int, name string) {
	n.l.names[n.next[f]] = name
	n.next[f]++
	if n.l.start[f+1]-n.l.start[f] > smallFolder {
		if n.big == nil {
			n.big = map[int]map[string]bool{}
		}
		m := n.big[f]
		if m == nil {
			m = make(map[string]bool, n.l.start[f+1]-n.l.start[f])
			n.big[f] = m
		}
		m[name] = true
	}
}

// fileName appends to p (the folder f and '/') the file name of k:
// <kind>-<name>.yaml, prefixed by the namespace in the pass-through
// folder, with the group added when two objects would share a name, then
// -2, -3, ... before .yaml until no earlier file of the folder has it.
func (n *folderNames) fileName(p []byte, f int, k manifest.Key, pass bool) []byte {
	dirLen := len(p)
	if pass && k.Namespace != "" {
		p = append(append(p, k.Namespace...), "--"...)
	}
	p = append(appendLower(p, k.Kind), '-')
	p = append(p, k.Name...)
	if !isSafeSegment(p[dirLen:]) {
		s := safeSegment(string(p[dirLen:]))
		p = append(p[:dirLen], s...)
	}
	baseLen := len(p)
	p = append(p, ".yaml"...)
	if k.Group != "" && n.taken(f, p[dirLen:]) {
		s := safeSegment(string(p[dirLen:baseLen]) + "." + k.Group)
		p = append(append(p[:dirLen], s...), ".yaml"...)
	}
	if n.taken(f, p[dirLen:]) {
		stem := string(p[dirLen : len(p)-len(".yaml")])
		for i := 2; n.taken(f, p[dirLen:]); i++ {
			p = append(append(p[:dirLen], stem...), '-')
			p = append(strconv.AppendInt(p, int64(i), 10), ".yaml"...)
		}
	}
	return p
}

// appendLower appends s in lower case (strings.ToLower).
func appendLower(p []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(p, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		p = append(p, c)
	}
	return p
}

// specDirs returns the folder of each spec, <namespace>/<kind>-<name>,
// made unique (-2, -3, ... at its end, before a .yaml ending) in the
// order of the specs, then PassThroughDir.
func (r *Result) specDirs() []string {
	dirs := make([]string, len(r.Specs)+1)
	size := 0
	for _, s := range r.Specs {
		size += len(s.Key.Namespace) + len(s.Key.Kind) + len(s.Key.Name) + len("/-")
	}
	var b strings.Builder
	b.Grow(size)
	var p []byte
	for i, s := range r.Specs {
		p = append(appendSegment(p[:0], s.Key.Namespace), '/')
		ns := len(p)
		p = append(appendLower(p, s.Key.Kind), '-')
		p = append(p, s.Key.Name...)
		if !isSafeSegment(p[ns:]) {
			seg := safeSegment(string(p[ns:]))
			p = append(p[:ns], seg...)
		}
		k := b.Len()
		b.Write(p)
		dirs[i] = b.String()[k:]
	}
	dirs[len(r.Specs)] = PassThroughDir
	used := make(map[string]bool, len(dirs))
	used[PassThroughDir] = true
	for i, d := range dirs[:len(r.Specs)] {
		if used[d] {
			stem, ext := d, ""
			if strings.HasSuffix(d, ".yaml") {
				stem, ext = strings.TrimSuffix(d, ".yaml"), ".yaml"
			}
			for j := 2; used[d]; j++ {
				d = stem + "-" + strconv.Itoa(j) + ext
			}
			dirs[i] = d
		}
		used[d] = true
	}
	return dirs
}

// appendSegment appends safeSegment(s).
func appendSegment(p []byte, s string) []byte {
	if isSafeSegment(s) {
		return append(p, s...)
	}
	return append(p, safeSegment(s)...)
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

func isSafeSegment[S string | []byte](s S) bool {
	if len(s) == 0 || len(s) > maxSegment {
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
