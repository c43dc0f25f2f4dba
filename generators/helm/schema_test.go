package helm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
	"github.com/wavesmith/wavesmith/manifest"
)

// tempChart writes a chart (files by path below the chart folder) into
// a fresh root and returns the root and a Component rendering it.
func tempChart(t *testing.T, files map[string]string) (string, *manifest.Object) {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		p = filepath.Join(root, "chart", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component",
		"metadata": map[string]any{"name": "app", "namespace": "apps"},
		"spec":     map[string]any{"source": map[string]any{"chart": map[string]any{"path": "chart"}}}})
	o.Source.File = filepath.Join(root, "comp.yaml")
	return root, o
}

const cmTemplate = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n"

// TestCheckSchema: a schema may refer only within itself; anything the
// compiler would load (a URL, a file, a meta-schema it does not embed)
// is refused wherever it appears, naming the keyword, value and place.
func TestCheckSchema(t *testing.T) {
	cases := map[string]struct {
		reason string
		schema string
		want   string // "" when accepted
	}{
		"Local":        {"references within the schema", `{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"p": {"type": "integer"}}, "properties": {"port": {"$ref": "#/definitions/p"}}}`, ""},
		"Drafts":       {"each embedded draft, with and without fragment", `{"allOf": [{"$schema": "https://json-schema.org/draft/2020-12/schema"}, {"$schema": "http://json-schema.org/draft-04/schema#"}]}`, ""},
		"RefProperty":  {"a property named $ref is not a reference", `{"properties": {"$ref": {"type": "string"}}}`, ""},
		"NotJSON":      {"what is not JSON is left to Helm", `{"$ref": `, ""},
		"RemoteTop":    {"a URL at the top", `{"$ref": "https://schemas.example.invalid/values.json"}`, `$ref "https://schemas.example.invalid/values.json" at /$ref: only references within the schema`},
		"RemoteDeep":   {"a URL deep inside", `{"properties": {"a": {"items": [{"type": "string"}, {"$ref": "http://example.com/x.json#/y"}]}}}`, `$ref "http://example.com/x.json#/y" at /properties/a/items/1/$ref`},
		"Relative":     {"a relative file, loaded next to file:///values.schema.json", `{"$ref": "other.json"}`, `$ref "other.json" at /$ref`},
		"File":         {"a file URL", `{"$ref": "file:///etc/passwd"}`, `$ref "file:///etc/passwd"`},
		"DynamicRef":   {"$dynamicRef loads too", `{"$dynamicRef": "https://example.com/s#meta"}`, `$dynamicRef "https://example.com/s#meta"`},
		"RecursiveRef": {"$recursiveRef loads too", `{"$recursiveRef": "x.json"}`, `$recursiveRef "x.json"`},
		"EscapedKey":   {"the place is a JSON pointer", `{"properties": {"a/b~c": {"$ref": "x.json"}}}`, `at /properties/a~1b~0c/$ref`},
		"MetaSchema":   {"a meta-schema the compiler would fetch", `{"$schema": "https://example.com/my-meta"}`, `$schema "https://example.com/my-meta" at /$schema: only the JSON Schema drafts`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := checkSchema([]byte(tc.schema)); err != nil {
				got = err.Error()
			}
			if tc.want == "" || got == "" {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
				}
				return
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("%s: %q lacks %q", tc.reason, got, tc.want)
			}
		})
	}
}

