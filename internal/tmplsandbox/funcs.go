package tmplsandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v3"
)

// Funcs returns a new map of the functions both generators offer before
// their own: sprig's text functions without env and expandenv (a render
// must not depend on the machine's environment), the YAML, JSON and TOML
// helpers Helm's engine adds (with Helm v3.22.0's behaviour), and
// text/template's print, printf and println, here so that Guard sees
// them. Guard the map after adding the generator's own functions.
func Funcs() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	for k, v := range (template.FuncMap{
		"print":   fmt.Sprint,
		"printf":  fmt.Sprintf,
		"println": fmt.Sprintln,
		"toToml": func(v any) string {
			var b bytes.Buffer
			if err := toml.NewEncoder(&b).Encode(v); err != nil {
				return err.Error()
			}
			return b.String()
		},
		"fromToml": func(s string) map[string]any {
			m := map[string]any{}
			if err := toml.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"toYaml": ToYAML,
		"toYamlPretty": func(v any) string {
			var b bytes.Buffer
			enc := goyaml.NewEncoder(&b)
			enc.SetIndent(2)
			if err := enc.Encode(v); err != nil {
				return ""
			}
			return strings.TrimSuffix(b.String(), "\n")
		},
		"fromYaml": func(s string) map[string]any {
			m := map[string]any{}
			if err := yaml.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"fromYamlArray": func(s string) []any {
			a := []any{}
			if err := yaml.Unmarshal([]byte(s), &a); err != nil {
				a = []any{err.Error()}
			}
			return a
		},
		"toJson": func(v any) string {
			b, err := json.Marshal(v)
			if err != nil {
				return ""
			}
			return string(b)
		},
		"fromJson": func(s string) map[string]any {
			m := map[string]any{}
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"fromJsonArray": func(s string) []any {
			a := []any{}
			if err := json.Unmarshal([]byte(s), &a); err != nil {
				a = []any{err.Error()}
			}
			return a
		},
	}) {
		f[k] = v
	}
	return f
}

// ToYAML is Helm's toYaml: the YAML of v without the final newline, ""
// when v cannot be marshalled.
func ToYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}
