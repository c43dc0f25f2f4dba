package argocdplugin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/load"
)

// TestDiscoverDepth: discovery walks folders as render does, each opened
// once, and refuses folders nested deeper than load.MaxFolderDepth.
func TestDiscoverDepth(t *testing.T) {
	spec := "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: c}\n"
	for _, depth := range []int{load.MaxFolderDepth - 1, load.MaxFolderDepth} {
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
		if depth >= load.MaxFolderDepth {
			if !errors.Is(err, load.ErrTooDeep) {
				t.Errorf("depth %d: got %v, want load.ErrTooDeep", depth, err)
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

// TestDiscoverTotal: discovery reads no more than a render would.
func TestDiscoverTotal(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= load.MaxRenderInputSize/fsroot.MaxFileSize; i++ {
		f, err := os.Create(filepath.Join(root, fmt.Sprintf("f%02d.yaml", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(fsroot.MaxFileSize); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if _, err := Discover(root, root, builtin.Registry()); !errors.Is(err, load.ErrInputsTooLarge) {
		t.Errorf("got %v, want load.ErrInputsTooLarge", err)
	}
}
