package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestLoadReadsEachFileOnce: a file named twice, by the command line, by
// a folder and a file in it, or through a symlink, is read once.
func TestLoadReadsEachFileOnce(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: n}\n"
	cases := map[string]struct {
		args []string // relative to the root
		want []string
	}{
		"SameFileTwice":      {args: []string{"in/a.yaml", "in/a.yaml"}, want: []string{"a"}},
		"SpelledDifferently": {args: []string{"in/a.yaml", "in/../in/./a.yaml"}, want: []string{"a"}},
		"FolderThenFile":     {args: []string{"in", "in/sub/c.yaml"}, want: []string{"a", "b", "c"}},
		"FileThenFolder":     {args: []string{"in/sub/c.yaml", "in"}, want: []string{"c", "a", "b"}},
		"FolderTwice":        {args: []string{"in", "in"}, want: []string{"a", "b", "c"}},
		"FolderAndSubfolder": {args: []string{"in/sub", "in"}, want: []string{"c", "a", "b"}},
		"SymlinkToFile":      {args: []string{"in/a.yaml", "link.yaml"}, want: []string{"a"}},
		"SymlinkToFolder":    {args: []string{"in", "linkdir"}, want: []string{"a", "b", "c"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "in/a.yaml"), fmt.Sprintf(cm, "a"))
			writeFile(t, filepath.Join(root, "in/b.yaml"), fmt.Sprintf(cm, "b"))
			writeFile(t, filepath.Join(root, "in/sub/c.yaml"), fmt.Sprintf(cm, "c"))
			symlink(t, "in/a.yaml", filepath.Join(root, "link.yaml"))
			symlink(t, "in", filepath.Join(root, "linkdir"))
			var args []string
			for _, a := range tc.args {
				args = append(args, filepath.Join(root, a))
			}
			objs, err := loadIn(root, args, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range objs {
				names = append(names, o.Name())
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("objects: -want +got:\n%s", diff)
			}
		})
	}
}

// TestLoadInputBudget: the files of a render may hold MaxRenderInputSize
// bytes together; the file that goes over is named, before any is read
// (the files here are sparse: reading them would fail to decode).
func TestLoadInputBudget(t *testing.T) {
	for _, n := range []int{MaxRenderInputSize / fsroot.MaxFileSize, MaxRenderInputSize/fsroot.MaxFileSize + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			root := t.TempDir()
			for i := 0; i < n; i++ {
				f, err := os.Create(filepath.Join(root, fmt.Sprintf("f%02d.yaml", i)))
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Truncate(fsroot.MaxFileSize); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			_, err := loadIn(root, []string{root}, nil)
			over := n*fsroot.MaxFileSize > MaxRenderInputSize
			if got := errors.Is(err, ErrInputsTooLarge); got != over {
				t.Fatalf("%d files of %d bytes: ErrInputsTooLarge %v, want %v (err: %v)", n, fsroot.MaxFileSize, got, over, err)
			}
			if !over {
				if err == nil {
					t.Fatal("sparse files decoded")
				}
				return
			}
			var merr *manifest.Error
			if want := filepath.Join(root, fmt.Sprintf("f%02d.yaml", n-1)); !errors.As(err, &merr) || merr.File != want {
				t.Errorf("error %v, want one naming %s", err, want)
			}
		})
	}
}

// TestLoadHugeFileKeepsItsError: a file over the cap of one file does not
// count in the total: it is refused as too large itself (or, as a
// Component's source, by the Component).
func TestLoadHugeFileKeepsItsError(t *testing.T) {
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxRenderInputSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = loadIn(root, []string{root}, nil)
	if !errors.Is(err, fsroot.ErrTooLarge) || errors.Is(err, ErrInputsTooLarge) {
		t.Errorf("got %v, want fsroot.ErrTooLarge for the file alone", err)
	}
}

