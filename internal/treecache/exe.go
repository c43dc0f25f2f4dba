package treecache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// Executable returns the SHA-256 of the running executable's content: the
// build identity a cached render must share (a dev build's version says
// nothing of its code). Hashing tens of MiB on every run costs more than
// a cached render saves, so the digest is kept in the cache folder under
// the executable's path, device, inode, size, mtime and ctime (identity):
// replacing or rewriting the file changes one of them (ctime cannot be
// set back), and a stale or corrupt record is hashed again. The record is
// written by the next Put (or KeepExecutable, after a render that reused
// an entry), so that a failed render writes nothing.
func (c *Cache) Executable() (Sum, error) {
	var s Sum
	exe, err := os.Executable()
	if err != nil {
		return s, err
	}
	ident, err := identity(exe)
	if err != nil {
		return s, err
	}
	id := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s", exe, ident)))
	name := "exe-" + hex.EncodeToString(id[:16])
	if r, err := fsroot.OpenRoot(c.dir); err == nil {
		b, err := r.ReadFile(filepath.Join(c.dir, name))
		r.Close()
		if err == nil && len(b) == hex.EncodedLen(len(s)) {
			if _, err := hex.Decode(s[:], b); err == nil {
				return s, nil
			}
		}
	}
	f, err := os.Open(exe)
	if err != nil {
		return s, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return s, err
	}
	h.Sum(s[:0])
	c.exe.name, c.exe.hex = name, hex.EncodeToString(s[:]) // kept by the next Put
	return s, nil
}

// KeepExecutable writes the record of the executable's digest Executable
// computed, if it computed one: a render that reused an entry puts
// nothing, and would otherwise hash the executable again on every run
// (a rebuild that gives the same bytes keeps the key, not the identity).
func (c *Cache) KeepExecutable() {
	if c.exe.name != "" {
		if err := os.MkdirAll(c.dir, 0o700); err == nil {
			_ = c.writeFile(c.exe.name, []byte(c.exe.hex))
		}
	}
}
