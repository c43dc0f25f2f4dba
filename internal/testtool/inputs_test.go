package testtool

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputsDigest runs hack/test-inputs.sh on a small repository and
// checks what its digest follows: a README or docs edit must not rerun
// the tool suites, a change to what they read must.
func TestInputsDigest(t *testing.T) {
	for _, tool := range []string{"bash", "git", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: hack/test-inputs.sh needs it", tool)
		}
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "hack", "test-inputs.sh"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(repo, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("hack/test-inputs.sh", string(script))
	files := map[string]string{
		"README.md":                            "# front page\n",
		"CONTRIBUTING.md":                      "# tests\n",
		"docs/cli.md":                          "# cli\n",
		"test/parity/README.md":                "# parity\n",
		".ci/run":                              "make test\n",
		"testdata/examples/kaoto.yaml":         "kind: Kaoto\n",
		"test/hostile/testdata/cases/c/x.md":   "a case's input\n",
		"test/hostile/testdata/helper/main.go": "package main\n",
		"kustomize/flux/kustomization.yaml":    "resources: []\n",
		"render/render.go":                     "package render\n",
		"bin/wavesmith":                        "binary\n",
	}
	for rel, content := range files {
		write(rel, content)
	}
	git := exec.Command("git", "init", "-q", repo)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	write(".gitignore", "bin/\n")
	digest := func() string {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(repo, "hack", "test-inputs.sh"))
		cmd.Env = append(os.Environ(), "KPT_BIN=kpt-not-installed")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("test-inputs.sh: %v", err)
		}
		d := strings.TrimSpace(string(out))
		if !digest.MatchString(d) {
			t.Fatalf("test-inputs.sh printed %q, want a sha256 digest", d)
		}
		return d
	}
	base := digest()
	for _, tc := range []struct {
		file    string
		changes bool
	}{
		{"README.md", false},
		{"CONTRIBUTING.md", false},
		{"docs/cli.md", false},
		{"docs/new-topic.md", false},
		{"test/parity/README.md", false},
		{".ci/run", false},
		{"render/render.go", false}, // go test tracks package sources itself
		{"testdata/examples/kaoto.yaml", true},
		{"test/hostile/testdata/cases/c/x.md", true},
		{"test/hostile/testdata/helper/main.go", true},
		{"kustomize/flux/kustomization.yaml", true},
		{"bin/wavesmith", true},
	} {
		old, had := files[tc.file]
		write(tc.file, old+"edited\n")
		got := digest()
		if changed := got != base; changed != tc.changes {
			t.Errorf("editing %s: digest changed %v, want %v", tc.file, changed, tc.changes)
		}
		if had {
			write(tc.file, old)
		} else if err := os.Remove(filepath.Join(repo, filepath.FromSlash(tc.file))); err != nil {
			t.Fatal(err)
		}
		if got := digest(); got != base {
			t.Fatalf("undoing the edit of %s: the digest did not come back", tc.file)
		}
	}
}
