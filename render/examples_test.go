package render

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/golden"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/manifest"
)

const examples = "../testdata/examples"

func renderExamples(t testing.TB, p generators.Platform) *Result {
	t.Helper()
	return renderExamplesWith(t, Options{Platform: p}, nil)
}

// renderExamplesWith renders the examples (edit changes the decoded
// inputs first) with opts, its engines, generators and root set.
func renderExamplesWith(t testing.TB, opts Options, edit func([]*manifest.Object)) *Result {
	t.Helper()
	objs, err := load.Inputs(context.Background(), "..", builtin.Registry(), []string{examples}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(objs)
	}
	opts.Engines, opts.Root, opts.Generators = engines.Dialects(), "..", builtin.Registry()
	res, err := Render(context.Background(), objs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestGoldenExamples renders the bundled examples for both platforms. The
// golden files were read line by line when written: Kaoto children equal
// the operator's bodies plus wavesmith's annotations.
func TestGoldenExamples(t *testing.T) {
	for _, p := range []generators.Platform{generators.Kubernetes, generators.OpenShift} {
		t.Run(string(p), func(t *testing.T) {
			golden.Assert(t, filepath.Join("testdata", "examples-"+string(p)+".golden.yaml"), renderExamples(t, p).Stream())
		})
	}
}

// TestDeterministic renders the examples 20 times under different
// GOMAXPROCS and requires byte-identical streams and trees.
func TestDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	first := renderExamples(t, generators.Kubernetes)
	firstStream, firstTree := first.Stream(), first.Tree()
	for i := 0; i < 20; i++ {
		runtime.GOMAXPROCS(1 + i%8)
		res := renderExamples(t, generators.Kubernetes)
		if !bytes.Equal(firstStream, res.Stream()) {
			t.Fatalf("run %d (GOMAXPROCS=%d): the stream differs", i, 1+i%8)
		}
		if diff := cmp.Diff(firstTree, res.Tree()); diff != "" {
			t.Fatalf("run %d: the tree differs:\n%s", i, diff)
		}
	}
}

// tool returns the path of a tool the Makefile builds into bin/. A missing
// tool fails the test: it never skips.
func tool(t *testing.T, env, name string) string {
	t.Helper()
	return testtool.Path(t, env, name)
}

// TestTreeBuildsLikeStream runs the real kustomize on the tree and checks
// it gives the objects of the stream.
func TestTreeBuildsLikeStream(t *testing.T) {
	kustomize := tool(t, "KUSTOMIZE_BIN", "kustomize")
	for _, p := range []generators.Platform{generators.Kubernetes, generators.OpenShift} {
		res := renderExamples(t, p)
		dir := filepath.Join(t.TempDir(), "tree")
		if err := outtree.Write(dir, res.Tree()); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(kustomize, "build", dir).Output()
		if err != nil {
			t.Fatalf("kustomize build: %v", describeExecErr(err))
		}
		if diff := cmp.Diff(objectsByKey(t, res.Stream()), objectsByKey(t, out)); diff != "" {
			t.Errorf("%s: kustomize build of the tree differs from the stream: -stream +kustomize:\n%s", p, diff)
		}
	}
}

func objectsByKey(t *testing.T, stream []byte) map[string]any {
	t.Helper()
	objs, err := manifest.Decode("stream", stream)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	for _, o := range objs {
		m[o.Key().String()] = normalizeNumbers(o.Map)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m
}

func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = normalizeNumbers(e)
		}
	case int64:
		return float64(t)
	}
	return v
}

func describeExecErr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return fmt.Sprintf("%v: %s", err, ee.Stderr)
	}
	return err.Error()
}
