package kaoto_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/kaoto"
	"github.com/wavesmith/wavesmith/internal/testobj"
	"github.com/wavesmith/wavesmith/manifest"
)

// The operator fixtures. testdata/operator/<case>/ holds a Kaoto
// (kaoto.yaml) and the bodies the Kaoto operator server-side applies for it,
// in apply order, on vanilla Kubernetes (kubernetes.yaml) and on OpenShift
// (openshift.yaml). Those two files are transcribed by hand from
// reference/kaoto-operator.md (each starts with a comment naming the section
// it transcribes); no code writes them and there is no -update for them. On
// a mismatch, read the reference: fix the generator, or the transcription.
//
// The fixtures keep the operator's ownerReferences (uid <KAOTO_UID>, §2.1):
// the one field wavesmith leaves out (docs/design.md, Specs: the UID is unknown
// before apply). operatorBodies checks and removes it.

// operatorCases lists every folder of testdata/operator; a folder missing
// from the list, or listed and missing, fails TestOperatorFixtureSet.
var operatorCases = []string{
	// reference §2.3, the four reference cases.
	"minimal", "ingress-host", "ingress-host-path", "ingress-path-only",
	// reference §2.4, further edge cases.
	"ingress-empty", "ingress-regex-path", "ingress-trailing-slash",
	// reference §2.2 path algorithm: "/" and no leading slash.
	"ingress-root-path", "path-no-leading-slash",
	// reference §1: ingress is a pointer; null is absent; empty strings
	// are defaults.
	"ingress-null", "empty-strings",
	// reference §2.2: spec.image without ingress.
	"image-only",
	// reference §7: the operator's two e2e subtests.
	"e2e-no-ingress", "e2e-with-ingress",
	// names and namespaces of 63 characters.
	"name-max-length",
	// kaoto-operator-architecture.md's install example, without namespace.
	"install-example",
}

var platforms = []generators.Platform{generators.Kubernetes, generators.OpenShift}

const fixtureHeader = "# Transcribed by hand from reference/"

func caseFile(c, name string) string { return filepath.Join("testdata", "operator", c, name) }

// ownerReference is the operator's ownerReference (reference §2.1) as
// sigs.k8s.io/yaml decodes it.
func ownerReference(name string) []any {
	return []any{map[string]any{
		"apiVersion":         "designer.kaoto.io/v1alpha1",
		"blockOwnerDeletion": true,
		"controller":         true,
		"kind":               "Kaoto",
		"name":               name,
		"uid":                "<KAOTO_UID>",
	}}
}

// decodeDocuments reads a multi-document YAML stream into plain maps with
// sigs.k8s.io/yaml, the serializer of the operator's bodies (reference
// §2.0), not with wavesmith's own decoder. Duplicate keys are errors.
func decodeDocuments(t testing.TB, name string, b []byte) []map[string]any {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []map[string]any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var m map[string]any
		if err := sigsyaml.UnmarshalStrict(doc, &m); err != nil {
			t.Fatalf("%s: document %d: %v", name, len(out), err)
		}
		if m == nil {
			t.Fatalf("%s: document %d is empty", name, len(out))
		}
		out = append(out, m)
	}
}

// operatorBodies reads a case's fixture for platform p and removes the
// ownerReferences, after checking that each is the reference's.
func operatorBodies(t testing.TB, c string, p generators.Platform) []map[string]any {
	t.Helper()
	file := caseFile(c, string(p)+".yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(fixtureHeader)) {
		t.Fatalf("%s: must start with %q and the reference section it transcribes", file, fixtureHeader)
	}
	bodies := decodeDocuments(t, file, b)
	for i, m := range bodies {
		meta, _ := m["metadata"].(map[string]any)
		if diff := cmp.Diff(ownerReference(fmt.Sprint(meta["name"])), meta["ownerReferences"]); diff != "" {
			t.Fatalf("%s: document %d: ownerReferences are not reference §2.1's, -want +fixture:\n%s", file, i, diff)
		}
		delete(meta, "ownerReferences")
	}
	return bodies
}

// loadSpec reads a case's Kaoto. The engine gives a spec without namespace
// the render's namespace ("default" unless set) before generating
// (generators.Generator: "The spec's namespace is set"); so does this.
func loadSpec(t testing.TB, c string) *manifest.Object {
	t.Helper()
	spec := testobj.Load(t, caseFile(c, "kaoto.yaml"))
	if spec.Namespace() == "" {
		spec.SetNamespace("default")
	}
	return spec
}

