package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/manifest"
)

// outputsRender renders the examples (edit changes the decoded inputs
// first) with outputs (nil: none) and returns what every consumer of a
// tree reads: the stream, the tree, the plan and the warnings.
func outputsRender(t *testing.T, outputs *Outputs, defaults map[string]string, edit func([]*manifest.Object)) (stream []byte, tree map[string][]byte, plan *gitops.Plan, warnings []manifest.Warning) {
	t.Helper()
	res := renderExamplesWith(t, Options{Platform: generators.Kubernetes, DiscardObjects: true, Outputs: outputs, Defaults: defaults}, edit)
	return res.Stream(), res.Tree(), res.Plan(), res.Warnings
}

// moveWidgets gives the Component "widgets", on which "shop" depends, a
// later wave: shop's objects move with it although shop did not change.
func moveWidgets(objs []*manifest.Object) {
	for _, o := range objs {
		if o.Kind() == "Component" && o.Name() == "widgets" {
			o.SetAnnotation(inventory.ApplyOrder, "7")
		}
	}
}

// TestOutputsReuse renders the examples, then again from the first
// render's records, unchanged and after edits, and compares each with a
// render without records: same stream, tree, plan and warnings.
func TestOutputsReuse(t *testing.T) {
	first := NewOutputs(nil)
	outputsRender(t, first, nil, nil)
	if h, m := first.Stats(); h != 0 || m == 0 {
		t.Fatalf("first render: %d hits, %d misses; want 0 hits", h, m)
	}
	specs := len(first.Records())
	for _, tc := range []struct {
		name     string
		defaults map[string]string
		edit     func([]*manifest.Object)
		hits     int
	}{
		{"unchanged", nil, nil, specs},
		// widgets changed, shop moved with it: both rendered again.
		{"a dependency's wave moved", nil, moveWidgets, specs - 2},
		{"a render default changed", map[string]string{inventory.DeletePolicy: "orphan"}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantTree, wantPlan, wantWarn := outputsRender(t, nil, tc.defaults, tc.edit)
			o := NewOutputs(first.Records())
			got, gotTree, gotPlan, gotWarn := outputsRender(t, o, tc.defaults, tc.edit)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("stream: -full +reused:\n%s", diff)
			}
			if diff := cmp.Diff(wantTree, gotTree); diff != "" {
				t.Errorf("tree: -full +reused:\n%s", diff)
			}
			if diff := cmp.Diff(wantPlan, gotPlan); diff != "" {
				t.Errorf("plan: -full +reused:\n%s", diff)
			}
			if diff := cmp.Diff(wantWarn, gotWarn); diff != "" {
				t.Errorf("warnings: -full +reused:\n%s", diff)
			}
			if h, _ := o.Stats(); h != tc.hits {
				t.Errorf("%d specs reused, want %d", h, tc.hits)
			}
			if n := len(o.Records()); n != specs {
				t.Errorf("%d records kept, want one per spec (%d)", n, specs)
			}
		})
	}
}

// TestOutputsStaleKeyControl: with the wave plan left out of the digest,
// shop's output is reused at its old wave, and the comparison of
// TestOutputsReuse fails, as it must.
func TestOutputsStaleKeyControl(t *testing.T) {
	staleOutputKeyForTest = true
	defer func() { staleOutputKeyForTest = false }()
	first := NewOutputs(nil)
	outputsRender(t, first, nil, nil)
	want, _, _, _ := outputsRender(t, nil, nil, moveWidgets)
	got, _, _, _ := outputsRender(t, NewOutputs(first.Records()), nil, moveWidgets)
	if string(want) == string(got) {
		t.Fatal("a stale output digest went unnoticed: the comparison cannot fail")
	}
}

// TestOutputsCorruptRecords: records cut short, extended or changed are
// misses, never a different output.
func TestOutputsCorruptRecords(t *testing.T) {
	first := NewOutputs(nil)
	want, _, _, _ := outputsRender(t, first, nil, nil)
	for _, tc := range []struct {
		name  string
		spoil func([]byte) []byte
	}{
		{"cut short", func(b []byte) []byte { return b[:len(b)/2] }},
		{"a byte more", func(b []byte) []byte { return append(b, 0) }},
		{"a count too large", func(b []byte) []byte { return append([]byte{0, 0x7e}, b[2:]...) }},
		{"empty", func([]byte) []byte { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := map[[sha256.Size]byte][]byte{}
			for k, b := range first.Records() {
				recs[k] = tc.spoil(append([]byte(nil), b...))
			}
			o := NewOutputs(recs)
			got, _, _, _ := outputsRender(t, o, nil, nil)
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("-full +from spoiled records:\n%s", diff)
			}
			if h, _ := o.Stats(); h != 0 {
				t.Errorf("%d spoiled records reused", h)
			}
		})
	}
}

