package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wavesmith runs the CLI in-process and returns exit code, stdout, stderr.
func wavesmith(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const examples = "../../testdata/examples"

func TestRenderStream(t *testing.T) {
	code, out, stderr := wavesmith(t, "", "render", examples)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"kind: Kaoto", "kind: Deployment", "wavesmith.io/inventory:", "argocd.argoproj.io/sync-wave:"} {
		if !strings.Contains(out, s) {
			t.Errorf("stream lacks %q", s)
		}
	}
}

func TestRenderTreeAndCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	if code, _, stderr := wavesmith(t, "", "render", examples, "-o", dir); code != exitOK {
		t.Fatalf("render -o: exit %d: %s", code, stderr)
	}
	code, out, stderr := wavesmith(t, "", "check", examples, "-o", dir)
	if code != exitOK || out != "" {
		t.Fatalf("check of a fresh tree: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// Make the tree stale: edit one file, add a stray one.
	f := filepath.Join(dir, "demo", "kaoto-designer", "deployment-designer.yaml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, bytes.Replace(b, []byte("replicas: 1"), []byte("replicas: 3"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stray.yaml"), []byte("x: y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = wavesmith(t, "", "check", examples, "-o", dir)
	if code != exitError {
		t.Fatalf("check of a stale tree: exit %d, want %d", code, exitError)
	}
	for _, s := range []string{"--- a/demo/kaoto-designer/deployment-designer.yaml", "-  replicas: 3", "+  replicas: 1", "--- a/stray.yaml\n+++ /dev/null"} {
		if !strings.Contains(out, s) {
			t.Errorf("diff lacks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(stderr, "is stale") {
		t.Errorf("stderr %q", stderr)
	}
	// Re-render: the stray file disappears and check passes again.
	if code, _, stderr := wavesmith(t, "", "render", examples, "-o", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "stray.yaml")); !os.IsNotExist(err) {
		t.Error("a file that no longer belongs survived the re-render")
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\n")
	cases := map[string]struct {
		reason string
		file   string
		want   []string
	}{
		"Malformed":     {"malformed YAML names the file and line", write("m.yaml", "apiVersion: v1\nkind: [\n"), []string{"m.yaml:", "malformed YAML"}},
		"NoName":        {"a Kaoto without name", write("n.yaml", "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {namespace: x}\n"), []string{"n.yaml", "metadata.name"}},
		"UnknownField":  {"unknown spec fields are refused", write("u.yaml", "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\nspec:\n  imagee: x\n"), []string{"u.yaml:5", "Kaoto.designer.kaoto.io/n/a", "spec.imagee"}},
		"WrongType":     {"wrong types are refused", write("t.yaml", "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\nspec:\n  image: 3\n"), []string{"t.yaml:5", "spec.image"}},
		"BadWave":       {"an invalid wave", write("w.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    wavesmith.io/apply-order: first\n"), []string{"w.yaml", "wavesmith.io/apply-order"}},
		"DuplicateFile": {"a duplicate across two files names both", write("dup.yaml", "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\n"), []string{"dup.yaml", "good.yaml", "duplicate"}},
		"NotUTF8":       {"a file that is not UTF-8", write("b.yaml", "apiVersion: v1\nkind: \xfe\n"), []string{"b.yaml:2", "UTF-8"}},
		"Empty":         {"an empty input", write("e.yaml", "# nothing\n"), []string{"no objects"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, mode := range []string{"stream", "tree"} {
				dir := filepath.Join(tmp, "out-"+name)
				args := []string{"render", tc.file}
				if name == "DuplicateFile" {
					args = append(args, good)
				}
				if mode == "tree" {
					args = append(args, "-o", dir)
				}
				code, out, stderr := wavesmith(t, "", args...)
				if code != exitError {
					t.Fatalf("%s (%s): exit %d, want %d; stderr %q", tc.reason, mode, code, exitError, stderr)
				}
				if out != "" {
					t.Errorf("%s (%s): wrote to stdout: %q", tc.reason, mode, out)
				}
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("%s (%s): a tree was written", tc.reason, mode)
				}
				for _, s := range tc.want {
					if !strings.Contains(stderr, s) {
						t.Errorf("%s (%s): stderr %q lacks %q", tc.reason, mode, stderr, s)
					}
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"render", "--platform", "mars", examples},
		{"render", "--no-such-flag"},
		{"check", examples},
		{"frobnicate"},
		{"render", "--wave", "40000", examples},
	} {
		code, _, stderr := wavesmith(t, "", args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
}

func TestPlatformFromArgoCDEnv(t *testing.T) {
	t.Setenv("KUBE_API_VERSIONS", "v1,apps/v1,route.openshift.io/v1")
	code, out, stderr := wavesmith(t, "", "render", examples)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "kind: Route") || strings.Contains(out, "kind: Ingress") {
		t.Error("route.openshift.io/v1 in KUBE_API_VERSIONS must render Routes, not Ingresses")
	}
	code, out, _ = wavesmith(t, "", "render", "--platform", "kubernetes", examples)
	if code != exitOK || !strings.Contains(out, "kind: Ingress") {
		t.Error("--platform overrides the environment")
	}
}

func TestHelpTeaches(t *testing.T) {
	for _, cmd := range []string{"render", "check", "diff", "fn", "graph", "version"} {
		code, out, _ := wavesmith(t, "", cmd, "--help")
		if code != exitOK || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: exit %d\n%s", cmd, code, out)
		}
		if cmd != "version" && !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help has no examples", cmd)
		}
	}
}

func TestGraph(t *testing.T) {
	code, out, stderr := wavesmith(t, "", "graph", examples)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"flowchart LR", "subgraph wave_m1[\"wave -1\"]", "Component.wavesmith.io/operators/shop", "-->"} {
		if !strings.Contains(out, s) {
			t.Errorf("mermaid lacks %q:\n%s", s, out)
		}
	}
	// shop depends on widgets
	if !strings.Contains(out, "ncomponent_wavesmith_io_operators_shop --> ncomponent_wavesmith_io_operators_widgets") {
		t.Errorf("no dependency edge:\n%s", out)
	}
	code, out, _ = wavesmith(t, "", "graph", "--format", "dot", examples)
	if code != exitOK || !strings.HasPrefix(out, "digraph wavesmith {") {
		t.Errorf("dot: exit %d\n%s", code, out)
	}
	if code, _, _ := wavesmith(t, "", "graph", "--format", "png", examples); code != exitUsage {
		t.Errorf("an unknown format is a usage error, got exit %d", code)
	}
}

// TestDocsGraph keeps the picture in docs/waves-and-policies.md equal to
// the examples.
func TestDocsGraph(t *testing.T) {
	code, out, stderr := wavesmith(t, "", "graph", "-q", examples)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	doc, err := os.ReadFile("../../docs/waves-and-policies.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```mermaid\n"+out+"```") {
		t.Errorf("docs/waves-and-policies.md shows a stale graph: paste the output of 'wavesmith graph testdata/examples'")
	}
}
