package render

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestHookDialects renders a chart with install hooks under every dialect
// setting: the native wavesmith.io/hook is always there, and an engine's
// annotations appear exactly when its dialect is chosen (before, the Argo
// CD hook annotation was written whatever --dialects said).
func TestHookDialects(t *testing.T) {
	const chart = `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata: {name: widgets, namespace: operators}
spec:
  source: {chart: {path: ../charts/operator}}
`
	cases := map[string]struct {
		reason   string
		dialects string
		want     map[string][]string // hook Job -> annotation prefixes present
	}{
		"None":   {"native annotations only", "none", map[string][]string{"migrate": {"wavesmith.io/"}, "smoke": {"wavesmith.io/"}}},
		"ArgoCD": {"Argo CD hooks, no Flux annotation", "argocd", map[string][]string{"migrate": {"argocd.argoproj.io/", "wavesmith.io/"}, "smoke": {"argocd.argoproj.io/", "wavesmith.io/"}}},
		"Flux": {"Flux annotations, no Argo CD one", "flux", map[string][]string{"migrate": {"kustomize.toolkit.fluxcd.io/", "wavesmith.io/"},
			"smoke": {"kustomize.toolkit.fluxcd.io/", "wavesmith.io/"}}},
		"Both": {"both engines", "argocd,flux", map[string][]string{"migrate": {"argocd.argoproj.io/", "kustomize.toolkit.fluxcd.io/", "wavesmith.io/"},
			"smoke": {"argocd.argoproj.io/", "kustomize.toolkit.fluxcd.io/", "wavesmith.io/"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := manifest.Decode("../testdata/examples/widgets.yaml", []byte(chart))
			if err != nil {
				t.Fatal(err)
			}
			ds, err := engines.ParseDialects(tc.dialects)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Render(context.Background(), objs, Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: "..", Dialects: ds})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, it := range res.Items {
				if it.Key.Kind != "Job" {
					continue
				}
				if h, _ := it.Object.Annotation("wavesmith.io/hook"); h == "" {
					t.Errorf("%s: no wavesmith.io/hook", it.Key)
				}
				seen := map[string]bool{}
				for k := range it.Object.Annotations() {
					// helm.sh/hook* are the chart's own, kept as helm
					// template prints them.
					if i := strings.Index(k, "/"); i > 0 && !strings.HasPrefix(k, "helm.sh/") {
						seen[k[:i+1]] = true
					}
				}
				var prefixes []string
				for p := range seen {
					prefixes = append(prefixes, p)
				}
				sort.Strings(prefixes)
				got[strings.TrimPrefix(it.Key.Name, "widgets-")] = prefixes
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
