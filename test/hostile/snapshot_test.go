package hostile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// hashLimit: files larger than this (the generated, often sparse, giants)
// are recorded by size and modification time instead of their content.
const hashLimit = 16 << 20

// snapshot records every entry under a folder, hidden ones included: its
// type, permissions and content (a hash), or a symlink's target. Special
// files (FIFOs, sockets, devices) are recorded by type only: they are
// never opened.
type snapshot map[string]string

// take walks root without following symlinks.
func take(root string) (snapshot, error) {
	s := snapshot{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode()
		switch {
		case mode.IsDir():
			s[rel] = fmt.Sprintf("dir %v", mode.Perm())
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			s[rel] = "symlink -> " + target
		case mode.IsRegular() && info.Size() > hashLimit:
			s[rel] = fmt.Sprintf("file %v size %d mtime %d", mode.Perm(), info.Size(), info.ModTime().UnixNano())
		case mode.IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			s[rel] = fmt.Sprintf("file %v sha256 %s", mode.Perm(), hex.EncodeToString(h.Sum(nil)))
		default:
			s[rel] = fmt.Sprintf("special %v", mode)
		}
		return nil
	})
	return s, err
}

// mustTake is take for folders the test made.
func mustTake(t interface{ Fatalf(string, ...any) }, root string) snapshot {
	s, err := take(root)
	if err != nil {
		t.Fatalf("snapshot of %s: %v", root, err)
	}
	return s
}

// without returns the snapshot less the entries at or below prefix.
func (s snapshot) without(prefixes ...string) snapshot {
	out := snapshot{}
next:
	for k, v := range s {
		for _, p := range prefixes {
			if k == p || strings.HasPrefix(k, p+"/") {
				continue next
			}
		}
		out[k] = v
	}
	return out
}

// changes lists, sorted, what differs from before to after.
func changes(before, after snapshot) []string {
	var out []string
	for k, v := range before {
		w, ok := after[k]
		switch {
		case !ok:
			out = append(out, "removed "+k)
		case v != w:
			out = append(out, fmt.Sprintf("changed %s (%s -> %s)", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, "created "+k)
		}
	}
	sort.Strings(out)
	return out
}

// digest is one hash over a whole snapshot: equal trees, equal digests.
func (s snapshot) digest() string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\x00", k, s[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
