package kustomize

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// bases is a base-and-overlays layout: overlays/prod names ../../base
// and ../../components/monitoring.
var bases, _ = filepath.Abs(filepath.Join("testdata", "bases"))

// TestBaseAndOverlay: a Component pointing at an overlay whose
// kustomization names a base beside it renders as kustomize build of the
// overlay does, byte for byte before decoding and object for object
// after, with no wrapper kustomization.
func TestBaseAndOverlay(t *testing.T) {
	overlay := filepath.Join(bases, "overlays", "prod")
	t.Run("Bytes", func(t *testing.T) {
		want := kustomizeBuildBytes(t, overlay)
		j := &job{spec: newSpec(bases, "overlays/prod", nil), dir: overlay, opts: generators.Options{Root: repoRoot}}
		tr, _, templated, err := j.open()
		if err != nil || templated {
			t.Fatalf("open: templated %v, %v", templated, err)
		}
		if ok, err := j.ensureKustomization(tr); !ok || err != nil {
			t.Fatalf("ensureKustomization: %v, %v", ok, err)
		}
		if err := j.check(tr); err != nil {
			t.Fatal(err)
		}
		got, err := kustomize(t.Context(), treeFS{tr}, overlay)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("-kustomize build +wavesmith:\n%s", diff)
		}
	})
	t.Run("Objects", func(t *testing.T) {
		want, wantOrder := keyed(kustomizeBuild(t, overlay))
		res := generate(t, newSpec(bases, "overlays/prod", nil), generators.Options{Root: repoRoot})
		got, gotOrder := keyed(res.Objects)
		if len(want) < 4 {
			t.Fatalf("kustomize built only %d objects: the fixture is too small", len(want))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-kustomize build +wavesmith:\n%s", diff)
		}
		if diff := cmp.Diff(wantOrder, gotOrder); diff != "" {
			t.Errorf("order: -kustomize build +wavesmith:\n%s", diff)
		}
	})
}

// TestBaseLeavingTheRoot: the same overlay with a root that holds the
// overlays but not the base: the base is refused, naming the field.
func TestBaseLeavingTheRoot(t *testing.T) {
	_, err := Generator{}.Generate(t.Context(), newSpec(bases, "overlays/prod", nil), generators.Options{Root: filepath.Join(bases, "overlays")})
	var me *manifest.Error
	if !errors.Is(err, ErrKustomization) || !errors.As(err, &me) {
		t.Fatalf("got %v, want ErrKustomization", err)
	}
	if me.File != filepath.Join(bases, "overlays", "prod", "kustomization.yaml") || me.Field != "resources[0]" || !strings.Contains(err.Error(), `"../../base" leaves the root`) {
		t.Errorf("got %v, want the refusal of resources[0] of overlays/prod/kustomization.yaml", err)
	}
}

// TestTemplatedFolderStaysAlone: a templated folder is read whole and is
// its own root: a base beside it is refused.
func TestTemplatedFolderStaysAlone(t *testing.T) {
	_, err := Generator{}.Generate(t.Context(), templatedSpec(bases, "overlays/prod", nil), generators.Options{Root: repoRoot})
	if !errors.Is(err, ErrKustomization) || !strings.Contains(err.Error(), "leaves the templated component folder") {
		t.Fatalf("got %v, want ErrKustomization: the base leaves the templated folder", err)
	}
}

// TestReads: what a kustomization Component reads are the component
// folder and the folders its kustomization reaches, relative to the
// spec's folder; nothing outside the root, nothing remote.
func TestReads(t *testing.T) {
	cases := map[string]struct {
		path, root string
		want       []string
	}{
		"Overlay":    {"overlays/prod", repoRoot, []string{"overlays/prod", "base", "components/monitoring"}},
		"Base":       {"base", repoRoot, []string{"base"}},
		"RootBelow":  {"overlays/prod", filepath.Join(bases, "overlays"), []string{"overlays/prod"}},
		"NoRoot":     {"overlays/prod", "", []string{"overlays/prod"}},
		"RemoteOnly": {"../bad/remote-resource", repoRoot, []string{"../bad/remote-resource"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, r := range (Generator{}).Reads(newSpec(bases, tc.path, nil), tc.root) {
				if r.Field != sourceField {
					t.Errorf("field %s, want %s", r.Field, sourceField)
				}
				got = append(got, filepath.ToSlash(r.Path))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}
