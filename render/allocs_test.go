package render

import (
	"context"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// allocBudgets are the allocations that decoding, rendering and encoding
// one spec may take, measured and given a margin of about 10%: a change
// that makes rendering allocate more fails here on any machine, however
// busy (an allocation count does not depend on time). Lower a budget when
// a change makes rendering cheaper; raise one only with the reason in the
// commit. Measured (issue 21): kaoto 512 -> 462 -> 440 -> 395 (the
// children's constant parts shared) -> 315 (their own maps reused once a
// render released them: generators.Result.Release) -> 305 (one
// Lifecycle.Explicit map per set of keys; the children's annotations in
// maps of that reused set: manifest.Object.ReserveAnnotations) -> 304
// (a spec's annotations in a map of their size: specAnnotations),
// chart-component 13009 -> 12941 -> 12938 -> 12927 -> 12870 -> 12869.
// kaoto-block, the same Kaoto read by manifest's fast decoder as most
// spec files are: 164 -> 162 (its field paths made on the stack) -> 161
// (writeInventories' entries pooled; kaoto 303, chart-component 12868); a
// block-style file that missed the fast decoder would take about 300.
var allocBudgets = map[string]float64{
	"kaoto":           340,
	"kaoto-block":     180,
	"chart-component": 14200,
}

// raceAllocBudgets are the budgets of a race build (make test runs the
// package so), whose sync.Pool drops pooled scratch space at random: the
// mean of 100 runs, measured 484-500 (kaoto; 523-537 before the
// children's constant parts were shared; 401-416 in 6 runs once their own
// maps were reused; 396-414 in 3 runs with the Explicit maps shared and
// the annotations' reserved) and 13,399-13,427 before (chart-component,
// 13,415-13,422 after), with about the same margin (20 runs gave 512-543
// before); kaoto-block 254-262 (2 runs).
var raceAllocBudgets = map[string]float64{
	"kaoto":           460,
	"kaoto-block":     290,
	"chart-component": 14800,
}

const allocKaoto = `apiVersion: designer.kaoto.io/v1alpha1
kind: Kaoto
metadata:
  name: designer
  namespace: demo
spec:
  image: quay.io/kaotoio/kaoto-app:2.4.0
  ingress: {host: kaoto.example.com, path: /designer}
`

// allocKaotoBlock is the same Kaoto in block style only, as most spec
// files are: manifest's fast decoder reads it (decodeSimple).
var allocKaotoBlock = strings.Replace(allocKaoto, "  ingress: {host: kaoto.example.com, path: /designer}\n", "  ingress:\n    host: kaoto.example.com\n    path: /designer\n", 1)

// A Component of the webapp chart (testdata/charts/webapp), read from a
// file beside the examples as a user's would be.
const allocComponent = `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata:
  name: web
  namespace: apps
spec:
  source:
    chart: {path: ../charts/webapp}
  values: {replicaCount: 2}
`

// TestRenderAllocations is the regression guard of rendering speed: the
// allocations of one render of one spec, against allocBudgets.
func TestRenderAllocations(t *testing.T) {
	if allocKaotoBlock == allocKaoto {
		t.Fatal("allocKaotoBlock is allocKaoto: its ingress was not rewritten in block style")
	}
	for name, in := range map[string]string{"kaoto": allocKaoto, "kaoto-block": allocKaotoBlock, "chart-component": allocComponent} {
		t.Run(name, func(t *testing.T) {
			run := func() {
				objs, err := manifest.Decode("../testdata/examples/alloc.yaml", []byte(in))
				if err != nil {
					t.Fatal(err)
				}
				res, err := Render(context.Background(), objs, Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: "..", DiscardObjects: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Stream()) == 0 {
					t.Fatal("an empty stream")
				}
			}
			run() // warm what is computed once per process
			budget, runs := allocBudgets[name], 20
			if raceBuild {
				// Many runs: the pool's random drops average out.
				budget, runs = raceAllocBudgets[name], 100
			}
			got := testing.AllocsPerRun(runs, run)
			t.Logf("%s: %.0f allocations per render (budget %.0f, race build %v)", name, got, budget, raceBuild)
			if got > budget {
				t.Errorf("rendering one %s allocates %.0f times, over its budget of %.0f (race build %v): find what allocates more (go test -run '^$' -bench . -benchmem -memprofile), or raise the budget with the reason", name, got, budget, raceBuild)
			}
		})
	}
}
