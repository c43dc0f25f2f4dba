package kustomize

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// layers writes, below dir/kust, a kustomization of n layers, each
// including the one below twice under two name prefixes: 2^n objects
// from 3n+3 small files.
func layers(t *testing.T, dir string, n int) {
	t.Helper()
	write := func(p, s string) {
		full := filepath.Join(dir, "kust", p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("L0/kustomization.yaml", "resources:\n- cm.yaml\n")
	write("L0/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
	for k := 1; k <= n; k++ {
		write(fmt.Sprintf("L%d/kustomization.yaml", k), "resources:\n- a\n- b\n")
		for _, x := range []string{"a", "b"} {
			write(fmt.Sprintf("L%d/%s/kustomization.yaml", k, x), fmt.Sprintf("namePrefix: %s-\nresources:\n- ../../L%d\n", x, k-1))
		}
	}
	write("kustomization.yaml", fmt.Sprintf("resources:\n- L%d\n", n))
}

// TestBuildBudget: a build that reads too many documents (a base
// counted each time it is reached) or makes too many objects fails with ErrBudget
// naming the Component and the budget; limits lowered to keep it quick.
func TestBuildBudget(t *testing.T) {
	cases := map[string]struct {
		docs, objects int64
		text          string // "" for success
	}{
		"Within":    {docs: 1000, objects: 64},
		"Documents": {docs: 100, objects: 64, text: "kustomize reads more than 100 YAML documents"},
		"Objects":   {docs: 1000, objects: 63, text: "the build makes 64 objects, more than 63"},
		"DocsFirst": {docs: 100, objects: 10, text: "kustomize reads more than 100 YAML documents"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			saved, savedObjects := maxBuildDocuments, maxBuildObjects
			maxBuildDocuments, maxBuildObjects = tc.docs, int(tc.objects)
			defer func() { maxBuildDocuments, maxBuildObjects = saved, savedObjects }()
			dir := t.TempDir()
			layers(t, dir, 6)
			res, err := Generator{}.Generate(context.Background(), newSpec(dir, "kust", nil), generators.Options{Root: dir})
			if tc.text == "" {
				if err != nil || len(res.Objects) != 64 {
					t.Fatalf("%d objects, %v; want 64", len(res.Objects), err)
				}
				return
			}
			var me *manifest.Error
			if !errors.Is(err, ErrBudget) || !errors.As(err, &me) || me.Object != "Component.wavesmith.io/"+placement+"/demo" || me.Field != sourceField || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("got %v, want ErrBudget at the Component's %s saying %q", err, sourceField, tc.text)
			}
		})
	}
}

// TestBuildStopsAtDeadline: once the context ends, kustomize's next read
// fails, so that a build left running in the background ends too.
func TestBuildStopsAtDeadline(t *testing.T) {
	dir := t.TempDir()
	layers(t, dir, 1)
	j := &job{spec: newSpec(dir, "kust", nil), dir: filepath.Join(dir, "kust")}
	tr, _, _, err := j.open()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr.budget = &buildBudget{ctx: ctx}
	f := treeFS{tr}
	if _, err := f.ReadFile(filepath.Join(tr.root, "kustomization.yaml")); err != nil {
		t.Fatalf("before the deadline: %v", err)
	}
	cancel()
	if _, err := f.ReadFile(filepath.Join(tr.root, "kustomization.yaml")); !errors.Is(err, ErrBudget) || !errors.Is(err, context.Canceled) {
		t.Errorf("ReadFile after the deadline: got %v, want ErrBudget and context.Canceled", err)
	}
	if _, err := f.ReadDir(tr.root); !errors.Is(err, ErrBudget) {
		t.Errorf("ReadDir after the deadline: got %v, want ErrBudget", err)
	}
	if f.Exists(filepath.Join(tr.root, "L0")) {
		t.Errorf("Exists after the deadline: true")
	}
	if err := tr.firstRefusal(); !errors.Is(err, ErrBudget) {
		t.Errorf("the deadline is recorded as the build's error: got %v", err)
	}
}
