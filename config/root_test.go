package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wavesmith/wavesmith/config"
)

// TestOpenRootFromOutside: a caller outside the module (this package
// imports config alone, no internal package) opens a root, finds and
// reads the project file through it and gets engine options, as the
// doors do; a path setting outside the root is still refused.
func TestOpenRootFromOutside(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "apps")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	project := "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nspec:\n  namespace: shop\n  wave: 3\n"
	if err := os.WriteFile(filepath.Join(dir, config.ProjectFile), []byte(project), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := config.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	l, ok, err := config.FindProject(root, sub)
	if err != nil || !ok {
		t.Fatalf("FindProject = %v, %v: want the project file above %s", ok, err, sub)
	}
	o, _, err := config.Merge(l).OptionsIn(root)
	if err != nil {
		t.Fatal(err)
	}
	if o.Namespace != "shop" {
		t.Errorf("namespace %q, want shop", o.Namespace)
	}
	out := config.Layer{Name: "flags", Spec: l.Spec}
	out.Spec.Output = filepath.Join(filepath.Dir(dir), "elsewhere")
	_, _, err = config.Merge(out).OptionsIn(root)
	if !errors.Is(err, config.ErrConfig) {
		t.Errorf("an output outside the root: err = %v, want ErrConfig", err)
	}
}