// TestLoadStdinCountsInBudget: stdin counts with the files.
func TestLoadStdinCountsInBudget(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < MaxRenderInputSize/fsroot.MaxFileSize; i++ {
		f, err := os.Create(filepath.Join(root, fmt.Sprintf("f%02d.yaml", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(fsroot.MaxFileSize); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	_, err := loadIn(root, []string{root, "-"}, strings.NewReader("apiVersion: v1\n"))
	var merr *manifest.Error
	if !errors.Is(err, ErrInputsTooLarge) || !errors.As(err, &merr) || merr.File != "-" {
		t.Errorf("got %v, want ErrInputsTooLarge naming -", err)
	}
}

// TestLoadDepth: folders may nest MaxFolderDepth deep below an input
// folder, not deeper; Files (discovery) walks the same way.
func TestLoadDepth(t *testing.T) {
	for _, depth := range []int{MaxFolderDepth - 1, MaxFolderDepth} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			root := t.TempDir()
			deep := filepath.Join(root, "in", strings.Repeat("a/", depth))
			writeFile(t, filepath.Join(deep, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n")
			objs, err := loadIn(root, []string{filepath.Join(root, "in")}, nil)
			files, ferr := Files(root, filepath.Join(root, "in"))
			if depth < MaxFolderDepth {
				if err != nil || len(objs) != 1 || ferr != nil || len(files) != 1 {
					t.Fatalf("depth %d: %d objects, %v; files %v, %v", depth, len(objs), err, files, ferr)
				}
				return
			}
			for _, err := range []error{err, ferr} {
				var merr *manifest.Error
				if !errors.Is(err, ErrTooDeep) || !errors.As(err, &merr) || merr.File != filepath.Clean(deep) {
					t.Errorf("depth %d: got %v, want ErrTooDeep naming %s", depth, err, deep)
				}
			}
		})
	}
}

// TestLoadContext: a load gives up when its context ends.
func TestLoadContext(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "in/a/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, arg := range []string{"in", "in/a/cm.yaml"} {
		if _, err := Inputs(ctx, root, builtin.Registry(), []string{filepath.Join(root, arg)}, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled", arg, err)
		}
	}
}

// TestLoadNeverDecodesSources: the files of a spec's source are read
// (they might hold a spec) but never decoded by loading: the spec's
// generator decodes them, once. Counted in allocations, which do not
// depend on time: 40 source files must cost far less than decoding them.
func TestLoadNeverDecodesSources(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app/component.yaml"), "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: shop, namespace: n}\nspec:\n  source: {kustomization: {path: k}}\n")
	writeFile(t, filepath.Join(root, "app/k/kustomization.yaml"), "resources: []\n")
	load := func() {
		objs, err := loadIn(root, []string{filepath.Join(root, "app")}, nil)
		if err != nil || len(objs) != 1 {
			t.Fatalf("want the Component alone, got %d objects, %v", len(objs), err)
		}
	}
	load()
	bare := testing.AllocsPerRun(5, load)
	var data strings.Builder
	for i := range 40 {
		data.WriteString(fmt.Sprintf("  key%02d: value %d\n", i, i))
	}
	decoded := 0.0
	for i := range 40 {
		body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%02d, namespace: n}\ndata:\n%s", i, data.String())
		writeFile(t, filepath.Join(root, fmt.Sprintf("app/k/cm%02d.yaml", i)), body)
		decoded += testing.AllocsPerRun(1, func() {
			if _, err := manifest.Decode("cm.yaml", []byte(body)); err != nil {
				t.Fatal(err)
			}
		})
	}
	load()
	got := testing.AllocsPerRun(5, load)
	t.Logf("40 source files: %.0f allocations more (decoding them: %.0f)", got-bare, decoded)
	if got-bare > decoded/2 {
		t.Errorf("40 source files cost %.0f allocations, decoding them %.0f: loading decodes a spec's source", got-bare, decoded)
	}
}

// TestLoadEscapedSpecInSource: a spec whose apiVersion is spelt with an
// escape is still found in a source folder (an error naming both), though
// its bytes do not name a spec's apiVersion.
func TestLoadEscapedSpecInSource(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app/component.yaml"), "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: shop, namespace: n}\nspec:\n  source: {kustomization: {path: k}}\n")
	writeFile(t, filepath.Join(root, "app/k/kustomization.yaml"), "resources: []\n")
	writeFile(t, filepath.Join(root, "app/k/hidden.yaml"), "apiVersion: \"wavesmith.io\\x2Fv1alpha1\"\nkind: Component\nmetadata: {name: hidden, namespace: n}\n")
	_, err := loadIn(root, []string{filepath.Join(root, "app")}, nil)
	if !errors.Is(err, generators.ErrSourceCoversSpec) || !strings.Contains(err.Error(), "hidden") {
		t.Fatalf("want ErrSourceCoversSpec naming the hidden spec, got %v", err)
	}
}
