package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSpoiledTreeCache spoils the tree cache between two renders in every
// way a disk, a crash or a hostile user can: each render and check after
// it must still write and accept exactly the tree a render without the
// cache writes (a spoiled entry costs a full render, never a wrong tree),
// and none may hang on a FIFO.
func TestSpoiledTreeCache(t *testing.T) {
	needBinary(t)
	work := t.TempDir()
	mustMkdir(t, filepath.Join(work, "home"), filepath.Join(work, "tmp"))
	in, other := filepath.Join(work, "in"), filepath.Join(work, "in-other")
	writeKaotos(t, in, 30, func(int) string { return "" }, "dark")
	writeKaotos(t, other, 30, func(int) string { return "" }, "light")
	cache := filepath.Join(work, "cache")
	env := func(c string) []string { return append(baseEnv(work), "WAVESMITH_CACHE_DIR="+c) }
	render := func(c, input, dir string) outcome {
		o := run{dir: work, env: env(c), args: []string{"render", input, "-o", dir, "--flux", "--tree-path", "clusters/prod"}}.exec(t)
		if o.code != 0 || o.crash() != "" {
			t.Fatalf("render %s: %s %s\n%s", dir, o.summary(), o.crash(), o.stderr)
		}
		return o
	}
	// The reference, without a cache, at the same depth (the record names
	// the inputs relative to the tree).
	ref := filepath.Join(work, "ref", "out")
	render("off", in, ref)
	want := mustTake(t, ref).digest()

	// The entry another input left for the same output folder.
	dir := filepath.Join(work, "trees", "out")
	otherCache := filepath.Join(work, "cache-other")
	render(otherCache, other, dir)
	os.RemoveAll(dir)

	index := func(t *testing.T) string {
		names, _ := filepath.Glob(filepath.Join(cache, "*.idx"))
		if len(names) != 1 {
			t.Fatalf("%d cache indexes, want 1", len(names))
		}
		return names[0]
	}
	chunks := func(t *testing.T, idx string) []string {
		names, _ := filepath.Glob(strings.TrimSuffix(idx, ".idx") + "-*.chunk")
		if len(names) == 0 {
			t.Fatal("no cache chunk")
		}
		return names
	}
	outChunks := func(t *testing.T, idx string) []string {
		names, _ := filepath.Glob(strings.TrimSuffix(idx, ".idx") + "-*.outchunk")
		if len(names) == 0 {
			t.Fatal("no output records chunk")
		}
		return names
	}
	spoilers := map[string]func(t *testing.T){
		"a flipped byte in a chunk": func(t *testing.T) {
			c := chunks(t, index(t))[0]
			b, _ := os.ReadFile(c)
			b[len(b)/2] ^= 0x20
			os.WriteFile(c, b, 0o600)
		},
		"a truncated index": func(t *testing.T) {
			i := index(t)
			b, _ := os.ReadFile(i)
			os.WriteFile(i, b[:len(b)/2], 0o600)
		},
		"a chunk replaced by a FIFO": func(t *testing.T) {
			c := chunks(t, index(t))[0]
			os.Remove(c)
			if err := syscall.Mkfifo(c, 0o600); err != nil {
				t.Fatalf("mkfifo: %v", err)
			}
		},
		"the entry of another input in its place": func(t *testing.T) {
			i := index(t)
			names, _ := filepath.Glob(filepath.Join(otherCache, "*"))
			for _, n := range names {
				if base := filepath.Base(n); !strings.HasPrefix(base, "exe-") {
					b, _ := os.ReadFile(n)
					os.WriteFile(filepath.Join(cache, base), b, 0o600)
				}
			}
			if _, err := os.Stat(i); err != nil {
				t.Fatalf("the other entry is not in the same slot: %v", err)
			}
		},
		// The per-spec output records are read when the entry misses:
		// each of these spoils the entry's index too.
		"a flipped byte in an output records chunk": func(t *testing.T) {
			i := index(t)
			c := outChunks(t, i)[0]
			b, _ := os.ReadFile(c)
			b[len(b)/2] ^= 0x20
			os.WriteFile(c, b, 0o600)
			os.WriteFile(i, nil, 0o600)
		},
		"a truncated output records index": func(t *testing.T) {
			i := index(t)
			o := strings.TrimSuffix(i, ".idx") + ".outs"
			b, _ := os.ReadFile(o)
			os.WriteFile(o, b[:len(b)-1], 0o600)
			os.WriteFile(i, nil, 0o600)
		},
		"an output records chunk replaced by a FIFO": func(t *testing.T) {
			i := index(t)
			c := outChunks(t, i)[0]
			os.Remove(c)
			if err := syscall.Mkfifo(c, 0o600); err != nil {
				t.Fatalf("mkfifo: %v", err)
			}
			os.WriteFile(i, nil, 0o600)
		},
		"a flipped byte in the record of the tree's files": func(t *testing.T) {
			names, _ := filepath.Glob(filepath.Join(cache, "*.tree"))
			if len(names) == 0 {
				t.Fatal("no record of the tree's files in the cache")
			}
			for _, n := range names {
				b, _ := os.ReadFile(n)
				b[len(b)/2] ^= 0x20
				os.WriteFile(n, b, 0o600)
			}
		},
		"an executable digest of another build": func(t *testing.T) {
			names, _ := filepath.Glob(filepath.Join(cache, "exe-*"))
			for _, n := range names {
				os.WriteFile(n, []byte(strings.Repeat("0", 64)), 0o600)
			}
		},
	}
	for name, spoil := range spoilers {
		t.Run(name, func(t *testing.T) {
			os.RemoveAll(dir)
			os.RemoveAll(cache)
			render(cache, in, dir)
			spoil(t)
			os.RemoveAll(dir)
			render(cache, in, dir)
			if got := mustTake(t, dir).digest(); got != want {
				t.Errorf("with %s, the render wrote another tree than a render without the cache", name)
			}
			spoil(t)
			o := run{dir: work, env: env(cache), args: []string{"check", "-o", dir}}.exec(t)
			if o.code != 0 || o.crash() != "" {
				t.Errorf("with %s, check of the right tree: %s %s\n%s%s", name, o.summary(), o.crash(), o.stdout, o.stderr)
			}
		})
	}
}
