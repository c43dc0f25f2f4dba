package kaoto

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/golden"
	"github.com/wavesmith/wavesmith/internal/testobj"
	"github.com/wavesmith/wavesmith/manifest"
)

func generate(t testing.TB, spec *manifest.Object, p generators.Platform) []*manifest.Object {
	t.Helper()
	res, err := (&Generator{}).Generate(context.Background(), spec, generators.Options{Platform: p})
	if err != nil {
		t.Fatal(err)
	}
	return res.Objects
}

// TestGolden covers the reference's four cases and its edge cases on both
// platforms. The golden files were checked against the operator's apply
// bodies in reference/kaoto-operator.md, minus ownerReferences.
func TestGolden(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/*.input.yaml")
	if len(inputs) < 7 {
		t.Fatalf("want the 7 reference cases in testdata, found %d", len(inputs))
	}
	for _, in := range inputs {
		for _, p := range []generators.Platform{generators.Kubernetes, generators.OpenShift} {
			name := strings.TrimSuffix(filepath.Base(in), ".input.yaml") + "-" + string(p)
			t.Run(name, func(t *testing.T) {
				var b bytes.Buffer
				for i, o := range generate(t, testobj.Load(t, in), p) {
					if i > 0 {
						b.WriteString("---\n")
					}
					manifest.Encode(&b, o.Map)
				}
				golden.Assert(t, filepath.Join("testdata", name+".golden.yaml"), b.Bytes())
			})
		}
	}
}

// TestReferenceWorkedExample compares, independently of the golden files,
// the worked example of the reference (section 2.2) transcribed by hand.
func TestReferenceWorkedExample(t *testing.T) {
	labels := "    app.kubernetes.io/component: designer\n    app.kubernetes.io/instance: my-kaoto\n    app.kubernetes.io/managed-by: kaoto-operator\n    app.kubernetes.io/name: kaoto\n    app.kubernetes.io/part-of: kaoto\n"
	want := `apiVersion: v1
kind: Service
metadata:
  labels:
` + labels + `  name: my-kaoto
  namespace: demo
spec:
  ports:
  - name: http
    port: 8080
    protocol: TCP
    targetPort: http
  publishNotReadyAddresses: true
  selector:
    app.kubernetes.io/instance: my-kaoto
    app.kubernetes.io/name: kaoto
  sessionAffinity: None
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /$2
    nginx.ingress.kubernetes.io/use-regex: "true"
  labels:
` + labels + `  name: my-kaoto
  namespace: demo
spec:
  rules:
  - host: kaoto.example.com
    http:
      paths:
      - backend:
          service:
            name: my-kaoto
            port:
              name: http
        path: /designer(/|$)(.*)
        pathType: ImplementationSpecific
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
` + labels + `  name: my-kaoto
  namespace: demo
spec:
  replicas: 1
  selector:
    matchLabels:
  ` + strings.ReplaceAll(labels, "\n    ", "\n      ") + `  template:
    metadata:
      labels:
    ` + strings.ReplaceAll(labels, "\n    ", "\n        ") + `    spec:
      containers:
      - env:
        - name: NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        image: quay.io/kaotoio/kaoto-app:2.4.0
        imagePullPolicy: Always
        livenessProbe:
          failureThreshold: 10
          httpGet:
            path: /
            port: 8080
            scheme: HTTP
          initialDelaySeconds: 5
          periodSeconds: 10
          successThreshold: 1
          timeoutSeconds: 10
        name: kaoto
        ports:
        - containerPort: 8080
          name: http
          protocol: TCP
        readinessProbe:
          failureThreshold: 10
          httpGet:
            path: /
            port: 8080
            scheme: HTTP
          initialDelaySeconds: 5
          periodSeconds: 10
          successThreshold: 1
          timeoutSeconds: 10
        resources:
          requests:
            cpu: 500m
            memory: 600Mi
        securityContext:
          allowPrivilegeEscalation: false
          runAsNonRoot: true
          seccompProfile:
            type: RuntimeDefault
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
`
	wantObjs, err := manifest.Decode("reference", []byte(want))
	if err != nil {
		t.Fatalf("transcription: %v", err)
	}
	got := generate(t, testobj.Load(t, "testdata/ingress-host-path.input.yaml"), generators.Kubernetes)
	if len(got) != len(wantObjs) {
		t.Fatalf("%d objects, want %d", len(got), len(wantObjs))
	}
	for i := range got {
		if diff := cmp.Diff(wantObjs[i].Map, got[i].Map); diff != "" {
			t.Errorf("%s: -reference +got:\n%s", wantObjs[i].Kind(), diff)
		}
	}
}

func TestRouteReference(t *testing.T) {
	cases := map[string]struct {
		input, path, host string
		rewrite           bool
	}{
		"ingress-host":        {"ingress-host", "/", "kaoto.example.com", false},
		"ingress-host-path":   {"ingress-host-path", "/designer", "kaoto.example.com", true},
		"ingress-path-only":   {"ingress-path-only", "/k2", "", true},
		"ingress-empty":       {"ingress-empty", "/", "", false},
		"regex leaks through": {"ingress-regex-path", "/foo(/|$)(.*)", "", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := generate(t, testobj.Load(t, "testdata/"+tc.input+".input.yaml"), generators.OpenShift)
			r := objs[1]
			if r.Kind() != "Route" {
				t.Fatalf("second object is a %s", r.Kind())
			}
			spec := r.Map["spec"].(map[string]any)
			if spec["path"] != tc.path || spec["host"] != tc.host {
				t.Errorf("path %v host %v, want %q %q", spec["path"], spec["host"], tc.path, tc.host)
			}
			_, has := r.Annotation("haproxy.router.openshift.io/rewrite-target")
			if has != tc.rewrite {
				t.Errorf("rewrite annotation present=%v, want %v", has, tc.rewrite)
			}
			if spec["port"].(map[string]any)["targetPort"] != int64(8080) {
				t.Errorf("Route targetPort must be the integer 8080")
			}
		})
	}
}

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

func TestNoIngressWithoutSpecIngress(t *testing.T) {
	for _, p := range []generators.Platform{generators.Kubernetes, generators.OpenShift} {
		var kinds []string
		for _, o := range generate(t, testobj.Load(t, "testdata/minimal.input.yaml"), p) {
			kinds = append(kinds, o.Kind())
		}
		if diff := cmp.Diff([]string{"Service", "Deployment"}, kinds); diff != "" {
			t.Errorf("%s: -want +got:\n%s", p, diff)
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

func BenchmarkGenerate(b *testing.B) {
	spec := testobj.Load(b, "testdata/ingress-host-path.input.yaml")
	g := &Generator{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Generate(context.Background(), spec, generators.Options{Platform: generators.Kubernetes}); err != nil {
			b.Fatal(err)
		}
	}
}