// FuzzDecodeOutput: any bytes decode to an output or an error, never a
// panic.
func FuzzDecodeOutput(f *testing.F) {
	first := NewOutputs(nil)
	objs, err := load.Inputs(context.Background(), "..", builtin.Registry(), []string{examples}, nil)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := Render(context.Background(), objs, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), DiscardObjects: true, Outputs: first}); err != nil {
		f.Fatal(err)
	}
	for _, b := range first.Records() {
		f.Add(b)
	}
	spec := &Item{Object: manifest.New(map[string]any{"metadata": map[string]any{"name": "s"}}), Spec: 0}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _, err := decodeOutput(b, spec)
		if err == nil {
			for _, c := range out.children {
				if c.Ref == nil || c.Object == nil {
					t.Fatal("a child without its reference or object")
				}
			}
		}
		// RecordPieces reads what decodeOutput reads, to the same answer.
		pieces, perr := RecordPieces(b)
		if (err == nil) != (perr == nil) {
			t.Fatalf("decodeOutput: %v; RecordPieces: %v", err, perr)
		}
		if err == nil && !slices.EqualFunc(pieces, outputPieces(&out), bytes.Equal) {
			t.Fatal("RecordPieces gives other pieces than decodeOutput")
		}
	})
}

// TestOutputsSpecBytesNeedOutputOrder: a record brings the spec's bytes
// (with its inventory and render digest) only when its children come in
// the order of the output; otherwise the spec is encoded again. Each
// record's spec bytes are replaced by a marker: with the children
// reversed, the render must not show it and equals a full render; the
// control, children in order, shows it (the record's bytes are used).
func TestOutputsSpecBytesNeedOutputOrder(t *testing.T) {
	first := NewOutputs(nil)
	want, _, _, _ := outputsRender(t, first, nil, nil)
	spec := &Item{Object: manifest.New(map[string]any{"metadata": map[string]any{"name": "s"}}), Spec: 0}
	for _, reversed := range []bool{true, false} {
		recs := map[[sha256.Size]byte][]byte{}
		swapped := 0
		for k, b := range first.Records() {
			out, wave, err := decodeOutput(b, spec)
			if err != nil {
				t.Fatal(err)
			}
			out.specYAML = []byte("marker: from the record\n")
			if reversed && len(out.children) > 1 {
				slices.Reverse(out.children)
				swapped++
			}
			recs[k] = encodeOutput(&out, wave)
		}
		if reversed && swapped == 0 {
			t.Fatal("no spec with two children: the test proves nothing")
		}
		got, _, _, _ := outputsRender(t, NewOutputs(recs), nil, nil)
		marked := strings.Contains(string(got), "marker: from the record")
		switch {
		case reversed && marked:
			t.Error("children in another order than the output's: the record's spec bytes were used")
		case reversed:
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("children reversed: -full +reused:\n%s", diff)
			}
		case !marked:
			t.Error("the control: children in output order, the record's spec bytes were not used")
		}
	}
}

// TestOutputsPieces: every spec's and child's bytes of a render with
// records are a piece of a record kept (Outputs.Piece), rendered or
// reused, and RecordPieces of that record gives the same bytes; the same
// bytes copied are not a piece (the control).
func TestOutputsPieces(t *testing.T) {
	var records map[[sha256.Size]byte][]byte
	for _, round := range []string{"rendered", "reused"} {
		o := NewOutputs(records)
		objs, err := load.Inputs(context.Background(), "..", builtin.Registry(), []string{examples}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Render(context.Background(), objs, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), DiscardObjects: true, Outputs: o})
		if err != nil {
			t.Fatal(err)
		}
		records = o.Records()
		pieces := 0
		for _, it := range res.Items {
			p, ok := o.Piece(it.YAML)
			if it.Role == PassThrough {
				if ok {
					t.Errorf("%s: a pass-through object is a piece", round)
				}
				continue
			}
			if !ok {
				t.Errorf("%s: %s is no piece of a record", round, it.Key)
				continue
			}
			pieces++
			all, err := RecordPieces(records[p.Key])
			if err != nil || p.Index >= len(all) || string(all[p.Index]) != string(it.YAML) {
				t.Errorf("%s: %s: its piece %+v does not give its bytes (%v)", round, it.Key, p, err)
			}
			if _, ok := o.Piece(append([]byte(nil), it.YAML...)); ok {
				t.Errorf("%s: a copy of %s's bytes is a piece", round, it.Key)
			}
		}
		if pieces == 0 {
			t.Fatalf("%s: no piece: the test proves nothing", round)
		}
	}
}

// TestOutputsKeepSpecWarnings: writing a spec's own labels and
// annotations may warn (here an explicit policy Argo CD cannot express);
// a spec taken from a record is not written again, and its record gives
// the warnings writing it gave.
func TestOutputsKeepSpecWarnings(t *testing.T) {
	once := func(objs []*manifest.Object) {
		for _, o := range objs {
			if o.Kind() == "Component" && o.Name() == "widgets" {
				o.SetAnnotation(inventory.ReconcilePolicy, inventory.ReconcileOnce)
			}
		}
	}
	first := NewOutputs(nil)
	_, _, _, want := outputsRender(t, first, nil, once)
	own := func(w manifest.Warning) bool {
		return strings.Contains(w.Object, "widgets") && strings.Contains(w.Message, "reconcile-policy once") && strings.Contains(w.Object, "Component")
	}
	if !slices.ContainsFunc(want, own) {
		t.Fatalf("the spec's own warning is missing from the full render, the case tests nothing: %v", want)
	}
	o := NewOutputs(first.Records())
	_, _, _, got := outputsRender(t, o, nil, once)
	if h, _ := o.Stats(); h != len(first.Records()) {
		t.Fatalf("%d specs reused, want all %d", h, len(first.Records()))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings: -full +reused:\n%s", diff)
	}
}
