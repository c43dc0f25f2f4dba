package helm

import "testing"

// TestFirstDifference: the first object and field (keys sorted) where two
// renders of a template differ.
func TestFirstDifference(t *testing.T) {
	cm := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n" + data
	}
	cases := map[string]struct{ a, b, want string }{
		"Field":      {cm("  x: \"1\"\n  w: \"2\"\n"), cm("  x: \"1\"\n  w: \"3\"\n"), "ConfigMap/a at data.w"},
		"Sorted":     {cm("  b: \"1\"\n  a: \"1\"\n"), cm("  b: \"2\"\n  a: \"2\"\n"), "ConfigMap/a at data.a"},
		"DottedKey":  {cm("  tls.crt: x\n"), cm("  tls.crt: y\n"), `ConfigMap/a at data["tls.crt"]`},
		"MissingKey": {cm("  x: \"1\"\n"), cm("  x: \"1\"\n  z: \"1\"\n"), "ConfigMap/a at data.z"},
		"ListItem": {"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, args: [a, b]}\n",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, args: [a, c]}\n", "Pod/p at spec.containers[0].args[1]"},
		"SecondObject": {cm("  x: \"1\"\n") + "---\n" + "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {p: a}\n",
			cm("  x: \"1\"\n") + "---\n" + "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {p: b}\n", "Secret/s at stringData.p"},
		"Count":       {cm("  x: \"1\"\n"), cm("  x: \"1\"\n") + "---\n" + cm("  x: \"1\"\n"), "the text of the template"},
		"CommentOnly": {cm("  x: \"1\"\n") + "# a\n", cm("  x: \"1\"\n") + "# b\n", ""},
		"Invalid":     {cm("  x: \"1\"\n"), "a: [", "the text of the template"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, differs := firstDifference("t.yaml", tc.a, tc.b)
			if got != tc.want || differs != (tc.want != "") {
				t.Errorf("got %q, %v, want %q", got, differs, tc.want)
			}
		})
	}
}
