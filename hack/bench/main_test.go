package main

import (
	"testing"

	"github.com/wavesmith/wavesmith/internal/testtool"
)

// TestComponentsAnyWorkdir: the component rows run with a workdir outside
// the repository (a temporary folder): the Component's sources travel
// with it, so that no source path leaves the render's root.
func TestComponentsAnyWorkdir(t *testing.T) {
	wavesmith := testtool.Path(t, "WAVESMITH_BIN", "wavesmith")
	helm := testtool.Path(t, "HELM_BIN", "helm")
	kustomize := testtool.Path(t, "KUSTOMIZE_BIN", "kustomize")
	work := t.TempDir()
	t.Chdir(testtool.ModuleRoot(t)) // as make bench runs it
	if err := components(1, wavesmith, helm, kustomize, work); err != nil {
		t.Fatal(err)
	}
}
