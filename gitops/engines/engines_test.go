package engines

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

func TestParseDialects(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   []string
		err    string
	}{
		"Both":       {"both engines, in the table's order whatever the order given", "flux, ArgoCD", []string{"argocd", "flux"}, ""},
		"None":       {"none is an empty list, not the default", "none", []string{}, ""},
		"Empty":      {"an empty value is none as well", "", []string{}, ""},
		"Twice":      {"a name given twice counts once", "flux,flux", []string{"flux"}, ""},
		"Unknown":    {"an unknown engine names the known ones", "argo", nil, `dialect "argo": want argocd, flux or none`},
		"WithNone":   {"none beside a name is an error, not ignored", "none,argocd", nil, "none cannot be combined with argocd"},
		"NoneAfter":  {"none after names is an error too", "flux, argocd,NONE", nil, "none cannot be combined with argocd, flux"},
		"NoneTwice":  {"none given twice is none", "none,none", []string{}, ""},
		"Whitespace": {"spaces around names", " argocd ,  ", []string{"argocd"}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ds, err := ParseDialects(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%s: got %v, want %q", tc.reason, err, tc.err)
				}
				if !errors.Is(err, ErrDialect) {
					t.Errorf("%s: %v does not wrap ErrDialect", tc.reason, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			got := []string{}
			for _, d := range ds {
				got = append(got, d.Name())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			if ds == nil {
				t.Errorf("%s: a nil list means every engine to the engine; none must be empty, not nil", tc.reason)
			}
		})
	}
}

// TestDeliveryFoldersNoNamespace: specs in namespaces called flux and
// argocd keep their folders to themselves; the delivery files live in
// folders no namespace can take (namespaces are DNS labels, no '_').
func TestDeliveryFoldersNoNamespace(t *testing.T) {
	var plan gitops.Plan
	tree := map[string][]byte{"kustomization.yaml": nil}
	for i, ns := range []string{"flux", "argocd"} {
		folder := ns + "/kaoto-k"
		plan.Specs = append(plan.Specs, gitops.Spec{Key: manifest.Key{Group: "designer.kaoto.io", Kind: "Kaoto", Namespace: ns, Name: "k"}, APIVersion: "designer.kaoto.io/v1alpha1", Folder: folder})
		plan.Objects = append(plan.Objects,
			gitops.Object{Key: manifest.Key{Group: "designer.kaoto.io", Kind: "Kaoto", Namespace: ns, Name: "k"}, APIVersion: "designer.kaoto.io/v1alpha1", Spec: i, IsSpec: true, Path: folder + "/kaoto-k.yaml"},
			gitops.Object{Key: manifest.Key{Kind: "Service", Namespace: ns, Name: "k"}, APIVersion: "v1", Spec: i, Path: folder + "/service-k.yaml"})
		tree[folder+"/kaoto-k.yaml"], tree[folder+"/service-k.yaml"], tree[folder+"/kustomization.yaml"] = nil, nil, nil
	}
	cfg := &v1alpha1.RenderConfigSpec{TreePath: "x", Flux: &v1alpha1.FluxDelivery{}, ArgoCD: &v1alpha1.ArgoCDDelivery{Repo: "https://git.example.com/r.git"}}
	files, err := Files(&plan, tree, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no delivery files")
	}
	for f := range files {
		if top := strings.SplitN(f, "/", 2)[0]; top != "_flux" && top != "_argocd" {
			t.Errorf("delivery file %s is not under _flux/ or _argocd/", f)
		}
	}
}

// TestFilesClash: an engine's file may not replace a file of the tree nor
// need a folder where the tree has a file.
func TestFilesClash(t *testing.T) {
	plan := &gitops.Plan{Objects: []gitops.Object{{Key: manifest.Key{Kind: "ConfigMap", Namespace: "ns", Name: "a"}, APIVersion: "v1", Spec: -1, Path: "_objects/ns--configmap-a.yaml"}}}
	cfg := &v1alpha1.RenderConfigSpec{TreePath: "x", Flux: &v1alpha1.FluxDelivery{}}
	tree := map[string][]byte{"_objects/ns--configmap-a.yaml": nil, "kustomization.yaml": nil}
	files, err := Files(plan, tree, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["_flux/kustomization.yaml"]; !ok {
		t.Errorf("no Flux files: %v", files)
	}
	tree["_flux"] = nil // a file where Flux needs a folder
	if _, err := Files(plan, tree, nil, cfg); !errors.Is(err, gitops.ErrOption) || !strings.Contains(err.Error(), "needs the folder _flux") {
		t.Errorf("want a clash naming the folder, got %v", err)
	}
	if files, err := Files(plan, map[string][]byte{}, nil, &v1alpha1.RenderConfigSpec{}); err != nil || len(files) != 0 {
		t.Errorf("no engine asked for: %v, %v", files, err)
	}
}
