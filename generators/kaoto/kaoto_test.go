package kaoto

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/testobj"
	"github.com/wavesmith/wavesmith/manifest"
)

// The generated children are compared with the Kaoto operator's bodies,
// transcribed by hand from the reference, in operator_test.go (Generate) and
// rendered_test.go (the whole engine).

// TestIngressPath checks the operator's path algorithm against the list of
// consequences in reference/kaoto-operator.md §2.2 (and the default of
// §2.4's first row for an empty path).
func TestIngressPath(t *testing.T) {
	for in, want := range map[string]string{
		"/designer": "/designer(/|$)(.*)", "/k2": "/k2(/|$)(.*)", "/foo/": "/foo/(/|$)(.*)",
		"/foo(/|$)(.*)": "/foo(/|$)(.*)", "/": "/(/|$)(.*)", "": "/designer(/|$)(.*)",
	} {
		spec := manifest.New(map[string]any{"apiVersion": "designer.kaoto.io/v1alpha1", "kind": "Kaoto",
			"metadata": map[string]any{"name": "designer"}, "spec": map[string]any{"ingress": map[string]any{"path": in}}})
		k, err := Decode(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := IngressPath(k); got != want {
			t.Errorf("IngressPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := map[string]struct {
		reason    string
		in        string
		wantField string
		wantLine  int
	}{
		"NoName":         {"a Kaoto needs a name", "metadata: {namespace: x}\n", "metadata.name", 0},
		"UnknownSpec":    {"unknown spec fields are refused", "metadata: {name: a}\nspec:\n  imagee: x\n", "spec.imagee", 6},
		"UnknownIngress": {"unknown ingress fields are refused", "metadata: {name: a}\nspec:\n  ingress:\n    hots: x\n", "spec.ingress.hots", 7},
		"ImageNumber":    {"image must be a string", "metadata: {name: a}\nspec:\n  image: 3\n", "spec.image", 6},
		"IngressString":  {"ingress must be a mapping", "metadata: {name: a}\nspec:\n  ingress: x\n", "spec.ingress", 6},
		"SpecList":       {"spec must be a mapping", "metadata: {name: a}\nspec: []\n", "spec", 5},
		"ImageSpaces":    {"an image with spaces is refused at decode, not by the API server", "metadata: {name: a}\nspec:\n  image: ' img '\n", "spec.image", 6},
		"ImageUpper":     {"an upper-case repository is refused", "metadata: {name: a}\nspec:\n  image: quay.io/Kaotoio/kaoto\n", "spec.image", 6},
		"Replicas":       {"a Kaoto has no replicas field: a huge count is refused as unknown, never rendered", "metadata: {name: a}\nspec:\n  replicas: 99999999999\n", "spec.replicas", 6},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := manifest.Decode("k.yaml", []byte("apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\n"+"# x\n"+tc.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&Generator{}).Generate(context.Background(), objs[0], generators.Options{})
			if !errors.Is(err, manifest.ErrInvalid) {
				t.Fatalf("%s: want ErrInvalid, got %v", tc.reason, err)
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("%s: want *manifest.Error, got %T", tc.reason, err)
			}
			if me.Field != tc.wantField || me.File != "k.yaml" {
				t.Errorf("%s: field %q file %q, want %q k.yaml", tc.reason, me.Field, me.File, tc.wantField)
			}
			if tc.wantLine != 0 && me.Line != tc.wantLine {
				t.Errorf("%s: line %d, want %d", tc.reason, me.Line, tc.wantLine)
			}
		})
	}
}

func TestCheckImage(t *testing.T) {
	cases := map[string]bool{
		"quay.io/kaotoio/kaoto-app:stable":       true,
		"kaoto":                                  true,
		"library/kaoto:1.0":                      true,
		"localhost/kaoto":                        true,
		"localhost:5000/a/b__c.d-e--f:v1.2-rc_3": true,
		"[::1]:5000/kaoto:tag":                   true,
		"Registry.Example/kaoto":                 true,
		"kaoto@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef":   true,
		"kaoto:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": true,
		" img ":            false,
		"img ":             false,
		"im\ng":            false,
		"im\x1b[2Jg":       false,
		"Kaoto":            false,
		"kaoto:":           false,
		"kaoto:-x":         false,
		"kaoto:a/b":        false,
		":tag":             false,
		"/kaoto":           false,
		"kaoto/":           false,
		"a//b":             false,
		"-a":               false,
		"a_":               false,
		"a-_b":             false,
		"a___b":            false,
		"a..b":             false,
		"reg.io:/a":        false,
		"reg.io:x/a":       false,
		"-reg.io/a":        false,
		"kaoto@sha256:abc": false,
		"kaoto@:0123456789abcdef0123456789abcdef":       false,
		"kaoto@sha256:0123456789abcdef0123456789abcdeg": false,
		"kaoto:" + strings.Repeat("t", 129):             false,
		strings.Repeat("a", 256):                        false,
		"käoto":                                         false,
	}
	for ref, ok := range cases {
		err := checkImage(ref)
		if (err == nil) != ok {
			t.Errorf("checkImage(%q) = %v, want ok=%v", ref, err, ok)
		}
		if err != nil && !errors.Is(err, errImage) {
			t.Errorf("checkImage(%q): %v does not wrap errImage", ref, err)
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	spec := testobj.Load(b, "testdata/operator/ingress-host-path/kaoto.yaml")
	g := &Generator{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Generate(context.Background(), spec, generators.Options{Platform: generators.Kubernetes}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPathWarnings: a path ending in / makes the operator's regex route
// that path alone on Kubernetes; the render says so and still renders what
// the operator would. OpenShift's Route path is a prefix: no warning,
// unless it carries the Ingress rewrite regex, which a Route matches
// literally.
func TestPathWarnings(t *testing.T) {
	cases := map[string]struct {
		reason   string
		path     string
		platform generators.Platform
		want     string // a part of the warning; "" for none
	}{
		"Root":          {reason: "/ routes only /", path: "/", want: `"/" ends in /: the Ingress path becomes "/(/|$)(.*)"`},
		"TrailingSlash": {reason: "/foo/ routes only /foo/", path: "/foo/", want: `leave the trailing slash out ("/foo")`},
		"Plain":         {reason: "the usual path", path: "/foo"},
		"Default":       {reason: "no path: /<name>", path: ""},
		"RouteRoot":     {reason: "a Route's / is a prefix", path: "/", platform: generators.OpenShift},
		"RouteRegex":    {reason: "a Route matches the rewrite regex literally", path: "/designer(/|$)(.*)", platform: generators.OpenShift, want: `which an OpenShift Route matches literally: no URL serves the designer through the Route; give the path without it ("/designer")`},
		"IngressRegex":  {reason: "on Kubernetes the regex is the operator's own suffix, not doubled", path: "/designer(/|$)(.*)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := manifest.New(map[string]any{"apiVersion": "designer.kaoto.io/v1alpha1", "kind": "Kaoto",
				"metadata": map[string]any{"name": "designer", "namespace": "demo"}, "spec": map[string]any{"ingress": map[string]any{"path": tc.path}}})
			res, err := (&Generator{}).Generate(context.Background(), spec, generators.Options{Platform: tc.platform})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Objects) != 3 {
				t.Errorf("%s: %d objects, want Service, Ingress or Route, Deployment", tc.reason, len(res.Objects))
			}
			var got string
			for _, w := range res.Warnings {
				if w.Field != "spec.ingress.path" {
					t.Errorf("warning on %s, want spec.ingress.path", w.Field)
				}
				got += w.Message
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("%s: unexpected warning %q", tc.reason, got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("%s: warning %q, want it to contain %q", tc.reason, got, tc.want)
			}
		})
	}
}
