package render

import (
	"strings"
	"testing"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/manifest"
)

// TestFastChecksAgreeWithFullRules: the hand-written checks report
// exactly what apimachinery's rules report, on objects (each checked
// twice and in both orders: nothing is remembered between objects).
func TestFastChecksAgreeWithFullRules(t *testing.T) {
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
	fast := func(o *manifest.Object) []violation {
		return append(nameViolations(o.Key()), metadataViolations(o)...)
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8}, {8, 7, 6, 5, 4, 3, 2, 1, 0}} {
		for pass := 0; pass < 2; pass++ {
			for _, i := range order {
				if diff := cmp.Diff(full(objs[i]), fast(objs[i]), cmp.AllowUnexported(violation{})); diff != "" {
					t.Errorf("object %d, pass %d: hand-written checks differ from the full rules (-full +fast):\n%s", i, pass, diff)
				}
			}
		}
	}
	if len(full(objs[0])) != 0 || len(full(objs[1])) == 0 || len(full(objs[3])) == 0 || len(full(objs[7])) == 0 || len(full(objs[8])) != 0 {
		t.Errorf("the fixture no longer holds what it means to: valid, invalid value, too large, Service name, ConfigMap name")
	}
}

// TestFastRulesAgree compares each hand-written check with the
// apimachinery rule it stands for on every string up to four characters
// over an alphabet of the characters that matter, on the length limits
// and on non-ASCII strings: on ASCII they agree exactly; elsewhere the
// hand-written check may refuse (the full rule then decides), never
// accept what the rule refuses.
func TestFastRulesAgree(t *testing.T) {
	rules := []struct {
		name string
		fast func(string) bool
		full func(string) []string
	}{
		{"DNS-1123 label", okDNS1123Label, validation.IsDNS1123Label},
		{"DNS-1123 subdomain", okDNS1123Subdomain, validation.IsDNS1123Subdomain},
		{"DNS-1035 label", okDNS1035Label, validation.IsDNS1035Label},
		{"label key", okLabelKey, validation.IsQualifiedName},
		{"label value", okLabelValue, validation.IsValidLabelValue},
		{"annotation key", okAnnotationKey, func(s string) []string { return validation.IsQualifiedName(strings.ToLower(s)) }},
		{"kind", okKind, func(s string) []string { return validation.IsDNS1035Label(strings.ToLower(s)) }},
		{"Service name", func(s string) bool { return okName("", "Service", s) }, func(s string) []string { return nameFunc("", "Service")(s, false) }},
		{"Namespace name", func(s string) bool { return okName("", "Namespace", s) }, func(s string) []string { return nameFunc("", "Namespace")(s, false) }},
		{"Role name", func(s string) bool { return okName("rbac.authorization.k8s.io", "Role", s) }, func(s string) []string { return nameFunc("rbac.authorization.k8s.io", "Role")(s, false) }},
		{"ConfigMap name", func(s string) bool { return okName("", "ConfigMap", s) }, func(s string) []string { return apivalidation.NameIsDNSSubdomain(s, false) }},
	}
	var inputs []string
	const alphabet = "aZ0-_./%:A"
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 4)
	for _, n := range []int{62, 63, 64, 252, 253, 254} {
		inputs = append(inputs, strings.Repeat("a", n), "a."+strings.Repeat("b", n), strings.Repeat("b", n)+"/c", "c/"+strings.Repeat("b", n), strings.Repeat("a", n-1)+"-")
	}
	inputs = append(inputs, "\u212a", "\u212aind", "K\u212a", "caf\u00e9", "app.kubernetes.io/name", "Example.COM/Key", "a..b", ".a", "a.", "a/b/c", "/a", "a/", "-a", "a-", "_a", "a_", "a\n", "a$")
	for _, r := range rules {
		for _, s := range inputs {
			fast, full := r.fast(s), len(r.full(s)) == 0
			if fast && !full || fast != full && isASCII(s) {
				t.Errorf("%s %q: hand-written check says %v, the rule %v (%q)", r.name, s, fast, full, r.full(s))
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestOwnKeysValid: every key ownKey takes without checking is a label
// key and an annotation key by apimachinery's rules, and ownKey takes
// no other.
func TestOwnKeysValid(t *testing.T) {
	for _, k := range ownKeys {
		if !ownKey(k) {
			t.Errorf("ownKey(%q) is false: the list and the switch differ", k)
		}
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			t.Errorf("%q is not a qualified name: %q", k, msgs)
		}
		if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
			t.Errorf("%q is not an annotation key: %q", k, msgs)
		}
	}
	for _, k := range []string{"", "app.kubernetes.io/Name", "wavesmith.io/", "a b", "wavesmith.io/apply-orde"} {
		if ownKey(k) {
			t.Errorf("ownKey(%q) is true", k)
		}
	}
}
