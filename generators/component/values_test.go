package component

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestValuesTotal: the values files of a Component hold MaxValuesSize
// bytes together at most; a file listed twice counts twice.
func TestValuesTotal(t *testing.T) {
	root := t.TempDir()
	big := "k: " + strings.Repeat("x", MaxValuesSize/2) + "\n"
	if err := os.WriteFile(filepath.Join(root, "v.yaml"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "small.yaml"), []byte("s: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		files []any
		field string // of the error, "" for none
	}{
		{files: []any{"v.yaml", "small.yaml"}},
		{files: []any{"small.yaml", "v.yaml", "v.yaml"}, field: "spec.valuesFiles[2]"},
	} {
		spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c", "namespace": "n"},
			"spec": map[string]any{"source": map[string]any{"chart": map[string]any{"path": "chart"}}, "valuesFiles": tc.files}})
		spec.Source.File = filepath.Join(root, "c.yaml")
		c, err := Decode(spec)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Values(spec, c, root)
		if tc.field == "" {
			if err != nil || v["s"] != float64(1) || len(v["k"].(string)) != MaxValuesSize/2 {
				t.Errorf("%v: %v", tc.files, err)
			}
			continue
		}
		var me *manifest.Error
		if !errors.Is(err, fsroot.ErrTooLarge) || !errors.As(err, &me) || me.Field != tc.field || !strings.Contains(me.Object, "Component") {
			t.Errorf("%v: got %v, want fsroot.ErrTooLarge at %s", tc.files, err, tc.field)
		}
	}
}
