package render

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestNames renders objects whose names or fields the API server refuses:
// each is an error naming the file, the object and the field, with
// apimachinery's own message.
func TestNames(t *testing.T) {
	kaoto := func(name, ns, ingress string) string {
		return "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n  image: x\n" + ingress
	}
	cases := map[string]struct {
		reason   string
		yaml     string
		platform generators.Platform
		want     []string // substrings of the error; none: no error
	}{
		"Valid": {
			reason: "a valid Kaoto renders",
			yaml:   kaoto("designer", "demo", "  ingress: {host: a.example.com, path: /x}\n"),
		},
		"KaotoDotName": {
			reason: "a Kaoto named kaoto.team-a: its Service name is not a DNS-1035 label",
			yaml:   kaoto("kaoto.team-a", "demo", ""),
			want:   []string{"in.yaml:1: Service/demo/kaoto.team-a: metadata.name:", "a DNS-1035 label must consist of"},
		},
		"ConfigMapClimbs": {
			reason: "a ConfigMap named ../../../../x/pwned",
			yaml:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../../../../x/pwned\n",
			want:   []string{"in.yaml:4: ConfigMap/../../../../x/pwned: metadata.name:", "RFC 1123 subdomain"},
		},
		"NamespaceClimbs": {
			reason: "a spec namespace with ../",
			yaml:   kaoto("a", "../../etc", ""),
			want:   []string{"in.yaml:5: Kaoto.designer.kaoto.io/../../etc/a: metadata.namespace:", "RFC 1123 label"},
		},
		"NamespaceUpper": {
			reason: "a namespace in upper case",
			yaml:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: Demo}\n",
			want:   []string{"ConfigMap/Demo/a: metadata.namespace:"},
		},
		"NamespaceName": {
			reason: "a Namespace must be a DNS-1123 label (no dots)",
			yaml:   "apiVersion: v1\nkind: Namespace\nmetadata: {name: a.b}\n",
			want:   []string{"Namespace/a.b: metadata.name:", "must not contain dots"},
		},
		"ServiceName": {
			reason: "a Service must be a DNS-1035 label (no leading digit)",
			yaml:   "apiVersion: v1\nkind: Service\nmetadata: {name: 1svc, namespace: demo}\n",
			want:   []string{"Service/demo/1svc: metadata.name:", "DNS-1035"},
		},
		"RBACColon": {
			reason: "an RBAC name is a path segment: colons are fine (the labels made of it lose them)",
			yaml:   "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: \"system:metrics\"}\n",
		},
		"RBACSlash": {
			reason: "an RBAC name with a slash",
			yaml:   "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a/b}\n",
			want:   []string{"ClusterRole.rbac.authorization.k8s.io/a/b: metadata.name:", "may not contain '/'"},
		},
		"LabelKey": {
			reason: "a label key that is not a qualified name",
			yaml:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {\"bad key\": x}}\n",
			want:   []string{"ConfigMap/a: metadata.labels:", "name part must consist of"},
		},
		"LabelValue": {
			reason: "a label value longer than 63 characters",
			yaml:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {x: " + strings.Repeat("v", 64) + "}}\n",
			want:   []string{"ConfigMap/a: metadata.labels:", "must be no more than 63"},
		},
		"AnnotationKey": {
			reason: "an annotation key that is not a qualified name",
			yaml:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {\"a/b/c\": x}}\n",
			want:   []string{"ConfigMap/a: metadata.annotations:"},
		},
		"AnnotationSize": {
			reason: "annotations larger than 256 KiB in total",
			yaml:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {x: " + strings.Repeat("v", 256*1024) + "}}\n",
			want:   []string{"ConfigMap/a: metadata.annotations:", "Too long"},
		},
		"IngressHost": {
			reason: "a Kaoto ingress host that is no DNS name reaches the Ingress",
			yaml:   kaoto("a", "demo", "  ingress: {host: \"evil host\"}\n"),
			want:   []string{"Ingress.networking.k8s.io/demo/a: spec.rules[0].host:", "RFC 1123 subdomain"},
		},
		"IngressIP": {
			reason: "an Ingress host may not be an IP address",
			yaml:   kaoto("a", "demo", "  ingress: {host: 10.0.0.1}\n"),
			want:   []string{"spec.rules[0].host:", "not an IP address"},
		},
		"IngressPath": {
			reason: "an Ingress path must be absolute",
			yaml:   kaoto("a", "demo", "  ingress: {path: relative}\n"),
			want:   []string{"Ingress.networking.k8s.io/demo/a: spec.rules[0].http.paths[0].path:", "absolute path"},
		},
		"RouteHost": {
			reason:   "a Route host that is no DNS name",
			yaml:     kaoto("a", "demo", "  ingress: {host: \"a_b.example.com\"}\n"),
			platform: generators.OpenShift,
			want:     []string{"Route.route.openshift.io/demo/a: spec.host:"},
		},
		"NameWrongType": {
			reason: "a name that is a mapping",
			yaml:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {a: b}}\n",
			want:   []string{"metadata.name: invalid value: must be a string, not a mapping"},
		},
		"NamespaceWrongType": {
			reason: "a namespace that is a mapping does not become default",
			yaml:   kaoto("a", "{a: b}", ""),
			want:   []string{"in.yaml:5:", "metadata.namespace: invalid value: must be a string, not a mapping"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := manifest.Decode("in.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Render(context.Background(), objs, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), Platform: tc.platform, DiscardObjects: true})
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("%s: %v", tc.reason, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s: want an error", tc.reason)
			}
			if !errors.Is(err, manifest.ErrInvalid) {
				t.Errorf("%s: not ErrInvalid: %v", tc.reason, err)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: the error lacks %q:\n%v", tc.reason, s, err)
				}
			}
		})
	}
}
