package argocdcmp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/render"
)

// TestDiscoverDepth: discovery walks folders as render does, each opened
// once, and refuses folders nested deeper than render.MaxFolderDepth.
func TestDiscoverDepth(t *testing.T) {
	spec := "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: c}\n"
	for _, depth := range []int{render.MaxFolderDepth - 1, render.MaxFolderDepth} {
		root := t.TempDir()
		deep := filepath.Join(root, strings.Repeat("a/", depth))
		if err := os.MkdirAll(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(deep, "c.yaml"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := Discover(root, root, builtin.Registry())
		if depth >= render.MaxFolderDepth {
			if !errors.Is(err, render.ErrTooDeep) {
				t.Errorf("depth %d: got %v, want render.ErrTooDeep", depth, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{filepath.Join(deep, "c.yaml")}, got); diff != "" {
			t.Errorf("depth %d: -want +got:\n%s", depth, diff)
		}
	}
}
