package functions

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/render"
)

// withLegacy is resourceList with kustomize's legacy path and index
// annotations only, a comment, and a ConfigMap functionConfig.
var withLegacy = strings.NewReplacer(
	"internal.config.kubernetes.io/", "config.kubernetes.io/",
	"- apiVersion: designer.kaoto.io/v1alpha1\n", "# the designer\n- apiVersion: designer.kaoto.io/v1alpha1\n",
).Replace(resourceList) + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cfg\n  data:\n    wave: \"2\"\n"

// viaFramework runs the function as kyaml's framework runs a processor
// (Process: children appended as nodes, everything written by kyaml's
// writer): what Run did before it wrote the children itself.
func viaFramework(t *testing.T, in string) string {
	t.Helper()
	p := &Processor{Options: render.Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()}}
	var out bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: strings.NewReader(in), Writer: &out, KeepReaderAnnotations: true}
	err := framework.Execute(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		return p.Process(context.Background(), rl)
	}), rw)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}

// TestRunAsFramework: Run writes the ResourceList kyaml's framework would
// write around Process, object for object and field for field: the
// children's path and index annotations in the forms the input uses
// (kpt's internal ones, or kustomize's legacy ones), the items the user
// wrote, the functionConfig and the results. Only the layout of the
// children's text may differ (render's encoder, not kyaml's).
func TestRunAsFramework(t *testing.T) {
	for name, in := range map[string]string{"internal": resourceList, "legacy": withLegacy} {
		t.Run(name, func(t *testing.T) {
			got, err := process(t, in)
			if err != nil {
				t.Fatalf("%v\n%s", err, got)
			}
			want := viaFramework(t, in)
			var g, w map[string]any
			if err := sigsyaml.Unmarshal([]byte(got), &g); err != nil {
				t.Fatalf("Run's output does not parse: %v\n%s", err, got)
			}
			if err := sigsyaml.Unmarshal([]byte(want), &w); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("Run and the framework differ (-framework +Run):\n%s", diff)
			}
			if n := len(g["items"].([]any)); n != 5 {
				t.Errorf("%d items, want the Kaoto, the ConfigMap and 3 children", n)
			}
		})
	}
}

// commented is a ResourceList whose items carry comments in every place
// (before, after and between items, on lines and keys), block and flow
// scalars and collections, and an anchor one item uses in the next: what
// writing the items one by one could write otherwise than kyaml.
const commented = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
# head of the first item
- apiVersion: example.com/v1 # on its first line
  kind: Example
  metadata:
    name: a # the name
    annotations:
      config.kubernetes.io/path: a.yaml
    labels: &shared
      app: x
  spec:
    # head of a key
    script: |
      line one

        indented
    folded: >-
      some folded
      text
    keep: |+
      kept

    empty: ""
    quoted: 'it''s'
    list: [a, b]
    flow: {x: 1, y: [2]}
    nested:
    - - deep
      - er
    -   k: v
  # foot of spec
# foot of the first item

# head of the second item, after a blank line
- apiVersion: example.com/v1
  kind: Example
  metadata:
    name: b
    labels: *shared
  spec: {}
- {apiVersion: example.com/v1, kind: Example, metadata: {name: c}}
# after the last item
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cfg
`

// TestWriteListAsKyaml: without children, writeList writes what kyaml's
// writer writes, byte for byte (comments, quotes, the functionConfig and
// the results included): the items the user wrote come back as kpt and
// kustomize would write them themselves.
func TestWriteListAsKyaml(t *testing.T) {
	for name, in := range map[string]string{"internal": resourceList, "legacy": withLegacy, "commented": commented, "empty": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"} {
		t.Run(name, func(t *testing.T) {
			read := func() (*kio.ByteReadWriter, *framework.ResourceList) {
				rw := &kio.ByteReadWriter{Reader: strings.NewReader(in), KeepReaderAnnotations: true}
				items, err := rw.Read()
				if err != nil {
					t.Fatal(err)
				}
				rl := &framework.ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
				rl.Results = framework.Results{{Severity: framework.Warning, Message: "a warning", File: &framework.File{Path: "kaoto.yaml"}}}
				return rw, rl
			}
			rw, rl := read()
			var got bytes.Buffer
			if err := writeList(&got, rw, rl, nil); err != nil {
				t.Fatal(err)
			}
			rw, rl = read()
			var want bytes.Buffer
			b, err := yaml.Marshal(rl.Results)
			if err != nil {
				t.Fatal(err)
			}
			if rw.Results, err = yaml.Parse(string(b)); err != nil {
				t.Fatal(err)
			}
			rw.Writer = &want
			if err := rw.Write(rl.Items); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("writeList and kyaml's writer differ (-kyaml +writeList):\n%s", diff)
			}
		})
	}
}

// TestAppendItem: an object becomes one item of a compact sequence,
// its block scalars' empty lines kept empty.
func TestAppendItem(t *testing.T) {
	var b bytes.Buffer
	appendItem(&b, []byte("kind: ConfigMap\ndata:\n  a: |\n    one\n\n    two\n"))
	appendItem(&b, []byte("kind: Secret"))
	want := "- kind: ConfigMap\n  data:\n    a: |\n      one\n\n      two\n- kind: Secret\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var m []map[string]any
	if err := sigsyaml.Unmarshal(b.Bytes(), &m); err != nil || m[0]["data"].(map[string]any)["a"] != "one\n\ntwo\n" {
		t.Errorf("items read back as %v, %v", m, err)
	}
}

// TestRunAllocations: what one Kaoto costs the function, in allocations
// and bytes, against a recorded budget (counts, not times: they do not
// flake; the same with -race, where they are a tenth higher, and any
// GOMAXPROCS). Measured: 1,076 allocations and 170 KB (race: 1,190 and
// 235 KB). The control is the function run inside kyaml's framework,
// each child parsed into nodes and written by kyaml, as Run did before
// it wrote the children itself: 5,176 allocations and 1.05 MB a Kaoto
// (at 10,000 Kaotos: 23-35 s and 3 GB, against 3-4 s and 0.45 GB). It must
// fail the budget, or the guard could not catch a return to it.
func TestRunAllocations(t *testing.T) {
	const n = 200
	var in strings.Builder
	in.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range n {
		fmt.Fprintf(&in, "- apiVersion: designer.kaoto.io/v1alpha1\n  kind: Kaoto\n  metadata:\n    name: k%03d\n    namespace: team\n    annotations:\n      internal.config.kubernetes.io/path: k%03d.yaml\n  spec:\n    ingress: {host: k%03d.example.com}\n", i, i, i)
	}
	const maxMallocs, maxBytes = 1400, 300 << 10 // a Kaoto
	per := func(f func()) (uint64, uint64) {
		f() // warm: the generators' and encoders' one-time state
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return (after.Mallocs - before.Mallocs) / n, (after.TotalAlloc - before.TotalAlloc) / n
	}
	m, b := per(func() {
		if _, err := process(t, in.String()); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("Run: %d allocations and %d bytes a Kaoto (budget %d and %d)", m, b, maxMallocs, maxBytes)
	if m > maxMallocs || b > maxBytes {
		t.Errorf("the function allocated %d times and %d bytes a Kaoto, over its budget of %d and %d", m, b, maxMallocs, maxBytes)
	}
	m, b = per(func() { viaFramework(t, in.String()) })
	t.Logf("control, children as kyaml's nodes: %d allocations and %d bytes a Kaoto", m, b)
	if m <= maxMallocs && b <= maxBytes {
		t.Errorf("the control (children as kyaml's nodes) is within the budget: %d allocations and %d bytes a Kaoto", m, b)
	}
}
