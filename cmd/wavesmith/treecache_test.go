package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/internal/treecache"
)

// editRoot is a root of Kaoto specs and a Component whose kustomization
// reads comp/, edited at random.
type editRoot struct {
	t     *testing.T
	dir   string
	specs map[int]string // name index -> image tag and wave
	next  int
	cm    int
	// dbWave is the wave of the Component db, on which shop depends.
	dbWave int
	flags  []string
}

func (r *editRoot) write(rel, s string) {
	r.t.Helper()
	p := filepath.Join(r.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *editRoot) writeSpec(i int) {
	tag, wave, _ := strings.Cut(r.specs[i], "/")
	ann := ""
	if wave != "" {
		ann = fmt.Sprintf("  annotations:\n    wavesmith.io/apply-order: %q\n", wave)
	}
	r.write(fmt.Sprintf("specs/k%d.yaml", i), fmt.Sprintf("apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: k%d\n  namespace: team\n%sspec:\n  image: quay.io/kaotoio/kaoto-app:%s\n  ingress:\n    host: k%d.example.com\n", i, ann, tag, i))
}

func (r *editRoot) writeConfigMap() {
	r.write("comp/cm.yaml", fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop-settings\ndata:\n  version: %q\n", fmt.Sprint(r.cm)))
}

func newEditRoot(t *testing.T) *editRoot {
	r := &editRoot{t: t, dir: t.TempDir(), specs: map[int]string{}}
	t.Chdir(r.dir)
	if err := os.Mkdir(filepath.Join(r.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		r.specs[i] = "2.4.0/"
		r.writeSpec(i)
	}
	r.next = 4
	r.write("specs/comp.yaml", "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: shop\n  namespace: ops\nspec:\n  source:\n    kustomization:\n      path: ../comp\n  dependsOn:\n  - name: db\n")
	r.write("comp/kustomization.yaml", "resources:\n- cm.yaml\n")
	r.writeConfigMap()
	r.write("db/kustomization.yaml", "resources:\n- cm.yaml\n")
	r.write("db/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db-settings\ndata:\n  size: small\n")
	r.writeDB()
	return r
}

// writeDB writes the Component db at its wave: moving it moves shop,
// which depends on it, although shop's files did not change.
func (r *editRoot) writeDB() {
	r.write("specs/db.yaml", fmt.Sprintf("apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: db\n  namespace: ops\n  annotations:\n    wavesmith.io/apply-order: %q\nspec:\n  source:\n    kustomization:\n      path: ../db\n", fmt.Sprint(r.dbWave)))
}

// edit makes one random change and says which.
func (r *editRoot) edit(rng *rand.Rand) string {
	var keys []int
	for k := range r.specs {
		keys = append(keys, k)
	}
	pick := func() int { return keys[rng.IntN(len(keys))] }
	switch rng.IntN(8) {
	case 0:
		return "nothing"
	case 1:
		i := r.next
		r.next++
		r.specs[i] = "2.4.0/"
		r.writeSpec(i)
		return fmt.Sprintf("add k%d", i)
	case 2:
		i := pick()
		r.specs[i] = fmt.Sprintf("2.4.%d/", rng.IntN(5))
		r.writeSpec(i)
		return fmt.Sprintf("change k%d", i)
	case 3:
		i := pick()
		tag, _, _ := strings.Cut(r.specs[i], "/")
		r.specs[i] = tag + "/" + fmt.Sprint(rng.IntN(3)+1)
		r.writeSpec(i)
		return fmt.Sprintf("move k%d to wave %s", i, r.specs[i])
	case 4:
		if len(keys) == 1 {
			return "nothing"
		}
		i := pick()
		delete(r.specs, i)
		if err := os.Remove(filepath.Join(r.dir, "specs", fmt.Sprintf("k%d.yaml", i))); err != nil {
			r.t.Fatal(err)
		}
		return fmt.Sprintf("remove k%d", i)
	case 5:
		r.cm++
		r.writeConfigMap()
		return "change the file the Component reads"
	case 6:
		r.dbWave = rng.IntN(4)
		r.writeDB()
		return fmt.Sprintf("move db, on which shop depends, to wave %d", r.dbWave)
	default:
		settings := [][]string{nil, {"--platform", "openshift"}, {"--namespace", "elsewhere"}}
		r.flags = settings[rng.IntN(len(settings))]
		return fmt.Sprintf("settings %q", r.flags)
	}
}

// render renders the root into out, with the cache folder cache ("off":
// none), and fails the test unless it succeeds.
func (r *editRoot) render(out, cache string, tree []string) {
	r.t.Helper()
	r.t.Setenv(treecache.Env, cache)
	args := append([]string{"render", filepath.Join(r.dir, "specs"), "--root", r.dir, "-o", filepath.Join(r.dir, out), "-q"}, tree...)
	if code, _, stderr := wavesmith(r.t, "", append(args, r.flags...)...); code != 0 {
		r.t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := outtree.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// randomEdits applies steps random edits and renders each state twice:
// incrementally into inc with the tree cache, and with no cache into full
// over a copy of the same previous tree (Flux handoffs depend on it).
// It returns the steps whose trees differ.
func randomEdits(t *testing.T, seed uint64, steps int, tree []string) (differ []string, hits int64) {
	r := newEditRoot(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	cache := t.TempDir()
	inc, full := filepath.Join(r.dir, "inc"), filepath.Join(r.dir, "full")
	before, reusedBefore := treeCacheHits.Load(), outputsReused.Load()
	for step := 0; step < steps; step++ {
		what := "first render"
		if step > 0 {
			what = r.edit(rng)
		}
		if err := os.RemoveAll(full); err != nil {
			t.Fatal(err)
		}
		if step > 0 {
			if err := os.CopyFS(full, os.DirFS(inc)); err != nil {
				t.Fatal(err)
			}
		}
		r.render("full", "off", tree)
		r.render("inc", cache, tree)
		if diff := cmp.Diff(readTree(t, full), readTree(t, inc)); diff != "" {
			differ = append(differ, fmt.Sprintf("step %d (%s): -full +incremental:\n%s", step, what, diff))
		}
		t.Setenv(treecache.Env, cache)
		if code, stdout, stderr := wavesmith(t, "", append([]string{"check", "-o", inc, "--root", r.dir}, r.flags...)...); code != 0 {
			differ = append(differ, fmt.Sprintf("step %d (%s): check of the tree just rendered: exit %d\n%s%s", step, what, code, stdout, stderr))
		}
	}
	if outputsReused.Load() == reusedBefore {
		differ = append(differ, "no render took a spec's output from the records of the last: the comparison proves nothing for them")
	}
	return differ, treeCacheHits.Load() - before
}

func TestTreeCacheRandomEdits(t *testing.T) {
	for _, mode := range []struct {
		name string
		tree []string
	}{
		{"plain", nil},
		{"flux-argocd", []string{"--flux", "--argocd", "--tree-path", "rendered", "--argocd-repo", "https://git.example.com/platform.git"}},
	} {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed-%d", mode.name, seed), func(t *testing.T) {
				refs := refsKept.Load()
				differ, hits := randomEdits(t, seed, 12, mode.tree)
				if refsKept.Load() == refs {
					t.Error("no cache entry held a file as a reference to the records: the comparison proves nothing for them")
				}
				for _, d := range differ {
					t.Error(d)
				}
				if hits == 0 {
					t.Error("no render or check took its tree from the cache: the comparison proves nothing")
				}
				t.Logf("%d trees taken from the cache", hits)
			})
		}
	}
}

// TestTreeCacheRandomEditsTrusted is TestTreeCacheRandomEdits with the
// tree's stat record trusted at once (no racy margin), so that unchanged
// files of the tree are stat'd, not read, from one step to the next.
func TestTreeCacheRandomEditsTrusted(t *testing.T) {
	defer outtree.SetRacyMarginForTest(0)()
	for _, mode := range []struct {
		name string
		tree []string
	}{
		{"plain", nil},
		{"flux-argocd", []string{"--flux", "--argocd", "--tree-path", "rendered", "--argocd-repo", "https://git.example.com/platform.git"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			known, intact := lastKnown.Load(), treesIntact.Load()
			differ, hits := randomEdits(t, 4, 12, mode.tree)
			for _, d := range differ {
				t.Error(d)
			}
			if hits == 0 {
				t.Error("no render or check took its tree from the cache: the comparison proves nothing")
			}
			if lastKnown.Load() == known {
				t.Error("no render of changed inputs compared the tree with the record of the last: the comparison proves nothing for them")
			}
			if treesIntact.Load() == intact {
				t.Error("no render or check found its cached tree intact: the comparison proves nothing for them")
			}
		})
	}
}

// TestCheckAfterRenderIntact: a check right after a render, the tree's
// files as the render left them, finds the cached tree intact on disk
// without loading its files: the files the render wrote are racy (just
// written), and their digests in the tree's record decide (outtree.Index
// Sums); so after a render that changed one spec. Removing the digests
// (the control, by hand) makes each check load the entry and read the
// tree. With no racy margin, the files the check read are older than its
// walk, and it stores the record of that walk (the tree's record file
// changes), which trusts them: the next check reads none of them (the
// wiring's control, by hand: without it the record stays).
func TestCheckAfterRenderIntact(t *testing.T) {
	for _, margin := range []bool{true, false} {
		t.Run(fmt.Sprintf("racy margin %v", margin), func(t *testing.T) {
			if !margin {
				t.Cleanup(outtree.SetRacyMarginForTest(0))
			}
			r := newEditRoot(t)
			cache := t.TempDir()
			out := filepath.Join(r.dir, "out")
			record := filepath.Join(cache, treecache.Slot(out)+".tree")
			for step, edit := range []func(){
				func() {},
				func() { r.specs[1] = "2.4.3/"; r.writeSpec(1) },
			} {
				edit()
				r.render("out", cache, nil)
				before, err := os.ReadFile(record)
				if err != nil {
					t.Fatal(err)
				}
				intact := treesIntact.Load()
				if code, stdout, stderr := wavesmith(t, "", "check", filepath.Join(r.dir, "specs"), "--root", r.dir, "-o", out); code != 0 {
					t.Fatalf("step %d: check of the tree just rendered: exit %d\n%s%s", step, code, stdout, stderr)
				}
				if treesIntact.Load() == intact {
					t.Errorf("step %d: the check right after the render did not find the tree intact", step)
				}
				after, err := os.ReadFile(record)
				if err != nil {
					t.Fatal(err)
				}
				if !margin && bytes.Equal(before, after) {
					t.Errorf("step %d: the check kept the render's record of the tree, want the record of its own walk", step)
				}
			}
		})
	}
}

// TestIntactRenderRemovesLeftovers: a render killed after its swap, while
// it removed the tree it replaced, leaves that tree beside DIR, and DIR
// holds the new tree whole. The next render of the same inputs finds DIR
// intact and writes nothing; it still removes the leftover (Hold), which
// a `git add -A` would otherwise commit.
func TestIntactRenderRemovesLeftovers(t *testing.T) {
	r := newEditRoot(t)
	cache := t.TempDir()
	r.render("out", cache, nil)
	r.render("out", cache, nil) // the tree's record, its files no longer racy
	leftover := filepath.Join(r.dir, ".out.new-20261127")
	if err := os.MkdirAll(filepath.Join(leftover, "apps"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(leftover, "apps", "old.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	intact := treesIntact.Load()
	r.render("out", cache, nil)
	if treesIntact.Load() == intact {
		t.Fatal("the render did not find the tree intact: this test shows nothing")
	}
	if _, err := os.Lstat(leftover); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a killed render's leftover stays beside the tree after a render that found it intact (%v)", err)
	}
}

// TestTreeCacheStaleKeyControl: with a key that leaves the inputs' bytes
// out, the comparison of TestTreeCacheRandomEdits fails.
func TestTreeCacheStaleKeyControl(t *testing.T) {
	staleKeyForTest = true
	defer func() { staleKeyForTest = false }()
	differ, _ := randomEdits(t, 1, 12, nil)
	if len(differ) == 0 {
		t.Fatal("a stale key went unnoticed: the comparison cannot fail")
	}
	t.Logf("%d steps differ with a stale key, as they must", len(differ))
}

// TestTreeCacheSkipsNondeterministicTemplates: a chart whose template
// calls a function whose result changes on every call (here the clock) is
// rendered again every time, never taken from the cache: a cached tree
// must be what a full render gives. The same chart without the call is
// the control: its second render is a hit.
func TestTreeCacheSkipsNondeterministicTemplates(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		hit         bool
	}{
		{"the clock", `{{ now | date "2006-01-02T15:04:05.000000000" }}`, false},
		{"the control: a constant", `fixed`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			t.Chdir(root)
			t.Setenv(treecache.Env, t.TempDir())
			if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			r := &editRoot{t: t, dir: root}
			r.write("chart/Chart.yaml", "apiVersion: v2\nname: clock\nversion: 0.1.0\n")
			r.write("chart/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: clock\ndata:\n  at: \""+tc.value+"\"\n")
			r.write("specs/comp.yaml", "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: clock\n  namespace: ops\nspec:\n  source:\n    chart:\n      path: ../chart\n")
			for i := 0; i < 2; i++ {
				before := treeCacheHits.Load()
				r.render("out", os.Getenv(treecache.Env), nil)
				if hit := treeCacheHits.Load() > before; i == 1 && hit != tc.hit {
					t.Errorf("second render taken from the cache: %v, want %v", hit, tc.hit)
				}
			}
		})
	}
}

// TestTreeCacheStatRecordFindsEdits: with the tree's stat record trusted
// at once (no racy margin), render -o and check still see every edit of
// the tree: a file rewritten in place with its size and mtime kept
// (ctime), a file replaced by another inode, a spoiled record (every file
// read); render -o puts the tree back each time, whether its inputs are
// unchanged (the tree from the cache) or another spec changed too (a
// render that compares with the record of the last tree: Cache.Last).
func TestTreeCacheStatRecordFindsEdits(t *testing.T) {
	defer outtree.SetRacyMarginForTest(0)()
	r := newEditRoot(t)
	cache := t.TempDir()
	out := filepath.Join(r.dir, "out")
	check := func(want int, what string) string {
		t.Helper()
		t.Setenv(treecache.Env, cache)
		code, stdout, stderr := wavesmith(t, "", "check", "-o", out, "--root", r.dir)
		if code != want {
			t.Fatalf("%s: check exit %d, want %d: %s%s", what, code, want, stdout, stderr)
		}
		return stdout
	}
	r.render("out", cache, nil)
	r.render("out", cache, nil) // a hit: the record is taken again
	check(0, "an unchanged tree")
	good := readTree(t, out)
	const p = "team/kaoto-k1/deployment-k1.yaml"
	name := filepath.Join(out, filepath.FromSlash(p))
	b, ok := good[p]
	if !ok {
		t.Fatalf("no %s in the tree", p)
	}
	edited := append([]byte(nil), b...)
	edited[len(edited)-2] ^= 1
	fi, err := os.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Dir(name)
	for _, c := range []struct {
		name string
		edit func()
		p    string // the file the diff names (default p)
	}{
		{"in place, size and mtime kept", func() {
			f, err := os.OpenFile(name, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(edited, 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := os.Chtimes(name, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"another inode", func() {
			if err := os.WriteFile(name+".tmp", edited, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(name+".tmp", fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(name+".tmp", name); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"an extra file, its folder's mtime put back", func() {
			dfi, err := os.Lstat(folder)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(folder, "extra.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(folder, dfi.ModTime(), dfi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, "team/kaoto-k1/extra.yaml"},
		{"a spoiled record", func() {
			records, _ := filepath.Glob(filepath.Join(cache, "*.tree"))
			if len(records) == 0 {
				t.Fatal("no record of the tree's files in the cache")
			}
			for _, rec := range records {
				rb, _ := os.ReadFile(rec)
				rb[len(rb)/2] ^= 1
				os.WriteFile(rec, rb, 0o600)
			}
			if err := os.WriteFile(name, edited, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		p := p
		if c.p != "" {
			p = c.p
		}
		for _, miss := range []bool{false, true} {
			c.edit()
			what := c.name
			if diff := check(1, what); !strings.Contains(diff, p) {
				t.Errorf("%s: the diff does not name %s:\n%s", what, p, diff)
			}
			if miss {
				// Another spec changes: the tree is rendered, and
				// compared with the record of the last.
				what += ", k2 changed"
				r.specs[2] = fmt.Sprintf("2.5.%d/", len(what))
				r.writeSpec(2)
			}
			before := treeCacheHits.Load()
			r.render("out", cache, nil)
			if hit := treeCacheHits.Load() > before; hit == miss {
				t.Fatalf("%s: tree taken from the cache: %v, want %v", what, hit, !miss)
			}
			got := readTree(t, out)
			if !miss {
				if diff := cmp.Diff(good, got); diff != "" {
					t.Errorf("%s: render -o did not put the tree back: -want +got:\n%s", what, diff)
				}
			} else if !bytes.Equal(got[p], good[p]) {
				t.Errorf("%s: render -o did not put %s back:\n%s", what, p, got[p])
			} else {
				good = got // k2's files changed
			}
			check(0, what+", rendered again")
			if fi, err = os.Lstat(name); err != nil {
				t.Fatal(err)
			}
		}
	}
}
