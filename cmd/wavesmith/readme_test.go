package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeExample runs the README's example exactly as written: the spec
// file it shows, saved under the name its first line gives, rendered by
// the command it shows, must print the output it shows.
func TestReadmeExample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	spec := fenced(t, readme, "```yaml\n# deploy/my-kaoto.yaml\n")
	console := fenced(t, readme, "```console\n$ wavesmith render deploy/ | head -31\n")

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy", "my-kaoto.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, stderr := wavesmith(t, "", "render", "deploy/")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.SplitAfter(out, "\n")
	if len(lines) < 31 {
		t.Fatalf("the render has %d lines, the README shows 31", len(lines))
	}
	if got := strings.Join(lines[:31], ""); got != console {
		t.Errorf("README.md shows another output than 'wavesmith render deploy/ | head -31' prints; paste:\n%s", got)
	}
	for _, kind := range []string{"kind: Deployment", "kind: Ingress", "kind: Kaoto", "wavesmith.io/inventory:"} {
		if !strings.Contains(out, kind) {
			t.Errorf("the README says the render holds %q; it does not", kind)
		}
	}
}

// fenced returns what follows start (a fence and the block's first line)
// up to the closing fence.
func fenced(t *testing.T, doc, start string) string {
	t.Helper()
	i := strings.Index(doc, start)
	if i < 0 {
		t.Fatalf("README.md has no block starting %q", start)
	}
	body := doc[i+len(start):]
	j := strings.Index(body, "```\n")
	if j < 0 {
		t.Fatalf("the block starting %q does not end", start)
	}
	return body[:j]
}
