package component

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wavesmith/wavesmith/manifest"
)

func TestResolvePathRefusesSymlinkEscape(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "charts", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "charts", "good"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"}})
	spec.Source.File = filepath.Join(root, "component.yaml")
	if _, err := ResolvePath(spec, "spec.source.chart.path", "charts/evil", root); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("a symlink leaving the root: want ErrOutsideRoot, got %v", err)
	}
	if _, err := ResolvePath(spec, "spec.source.chart.path", "../"+filepath.Base(outside), root); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("a relative path leaving the root: want ErrOutsideRoot, got %v", err)
	}
	if _, err := ResolvePath(spec, "spec.source.chart.path", "charts/good", root); err != nil {
		t.Errorf("a path inside the root: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := map[string]struct {
		spec  map[string]any
		field string
	}{
		"NoSource":  {map[string]any{}, "spec.source"},
		"WrongType": {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "wave": "soon"}, "spec.wave"},
		"DeepField": {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x", "ref": "y"}}}, "spec.source.chart.ref"},
		"EmptyPath": {map[string]any{"source": map[string]any{"kustomization": map[string]any{"path": ""}}}, "spec.source.kustomization.path"},
		"BadPolicy": {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "policies": map[string]any{"update": int64(1)}}, "spec.policies.update"},
		"DependsOn": {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "dependsOn": []any{map[string]any{"nam": "a"}}}, "spec.dependsOn[0].nam"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"}, "spec": tc.spec})
			_, err := Decode(spec)
			var me *manifest.Error
			if !errors.Is(err, manifest.ErrInvalid) || !errors.As(err, &me) || me.Field != tc.field {
				t.Errorf("want ErrInvalid at %s, got %v", tc.field, err)
			}
		})
	}
}