// TestSchemaRefusedBeforeValidation: a chart or subchart whose schema
// refers outside itself fails before Helm validates (nothing is fetched:
// the host does not resolve, and the error is ours), naming the
// Component, the field and the schema file; a local reference renders.
func TestSchemaRefusedBeforeValidation(t *testing.T) {
	const remote = `{"$ref": "https://schemas.example.invalid/values.json"}`
	const local = `{"definitions": {"s": {"type": "string"}}, "properties": {"k": {"$ref": "#/definitions/s"}}}`
	type outcome struct {
		Err    bool
		Object string
		Field  string
	}
	cases := map[string]struct {
		reason string
		files  map[string]string
		want   outcome
		file   string // the schema the message names, below the root
	}{
		"Chart": {"the chart's own schema",
			map[string]string{"values.schema.json": remote},
			outcome{true, "Component.wavesmith.io/apps/app", "spec.source.chart.path"}, "chart/values.schema.json"},
		"Subchart": {"a subchart's schema, though it is disabled",
			map[string]string{"charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n", "charts/sub/values.schema.json": remote,
				"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled\n"},
			outcome{true, "Component.wavesmith.io/apps/app", "spec.source.chart.path"}, "chart/charts/sub/values.schema.json"},
		"Local": {"control: a local reference renders",
			map[string]string{"values.schema.json": local, "values.yaml": "k: v\n"}, outcome{}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n", "templates/cm.yaml": cmTemplate}
			for p, s := range tc.files {
				files[p] = s
			}
			root, spec := tempChart(t, files)
			_, err := Generator{}.Generate(context.Background(), spec, generators.Options{Root: root})
			var got outcome
			if err != nil {
				got.Err = true
				var me *manifest.Error
				if errors.As(err, &me) {
					got.Object, got.Field = me.Object, me.Field
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("%s: -want +got:\n%s\n%v", tc.reason, diff, err)
			}
			if err == nil {
				return
			}
			if !errors.Is(err, ErrChart) {
				t.Errorf("%s: want ErrChart, got %v", tc.reason, err)
			}
			for _, s := range []string{filepath.Join(root, filepath.FromSlash(tc.file)), `$ref "https://schemas.example.invalid/values.json"`} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: %q lacks %q", tc.reason, err, s)
				}
			}
		})
	}
}

// TestTplDepth: tpl may nest tmplsandbox.Default.TplNesting deep, as Helm renders it; one
// level more, and a value calling tpl on itself (which Helm would follow
// until memory ran out), fail with ErrBudget naming the template.
func TestTplDepth(t *testing.T) {
	// chain is values v0..v(n-1), each calling tpl on the next, and the
	// last a plain string: rendering v0 nests tpl n deep.
	chain := func(n int) string {
		var b strings.Builder
		for i := 0; i < n-1; i++ {
			fmt.Fprintf(&b, "v%d: '{{ tpl .Values.v%d . }}'\n", i, i+1)
		}
		fmt.Fprintf(&b, "v%d: end\n", n-1)
		return b.String()
	}
	type outcome struct {
		Budget bool
		Value  string
	}
	cases := map[string]struct {
		reason string
		values string
		want   outcome
	}{
		"AtTheLimit": {"tpl nested tmplsandbox.Default.TplNesting deep renders", chain(tmplsandbox.Default.TplNesting), outcome{Value: "end"}},
		"OneOver":    {"one level more is over budget", chain(tmplsandbox.Default.TplNesting + 1), outcome{Budget: true}},
		"Recursion":  {"a value calling tpl on itself", "v0: '{{ tpl .Values.v0 . }}'\n", outcome{Budget: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root, spec := tempChart(t, map[string]string{
				"Chart.yaml":        "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
				"values.yaml":       tc.values,
				"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  v: {{ tpl .Values.v0 . | quote }}\n",
			})
			res, err := Generator{}.Generate(context.Background(), spec, generators.Options{Root: root})
			var got outcome
			switch {
			case errors.Is(err, ErrBudget):
				got.Budget = true
				for _, s := range []string{"Component.wavesmith.io/apps/app", "spec.source.chart.path", "demo/templates/cm.yaml", fmt.Sprintf("tpl calls nest more than %d deep", tmplsandbox.Default.TplNesting)} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%s: %q lacks %q", tc.reason, err, s)
					}
				}
			case err != nil:
				t.Fatalf("%s: %v", tc.reason, err)
			default:
				for _, o := range res.Objects {
					if v, ok := o.Map["data"].(map[string]any)["v"].(string); ok {
						got.Value = v
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
