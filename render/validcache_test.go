package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/manifest"
)

// TestKnownValidAgreesWithFullRules: whatever was seen before, the cached
// checks report exactly what apimachinery's rules report: every object is
// checked twice (the second time its valid strings are known) and in
// every order, and both must equal the full check.
func TestKnownValidAgreesWithFullRules(t *testing.T) {
	obj := func(name, ns string, labels, annotations map[string]any) *manifest.Object {
		md := map[string]any{"name": name}
		if ns != "" {
			md["namespace"] = ns
		}
		if labels != nil {
			md["labels"] = labels
		}
		if annotations != nil {
			md["annotations"] = annotations
		}
		return manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md})
	}
	big := strings.Repeat("x", 200<<10)
	objs := []*manifest.Object{
		obj("ok", "demo", map[string]any{"app.kubernetes.io/name": "web"}, map[string]any{"a.example.com/x": "1"}),
		obj("ok", "demo", map[string]any{"app.kubernetes.io/name": "not valid!"}, nil),         // a known key, a bad value
		obj("ok", "demo", map[string]any{"Bad Key": "web"}, nil),                               // a bad key, a known value
		obj("ok", "demo", nil, map[string]any{"a.example.com/x": big, "b.example.com/y": big}), // known keys, too large together
		obj("Bad_Name", "demo", nil, nil),
		obj("ok", "Bad_Namespace", nil, nil),
		obj("ok", "demo", map[string]any{"app.kubernetes.io/name": "web"}, map[string]any{"a.example.com/x": "1", "b.example.com/y": big}),
		manifest.New(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "1starts-with-digit", "namespace": "demo"}}), // valid as a ConfigMap's name, not a Service's
		obj("1starts-with-digit", "demo", nil, nil),
	}
	full := func(o *manifest.Object) []violation {
		return append(nameViolationsFull(o.Key()), metadataViolationsFull(o)...)
	}
	cached := func(o *manifest.Object) []violation {
		return append(nameViolations(o.Key()), metadataViolations(o)...)
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8}, {8, 7, 6, 5, 4, 3, 2, 1, 0}} {
		for pass := 0; pass < 2; pass++ {
			for _, i := range order {
				if diff := cmp.Diff(full(objs[i]), cached(objs[i]), cmp.AllowUnexported(violation{})); diff != "" {
					t.Errorf("object %d, pass %d: cached checks differ from the full rules (-full +cached):\n%s", i, pass, diff)
				}
			}
		}
	}
	if len(full(objs[0])) != 0 || len(full(objs[1])) == 0 || len(full(objs[3])) == 0 || len(full(objs[7])) == 0 || len(full(objs[8])) != 0 {
		t.Errorf("the fixture no longer holds what it means to: valid, invalid value, too large, Service name, ConfigMap name")
	}
}