// generatedBodies generates a case's children and reads them back the way a
// consumer reads wavesmith's output: encoded, then decoded like the fixture.
func generatedBodies(t testing.TB, g *kaoto.Generator, c string, p generators.Platform) []map[string]any {
	t.Helper()
	res, err := g.Generate(context.Background(), loadSpec(t, c), generators.Options{Platform: p})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i, o := range res.Objects {
		if i > 0 {
			b.WriteString("---\n")
		}
		manifest.Encode(&b, o.Map)
	}
	return decodeDocuments(t, "generated", b.Bytes())
}

func lookup(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func identity(m map[string]any) string {
	return fmt.Sprintf("%v %v %v/%v", m["apiVersion"], m["kind"],
		lookup(m, "metadata", "namespace"), lookup(m, "metadata", "name"))
}

// diffBodies compares the operator's bodies with wavesmith's: first which
// objects, in which order, then each object field for field. It returns ""
// when they are equal.
func diffBodies(operator, wavesmith []map[string]any) string {
	ids := func(ms []map[string]any) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = identity(m)
		}
		return out
	}
	if diff := cmp.Diff(ids(operator), ids(wavesmith)); diff != "" {
		return "objects (apiVersion kind namespace/name, in apply order), -operator +wavesmith:\n" + diff
	}
	var b strings.Builder
	for i := range operator {
		if diff := cmp.Diff(operator[i], wavesmith[i]); diff != "" {
			fmt.Fprintf(&b, "%s, -operator +wavesmith:\n%s", identity(operator[i]), diff)
		}
	}
	return b.String()
}

func TestOperatorFixtureSet(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		dirs = append(dirs, e.Name())
	}
	want := append([]string(nil), operatorCases...)
	sort.Strings(want)
	if diff := cmp.Diff(want, dirs); diff != "" {
		t.Errorf("testdata/operator, -operatorCases +folders:\n%s", diff)
	}
	for _, c := range operatorCases {
		for _, f := range []string{"kaoto.yaml", "kubernetes.yaml", "openshift.yaml"} {
			if _, err := os.Stat(caseFile(c, f)); err != nil {
				t.Errorf("case %s: %v", c, err)
			}
		}
	}
}

// TestOperatorBodies compares the generated children of every case, on both
// platforms, with the operator's bodies transcribed from the reference.
func TestOperatorBodies(t *testing.T) {
	for _, c := range operatorCases {
		for _, p := range platforms {
			t.Run(c+"/"+string(p), func(t *testing.T) {
				want := operatorBodies(t, c, p)
				got := generatedBodies(t, &kaoto.Generator{}, c, p)
				if diff := diffBodies(want, got); diff != "" {
					t.Errorf("generated children of %s differ from the operator's bodies in %s:\n%s", caseFile(c, "kaoto.yaml"), caseFile(c, string(p)+".yaml"), diff)
				}
			})
		}
	}
}

// mutations calls f with a change and its undo for every scalar of v (a
// different value of the same type), every key of its mappings (removed) and
// every mapping (a key added).
func mutations(v any, path string, f func(path string, mutate, undo func())) {
	switch t := v.(type) {
	case map[string]any:
		f(path+".<new key>", func() { t["wavesmith-test-extra"] = "x" }, func() { delete(t, "wavesmith-test-extra") })
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys) // a snapshot: the map changes while we walk it
		for _, k := range keys {
			child := t[k]
			f(path+"."+k+" (removed)", func() { delete(t, k) }, func() { t[k] = child })
			switch child.(type) {
			case map[string]any, []any:
				mutations(child, path+"."+k, f)
			default:
				f(path+"."+k, func() { t[k] = changed(child) }, func() { t[k] = child })
			}
		}
	case []any:
		for i, child := range t {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch child.(type) {
			case map[string]any, []any:
				mutations(child, p, f)
			default:
				f(p, func() { t[i] = changed(child) }, func() { t[i] = child })
			}
		}
	}
}

// changed returns a different value of the same JSON type.
func changed(v any) any {
	switch t := v.(type) {
	case string:
		return t + "x"
	case bool:
		return !t
	case float64:
		return t + 1
	case nil:
		return "x"
	}
	panic(fmt.Sprintf("unexpected %T", v))
}

