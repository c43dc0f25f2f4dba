package engines

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// benchPlan is the plan and tree of n Kaoto specs as wavesmith renders
// them (a Service, a Deployment, every second one an Ingress, and the
// spec), in output order. With deps, every odd spec depends on the one
// before it, which puts it and its objects one wave later.
func benchPlan(n int, deps bool) (*gitops.Plan, map[string][]byte) {
	p := &gitops.Plan{Specs: make([]gitops.Spec, n)}
	tree := map[string][]byte{"kustomization.yaml": nil}
	wave := func(i int) int {
		if deps && i%2 == 1 {
			return 1
		}
		return 0
	}
	for i := range p.Specs {
		key := manifest.Key{Group: "designer.kaoto.io", Kind: "Kaoto", Namespace: fmt.Sprintf("team-%02d", i%50), Name: fmt.Sprintf("kaoto-%05d", i)}
		s := gitops.Spec{Key: key, APIVersion: "designer.kaoto.io/v1alpha1", Folder: key.Namespace + "/kaoto-" + key.Name, Wave: wave(i), First: wave(i), Last: wave(i)}
		if deps && i%2 == 1 {
			s.DependsOn = []int{i - 1}
		}
		p.Specs[i] = s
		tree[s.Folder+"/kustomization.yaml"] = nil
	}
	type kind struct{ group, kind, apiVersion string }
	kinds := []kind{{"", "Service", "v1"}, {"apps", "Deployment", "apps/v1"}, {"networking.k8s.io", "Ingress", "networking.k8s.io/v1"}, {"designer.kaoto.io", "Kaoto", "designer.kaoto.io/v1alpha1"}}
	for _, w := range []int{0, 1} {
		for _, k := range kinds {
			for i, s := range p.Specs {
				if s.Wave != w || (k.kind == "Ingress" && i%2 == 1) {
					continue
				}
				o := gitops.Object{Key: manifest.Key{Group: k.group, Kind: k.kind, Namespace: s.Key.Namespace, Name: s.Key.Name},
					APIVersion: k.apiVersion, Wave: w, Spec: i, IsSpec: k.kind == "Kaoto"}
				o.Path = fmt.Sprintf("%s/%s-%s.yaml", s.Folder, map[string]string{"Service": "service", "Deployment": "deployment", "Ingress": "ingress", "Kaoto": "kaoto"}[k.kind], s.Key.Name)
				p.Objects = append(p.Objects, o)
				tree[o.Path] = nil
			}
		}
	}
	return p, tree
}

// BenchmarkFiles measures the delivery files of both engines for 10,000
// specs: one wave (one Flux Kustomization, one Application), two waves
// with dependencies (an Application per spec), and again over the
// previous tree (the Flux handoffs read from it).
func BenchmarkFiles(b *testing.B) {
	cfg := &v1alpha1.RenderConfigSpec{TreePath: "rendered", Flux: &v1alpha1.FluxDelivery{}, ArgoCD: &v1alpha1.ArgoCDDelivery{Repo: "https://git.example.com/platform.git"}}
	for _, deps := range []bool{false, true} {
		p, tree := benchPlan(10000, deps)
		name := "waves=1"
		if deps {
			name = "dependsOn"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Files(p, tree, nil, cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/previous", func(b *testing.B) {
			files, err := Files(p, tree, nil, cfg)
			if err != nil {
				b.Fatal(err)
			}
			prev := fstest.MapFS{}
			for k, v := range files {
				prev[k] = &fstest.MapFile{Data: v}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Files(p, tree, prev, cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
