package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootOutsideGit: outside a git repository the root is the current
// folder when the inputs lie in it, so that the documented layout
// (deploy/ naming ../charts/) renders without git as in a repository;
// inputs elsewhere keep their own folder as root, and a source leaving
// it says which root it left and how to set another.
func TestRootOutsideGit(t *testing.T) {
	dir := t.TempDir()
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		t.Fatal("the temporary folder is a git repository")
	}
	chart := filepath.Join(dir, "charts", "webapp")
	if err := os.CopyFS(chart, os.DirFS("../../testdata/charts/webapp")); err != nil {
		t.Fatal(err)
	}
	comp := "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: shop, namespace: apps}\nspec:\n  source:\n    chart: {path: ../charts/webapp}\n"
	if err := os.MkdirAll(filepath.Join(dir, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy", "shop.yaml"), []byte(comp), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if code, out, stderr := wavesmith(t, "", "render", "deploy/"); code != exitOK || !strings.Contains(out, "kind: Deployment") {
		t.Fatalf("render deploy/ outside git: exit %d\n%s", code, stderr)
	}
	// From another folder, the inputs' own folder is the root.
	t.Chdir(t.TempDir())
	code, _, stderr := wavesmith(t, "", "render", filepath.Join(dir, "deploy"))
	if code != exitError || !strings.Contains(stderr, "../charts/webapp leaves "+filepath.Join(dir, "deploy")+" (the root; --root sets another)") {
		t.Errorf("inputs outside the current folder: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := wavesmith(t, "", "render", "--root", dir, filepath.Join(dir, "deploy")); code != exitOK {
		t.Errorf("--root %s: exit %d\n%s", dir, code, stderr)
	}
}