// TestOperatorBodiesControl shows that the comparison sees every field: each
// scalar of a fixture changed, each key removed and a key added to each
// mapping, one at a time, makes diffBodies report a difference. The case
// holds every kind (Service, Ingress, Route, Deployment) and both operator
// annotation sets; the walk is the same for every case, so one is enough.
func TestOperatorBodiesControl(t *testing.T) {
	for _, c := range []string{"ingress-host-path"} {
		for _, p := range platforms {
			t.Run(c+"/"+string(p), func(t *testing.T) {
				want := operatorBodies(t, c, p)
				got := generatedBodies(t, &kaoto.Generator{}, c, p)
				n := 0
				for i, m := range want {
					mutations(m, fmt.Sprintf("[%d]", i), func(path string, mutate, undo func()) {
						mutate()
						if diffBodies(want, got) == "" {
							t.Errorf("%s: fixture changed at %s, and no difference was reported", c, path)
						}
						undo()
						n++
					})
				}
				if diff := diffBodies(want, got); diff != "" {
					t.Fatalf("mutations not undone:\n%s", diff)
				}
				if n < 100 {
					t.Errorf("only %d mutations: the fixture is too small to be the operator's", n)
				}
				t.Logf("%d one-field changes, each reported", n)
			})
		}
	}
	t.Run("generated output changed", func(t *testing.T) {
		want := operatorBodies(t, "ingress-host-path", generators.Kubernetes)
		got := generatedBodies(t, &kaoto.Generator{}, "ingress-host-path", generators.Kubernetes)
		got[1]["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["http"].(map[string]any)["paths"].([]any)[0].(map[string]any)["pathType"] = "Prefix"
		diff := diffBodies(want, got)
		for _, s := range []string{"Ingress demo/my-kaoto", `"ImplementationSpecific"`, `"Prefix"`} {
			if !strings.Contains(diff, s) {
				t.Errorf("the diff does not show %s:\n%s", s, diff)
			}
		}
		t.Logf("what a mismatch looks like:\n%s", diff)
	})
}

// TestDefaultImageOverride: Generator.DefaultImage plays the part of the
// operator's -ldflags -X .../pkg/defaults.KaotoAppImage (reference §6.1:
// released operators default to a digest of :stable). It replaces the image
// only when spec.image is empty.
func TestDefaultImageOverride(t *testing.T) {
	const digest = "quay.io/kaotoio/kaoto-app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	g := &kaoto.Generator{DefaultImage: digest}
	cases := map[string]struct {
		reason string
		c      string
		image  string
	}{
		"NoImage":   {"spec.image empty: the override", "minimal", digest},
		"WithImage": {"spec.image set: spec.image", "ingress-host-path", "quay.io/kaotoio/kaoto-app:2.4.0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, p := range platforms {
				want := operatorBodies(t, tc.c, p)
				container := lookup(want[len(want)-1], "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
				container["image"] = tc.image
				if diff := diffBodies(want, generatedBodies(t, g, tc.c, p)); diff != "" {
					t.Errorf("%s (%s): %s", tc.reason, p, diff)
				}
			}
		})
	}
}

// TestWavesmithAdditions covers what Generate returns beyond the operator's
// bodies: the labels the rendered Kaoto itself gets (the operator labels no
// CR) and the source position of every child (for error messages).
func TestWavesmithAdditions(t *testing.T) {
	for _, p := range platforms {
		spec := loadSpec(t, "ingress-host-path")
		res, err := (&kaoto.Generator{}).Generate(context.Background(), spec, generators.Options{Platform: p})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"app.kubernetes.io/name":      "kaoto",
			"app.kubernetes.io/component": "designer",
			"app.kubernetes.io/part-of":   "kaoto",
		}
		if diff := cmp.Diff(want, res.SpecLabels); diff != "" {
			t.Errorf("%s: SpecLabels, -want +got:\n%s", p, diff)
		}
		for _, o := range res.Objects {
			if o.Source != spec.Source {
				t.Errorf("%s: %s has source %+v, want the spec's %+v", p, o.Kind(), o.Source, spec.Source)
			}
		}
		if len(res.Warnings) != 0 || len(res.Defaults) != 0 {
			t.Errorf("%s: warnings %v, defaults %v: want none", p, res.Warnings, res.Defaults)
		}
	}
}
