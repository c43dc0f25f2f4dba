package hostile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeKaotos writes n Kaoto specs and a ConfigMap each into dir/specs.yaml;
// wave(i) is the apply-order of spec i ("" for none). Enough objects that
// writing the tree takes a while, so that kills land in every phase.
func writeKaotos(t *testing.T, dir string, n int, wave func(i int) string, data string) {
	t.Helper()
	mustMkdir(t, dir)
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: designer-%d\n  namespace: team-%d\n", i, i%7)
		if w := wave(i); w != "" {
			fmt.Fprintf(&b, "  annotations:\n    wavesmith.io/apply-order: %q\n", w)
		}
		fmt.Fprintf(&b, "spec:\n  ingress:\n    host: d%d.example.com\n", i)
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-%d\n  namespace: team-%d\ndata:\n  theme: %s\n", i, i%7, data)
	}
	if err := os.WriteFile(filepath.Join(dir, "specs.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// render runs a render that must succeed.
func mustRender(t *testing.T, work string, args ...string) outcome {
	t.Helper()
	o := run{dir: work, env: baseEnv(work), args: append([]string{"render"}, args...)}.exec(t)
	if o.code != 0 || o.crash() != "" {
		t.Fatalf("wavesmith %s: %s %s\n%s", strings.Join(args, " "), o.summary(), o.crash(), o.stderr)
	}
	return o
}

// replaceWith makes dir an exact copy of src.
func replaceWith(t *testing.T, dir, src string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(src, dir); err != nil {
		t.Fatal(err)
	}
}

// strays lists what lies in parent besides DIR: a killed or failed render
// may leave nothing behind once the next render ran. A lock file (a
// regular file named like one) is allowed to persist.
func strays(t *testing.T, parent, dirName string) []string {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() == dirName {
			continue
		}
		if strings.Contains(strings.ToLower(e.Name()), "lock") && e.Type().IsRegular() {
			continue
		}
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// killSeed chooses the kill points; HOSTILE_SEED replays another run.
func killSeed(t *testing.T) uint64 {
	seed := uint64(20261124)
	if s := os.Getenv("HOSTILE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("HOSTILE_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (set HOSTILE_SEED to replay another)", seed)
	return seed
}

// markerFile is outtree.MarkerFile: the journal of an in-place update a
// killed render left in the tree.
const markerFile = ".wavesmith-tree.rendering"

// treeState says what a killed render left at DIR: the old tree, the new
// one, a tree marked as interrupted (it holds the journal of the update:
// check refuses it, the next render finishes it), or a mix of old and new
// files without the mark, which the guarantee rules out.
func treeState(snap snapshot, oldDigest, newDigest string) string {
	_, marked := snap[markerFile]
	switch {
	case snap.digest() == oldDigest:
		return "old tree"
	case snap.digest() == newDigest:
		return "new tree"
	case marked:
		return "marked as interrupted"
	}
	return "a mixed tree"
}

// TestKillDuringTreeSwap SIGKILLs 'render -o DIR --flux' at random points
// while it updates an existing tree: DIR must always exist and be exactly
// the old tree, the new tree, or a tree marked as interrupted that check
// refuses; the next render must finish the new tree (rendering over it)
// and leave nothing of the killed one behind.
func TestKillDuringTreeSwap(t *testing.T) {
	needBinary(t)
	const kills = 50
	work := t.TempDir()
	mustMkdir(t, filepath.Join(work, "home"), filepath.Join(work, "tmp"))
	inA, inB := filepath.Join(work, "in-a"), filepath.Join(work, "in-b")
	writeKaotos(t, inA, 80, func(int) string { return "" }, "dark")
	// B moves every third spec to wave 2 (Flux handoff stubs in wave 0)
	// and changes every ConfigMap.
	writeKaotos(t, inB, 80, func(i int) string {
		if i%3 == 0 {
			return "2"
		}
		return ""
	}, "light")
	parent := filepath.Join(work, "trees")
	dir := filepath.Join(parent, "out")
	flags := []string{"-o", dir, "--flux", "--tree-path", "clusters/prod/rendered"}

	// The old tree, the new tree rendered over it, and the new tree
	// rendered over itself (what a render after a kill may find).
	mustRender(t, work, append([]string{inA}, flags...)...)
	oldTree := filepath.Join(work, "old-tree")
	if err := copyTree(dir, oldTree); err != nil {
		t.Fatal(err)
	}
	oldDigest := mustTake(t, dir).digest()
	var durations []time.Duration
	for i := 0; i < 3; i++ {
		replaceWith(t, dir, oldTree)
		durations = append(durations, mustRender(t, work, append([]string{inB}, flags...)...).wall)
	}
	newSnap := mustTake(t, dir)
	newDigest := newSnap.digest()
	mustRender(t, work, append([]string{inB}, flags...)...)
	againSnap := mustTake(t, dir)
	if newDigest == oldDigest {
		t.Fatal("the old and the new tree are equal: the experiment would prove nothing")
	}
	// The control: a mix of old and new files without the mark is seen
	// as one.
	mixed := snapshot{}
	for k, v := range mustTake(t, oldTree) {
		mixed[k] = v
	}
	n := 0
	for k, v := range newSnap {
		if n++; n%2 == 0 {
			mixed[k] = v
		}
	}
	if got := treeState(mixed, oldDigest, newDigest); got != "a mixed tree" {
		t.Fatalf("a mix of the old and the new tree is classified %q: the experiment could not fail", got)
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	span := durations[1] * 6 / 5
	t.Logf("old tree %s, new tree %s (%d entries); an uninterrupted render takes %s; kills land in [0, %s]", oldDigest, newDigest, len(newSnap), durations[1].Round(time.Millisecond), span.Round(time.Millisecond))

	rng := rand.New(rand.NewPCG(killSeed(t), 0))
	var problems []string
	counts := map[string]int{}
	for i := 0; i < kills; i++ {
		replaceWith(t, dir, oldTree)
		delay := time.Duration(rng.Int64N(int64(span) + 1))
		ctx, cancel := context.WithTimeout(context.Background(), killAfter)
		cmd := run{dir: work, env: baseEnv(work), args: append([]string{"render", inB}, flags...)}.command(ctx)
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
			counts["finished before the kill"]++
		case <-time.After(delay):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		cancel()

		snap, err := take(dir)
		info, lerr := os.Lstat(dir)
		state := ""
		switch {
		case lerr != nil || !info.IsDir():
			problems = append(problems, fmt.Sprintf("kill %d after %s: DIR does not exist as a folder (%v)", i, delay, lerr))
			counts["DIR missing"]++
		case err != nil:
			problems = append(problems, fmt.Sprintf("kill %d after %s: reading DIR: %v", i, delay, err))
		default:
			state = treeState(snap, oldDigest, newDigest)
			counts[state]++
			switch state {
			case "a mixed tree":
				problems = append(problems, fmt.Sprintf("kill %d after %s: DIR is neither the old nor the new tree, and not marked: %s", i, delay, strings.Join(first(changes(newSnap, snap), 5), "; ")))
			case "marked as interrupted":
				o := run{dir: work, env: baseEnv(work), args: []string{"check", "-o", dir}}.exec(t)
				if o.code != 1 || !strings.Contains(string(o.stderr), "interrupted") {
					problems = append(problems, fmt.Sprintf("kill %d: check of a tree marked as interrupted: %s, want exit 1 naming the interruption: %s", i, o.summary(), strings.TrimSpace(string(o.stderr))))
				}
			}
		}
		leftover := strays(t, parent, "out")
		if len(leftover) > 0 {
			counts["left temporary entries"]++
		}

		// The next render finishes the job and removes what the killed
		// one left.
		o := run{dir: work, env: baseEnv(work), args: append([]string{"render", inB}, flags...)}.exec(t)
		if o.code != 0 || o.crash() != "" {
			problems = append(problems, fmt.Sprintf("kill %d: the render after it failed: %s %s: %s", i, o.summary(), o.crash(), strings.TrimSpace(string(o.stderr))))
			continue
		}
		// Finishing a marked tree makes it the new one: the render
		// then renders over the new tree.
		want := newSnap
		if state == "new tree" || state == "marked as interrupted" {
			want = againSnap
		}
		if got := mustTake(t, dir); got.digest() != want.digest() {
			problems = append(problems, fmt.Sprintf("kill %d: the render after it wrote another tree (-want +got):\n%s", i, cmp.Diff(want, got)))
		}
		if s := strays(t, parent, "out"); len(s) > 0 {
			problems = append(problems, fmt.Sprintf("kill %d after %s: the next render left %s beside DIR (killed render's leftovers: %s)", i, delay, strings.Join(s, ", "), strings.Join(leftover, ", ")))
			for _, e := range s { // start the next kill clean
				os.RemoveAll(filepath.Join(parent, e))
			}
		}
	}
	t.Logf("%d kills: %v", kills, counts)
	if len(problems) > 0 {
		t.Errorf("%d problems in %d kills (%v):\n  %s", len(problems), kills, counts, strings.Join(first(problems, 15), "\n  "))
	}
}

// lockFailure reports whether stderr is a clean refusal because another
// render holds DIR: it names DIR and the lock, and is no raw file system
// error of a lost race.
func lockFailure(stderr, dir string) bool {
	s := strings.ToLower(stderr)
	for _, raw := range []string{"rename ", "file exists", "directory not empty", "no such file or directory", "panic"} {
		if strings.Contains(s, raw) {
			return false
		}
	}
	return strings.Contains(s, "lock") && strings.Contains(stderr, dir)
}

// TestConcurrentRendersOneDir starts 16 renders of two different inputs
// into one DIR at once, in six rounds (big trees, whose writes overlap
// long, and tiny ones, whose swaps fall close together): each render
// either succeeds or fails with the lock message, and DIR ends as exactly
// one complete tree, with nothing left beside it.
func TestConcurrentRendersOneDir(t *testing.T) {
	needBinary(t)
	const renders, rounds = 16, 6
	work := t.TempDir()
	mustMkdir(t, filepath.Join(work, "home"), filepath.Join(work, "tmp"))
	inputs := map[string]string{}
	for name, n := range map[string]int{"big": 40, "tiny": 1} {
		inputs[name+"-a"] = filepath.Join(work, "in-"+name+"-a")
		inputs[name+"-b"] = filepath.Join(work, "in-"+name+"-b")
		writeKaotos(t, inputs[name+"-a"], n, func(int) string { return "" }, "dark")
		writeKaotos(t, inputs[name+"-b"], n, func(i int) string { return strconv.Itoa(i%3 + 1) }, "light")
	}
	parent := filepath.Join(work, "trees")
	dir := filepath.Join(parent, "out")

	// The complete trees (a plain tree does not depend on the one it
	// replaces), each rendered at DIR's depth: the tree record names the
	// inputs relative to the tree.
	trees := map[string]string{}
	for name, in := range inputs {
		d := filepath.Join(work, "tree-"+name, "out")
		mustRender(t, work, in, "-o", d)
		trees[mustTake(t, d).digest()] = name
	}
	if len(trees) != len(inputs) {
		t.Fatal("two inputs render the same tree: the experiment would prove nothing")
	}
	replaceWith(t, dir, filepath.Join(work, "tree-big-a", "out"))

	var problems []string
	results := map[string]int{}
	for round := 0; round < rounds; round++ {
		size := "big"
		if round%2 == 1 {
			size = "tiny"
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < renders; i++ {
			in := inputs[size+"-a"]
			if i%2 == 1 {
				in = inputs[size+"-b"]
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				o := run{dir: work, env: baseEnv(work), args: []string{"render", in, "-o", dir}}.exec(t)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case o.crash() != "":
					problems = append(problems, fmt.Sprintf("round %d (%s), render %d: %s", round, size, i, o.crash()))
				case o.code == 0:
					results["succeeded"]++
				case o.code == 1 && lockFailure(string(o.stderr), dir):
					results["refused by the lock"]++
				default:
					results["failed otherwise"]++
					problems = append(problems, fmt.Sprintf("round %d (%s), render %d: %s, and not the lock message: %s", round, size, i, o.summary(), strings.TrimSpace(string(o.stderr))))
				}
			}()
		}
		close(start)
		wg.Wait()
		snap, err := take(dir)
		if err != nil {
			problems = append(problems, fmt.Sprintf("round %d (%s): DIR: %v", round, size, err))
		} else if name, ok := trees[snap.digest()]; !ok || !strings.HasPrefix(name, size) {
			problems = append(problems, fmt.Sprintf("round %d (%s): DIR is no complete tree of this round (%d entries)", round, size, len(snap)))
		}
		if s := strays(t, parent, "out"); len(s) > 0 {
			problems = append(problems, fmt.Sprintf("round %d (%s): left beside DIR: %s", round, size, strings.Join(s, ", ")))
		}
	}
	t.Logf("%d renders in %d rounds: %v", renders*rounds, rounds, results)
	if results["succeeded"] == 0 {
		problems = append(problems, "no render succeeded")
	}
	if len(problems) > 0 {
		t.Errorf("%d problems:\n  %s", len(problems), strings.Join(first(problems, 15), "\n  "))
	}
}

// first returns at most n elements of s.
func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... and %d more", len(s)-n))
	}
	return s
}
