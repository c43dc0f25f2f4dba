package kaoto_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/generators/kaoto"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// TestSharedPartsStayUnchanged: the children of every Kaoto share their
// constant parts (steps.go), which is only right while nothing writes
// into them. Render Kaotos with every option that changes what the
// engine writes (platforms, dialects, part-of, policies, the KRM
// function's KeepInputs, the CLI's DiscardObjects, a Memo), take every
// form of the result, and compare the shared parts with fresh ones.
func TestSharedPartsStayUnchanged(t *testing.T) {
	specs := func() []*manifest.Object {
		var objs []*manifest.Object
		for i, extra := range []string{"", "  ingress: {host: a.example.com, path: /designer}\n", "  ingress: {host: b.example.com}\n"} {
			in := fmt.Sprintf("apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: k%d\n  annotations: {wavesmith.io/update-policy: replace}\nspec:\n  image: quay.io/kaotoio/kaoto-app:2.4.0\n%s", i, extra)
			o, err := manifest.Decode(fmt.Sprintf("k%d.yaml", i), []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, o...)
		}
		return objs
	}
	memo := render.NewMemo()
	for _, opts := range []render.Options{
		{},
		{Platform: generators.OpenShift},
		{PartOf: "suite", Namespace: "apps", Dialects: engines.Dialects()[:1]},
		{Defaults: map[string]string{
			inventory.ReconcilePolicy: inventory.ReconcileOnObjectOrComponentChange,
			inventory.DeletePolicy:    inventory.DeleteOrphan,
			inventory.ApplyOrder:      "3",
		}},
		{KeepInputs: true},
		{DiscardObjects: true},
		{Reuse: memo},
		{Reuse: memo, Platform: generators.OpenShift},
	} {
		opts.Engines, opts.Generators, opts.Root = engines.Dialects(), builtin.Registry(), "../.."
		if err := render.Check(specs(), opts); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second time from the Memo, when there is one
			res, err := render.Render(context.Background(), specs(), opts)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Stream()
			_ = res.Tree()
			_ = res.Plan()
			if err := res.WriteJSONList(io.Discard); err != nil {
				t.Fatal(err)
			}
		}
	}
	inUse, fresh := kaoto.SharedParts()
	if diff := cmp.Diff(fresh, inUse); diff != "" {
		t.Errorf("rendering wrote into the parts every Kaoto's children share (-built +after rendering):\n%s", diff)
	}
}

// TestReleasedMapsServeTheNextKaoto: a render that keeps only the encoded
// children (DiscardObjects) releases each Kaoto's own maps to the Kaotos
// generated after it (ownMaps). Kaotos of every shape in turn (with and
// without a namespace, an Ingress or Route, a path, an image, policies)
// take the maps another shape filled, on every core; their stream must be
// the stream of a render that keeps its objects, which releases nothing.
// A set that kept a key of the Kaoto before it would show in the next.
func TestReleasedMapsServeTheNextKaoto(t *testing.T) {
	const n = 200
	shapes := []string{
		"metadata: {name: k%d, namespace: team}\nspec: {image: quay.io/kaotoio/kaoto-app:2.4.%d}\n",
		"metadata: {name: k%d}\nspec:\n  ingress: {host: a.example.com, path: /designer}\n  image: quay.io/kaotoio/kaoto-app:2.4.%d\n",
		"metadata: {name: k%d, namespace: other, annotations: {wavesmith.io/update-policy: replace}}\nspec:\n  ingress: {host: b.example.com}\n  image: quay.io/kaotoio/kaoto-app:2.%d.0\n",
		"metadata: {name: k%d, namespace: team, labels: {tier: t%d}}\nspec: {}\n",
	}
	specs := func() []*manifest.Object {
		var objs []*manifest.Object
		for i := range n {
			in := "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\n" + fmt.Sprintf(shapes[i%len(shapes)], i, i)
			o, err := manifest.Decode(fmt.Sprintf("k%d.yaml", i), []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, o...)
		}
		return objs
	}
	for _, platform := range []generators.Platform{generators.Kubernetes, generators.OpenShift} {
		t.Run(string(platform), func(t *testing.T) {
			opts := render.Options{Platform: platform, Engines: engines.Dialects(), Generators: builtin.Registry(), Root: "../.."}
			kept, err := render.Render(context.Background(), specs(), opts)
			if err != nil {
				t.Fatal(err)
			}
			before := kaoto.MapSetsMade()
			opts.DiscardObjects = true
			released, err := render.Render(context.Background(), specs(), opts)
			if err != nil {
				t.Fatal(err)
			}
			// Without reuse this test shows nothing: n Kaotos, each with
			// a set of its own, would pass however sets are cleared.
			if made := kaoto.MapSetsMade() - before; made > n/2 {
				t.Fatalf("%d sets of maps made for %d Kaotos: the render did not release them", made, n)
			}
			if diff := cmp.Diff(string(kept.Stream()), string(released.Stream())); diff != "" {
				t.Errorf("a Kaoto rendered with the maps another released differs (-kept objects +released maps):\n%s", diff)
			}
		})
	}
}

// TestReleaseTwice: a Result's Release called a second time does nothing.
// By then the set may serve the next Kaoto: clearing it would empty that
// Kaoto's children, and pooling it again would hand it to two at once.
func TestReleaseTwice(t *testing.T) {
	set, first := kaoto.TakeMaps()
	first()
	next := kaoto.Lend(set) // the pool hands the set to the next Kaoto
	m := set.Map()
	m["name"] = "next"
	first() // a stale, second call
	if m["name"] != "next" {
		t.Fatalf("a second Release cleared the maps of the Kaoto the set serves now: %v", m)
	}
	next()
	if len(m) != 0 {
		t.Fatalf("the next Kaoto's Release left its map %v", m)
	}
}
