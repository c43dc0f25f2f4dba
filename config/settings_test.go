package config

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the plugin's parameter announcement and the documentation's tables of settings from config.Settings")

// TestSettingsPaths: every row of the table names a field of
// RenderConfigSpec, once, and Set and Get go both ways.
func TestSettingsPaths(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Settings {
		for _, name := range []string{"path " + s.Path, "flag " + s.Flag, "param " + s.Param, "key " + s.Key} {
			if !strings.HasSuffix(name, " ") && seen[name] {
				t.Errorf("%s appears twice in Settings", name)
			}
			seen[name] = true
		}
		if s.Flag == "" || s.Help == "" || s.Doors == 0 {
			t.Errorf("%s: a setting needs a flag, a help and a door", s.Path)
		}
		if (s.Param != "") != s.Takes(ArgoCD) || (s.Key != "") != s.Takes(ConfigMap) {
			t.Errorf("%s: its Argo CD parameter or ConfigMap key disagrees with its doors", s.Path)
		}
		if s.Takes(ArgoCD) && s.Title == "" {
			t.Errorf("%s: an Argo CD parameter needs a title for the UI", s.Path)
		}
		sample := map[Type]string{String: "x", List: "a,b", Int: "7", Section: "true"}[s.Type]
		var spec v1alpha1.RenderConfigSpec
		if err := s.Set(&spec, sample); err != nil {
			t.Fatalf("%s: %v", s.Path, err)
		}
		if got := s.Get(&spec); got != sample {
			t.Errorf("%s: Set %q, Get %q", s.Path, sample, got)
		}
		if reflect.ValueOf(spec).IsZero() {
			t.Errorf("%s: Set left the spec empty", s.Path)
		}
	}
}

func TestSettingSet(t *testing.T) {
	for _, tc := range []struct {
		path, v string
		want    v1alpha1.RenderConfigSpec
		err     string
	}{
		{path: "wave", v: " -3 ", want: v1alpha1.RenderConfigSpec{Wave: ptr(int32(-3))}},
		{path: "wave", v: "soon", err: `"soon": want an integer in -32768..32767`},
		{path: "dialects", v: "argocd, flux,", want: v1alpha1.RenderConfigSpec{Dialects: []string{"argocd", "flux"}}},
		{path: "dialects", v: "", want: v1alpha1.RenderConfigSpec{Dialects: []string{}}},
		{path: "policies.update", v: "replace", want: v1alpha1.RenderConfigSpec{Policies: &v1alpha1.Policies{Update: "replace"}}},
		{path: "flux", v: "true", want: v1alpha1.RenderConfigSpec{Flux: &v1alpha1.FluxDelivery{}}},
		{path: "flux", v: "maybe", err: `"maybe": want true or false`},
		{path: "argocd.repo", v: "https://x", want: v1alpha1.RenderConfigSpec{ArgoCD: &v1alpha1.ArgoCDDelivery{Repo: "https://x"}}},
	} {
		var got v1alpha1.RenderConfigSpec
		err := Lookup(tc.path).Set(&got, tc.v)
		if fmt.Sprint(err) != fmt.Sprint(errOrNil(tc.err)) {
			t.Errorf("%s=%q: error %v, want %s", tc.path, tc.v, err, tc.err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); tc.err == "" && diff != "" {
			t.Errorf("%s=%q (-want +got):\n%s", tc.path, tc.v, diff)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func errOrNil(s string) error {
	if s == "" {
		return nil
	}
	return fmt.Errorf("%s", s)
}

// TestSettingsDocs: the plugin's parameter announcement and the tables of
// settings in the documentation are what config.Settings gives; -update
// rewrites them.
func TestSettingsDocs(t *testing.T) {
	for _, tc := range []struct {
		file, begin, end string
		gen              func() string
	}{
		{"../kustomize/argocd/plugin.yaml", "  parameters:\n    static:\n", "", pluginParameters},
		{"../docs/cli.md", "<!-- settings:flags (go test ./config -update writes it) -->\n", "<!-- /settings:flags -->", flagsTable},
		{"../docs/argocd.md", "<!-- settings:argocd (go test ./config -update writes it) -->\n", "<!-- /settings:argocd -->", argocdTable},
		{"../docs/krm-function.md", "<!-- settings:configmap (go test ./config -update writes it) -->\n", "<!-- /settings:configmap -->", configMapTable},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		i := strings.Index(doc, tc.begin)
		if i < 0 {
			t.Errorf("%s has no %q", tc.file, tc.begin)
			continue
		}
		i += len(tc.begin)
		j := len(doc)
		if tc.end != "" {
			j = strings.Index(doc[i:], tc.end)
			if j < 0 {
				t.Errorf("%s has no %q", tc.file, tc.end)
				continue
			}
			j += i
		}
		want := tc.gen()
		if *update {
			doc = doc[:i] + want + doc[j:]
			if err := os.WriteFile(tc.file, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if diff := cmp.Diff(want, doc[i:j]); diff != "" {
			t.Errorf("%s disagrees with config.Settings (go test ./config -update rewrites it) (-table +file):\n%s", tc.file, diff)
		}
	}
}

// pluginParameters is the plugin's parameter announcement.
func pluginParameters() string {
	var b strings.Builder
	for _, s := range Settings {
		if !s.Takes(ArgoCD) {
			continue
		}
		fmt.Fprintf(&b, "    - name: %s\n      title: %s\n      tooltip: >-\n", s.Param, s.Title)
		for _, l := range wrap(s.Describe()+".", 72) {
			fmt.Fprintf(&b, "        %s\n", l)
		}
		env := EnvVar(s.Param)
		if s.Type == List {
			b.WriteString("      collectionType: array\n      itemType: string\n")
			env += " (comma-separated)"
		}
		fmt.Fprintf(&b, "      # env: %s\n", env)
	}
	return b.String()
}

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

func values(s Setting) string {
	var vs []string
	for _, v := range s.Values {
		vs = append(vs, code(v))
	}
	return strings.Join(vs, ", ")
}

func row(cells ...string) string {
	return "| " + strings.Join(cells, " | ") + " |\n"
}

// flagsTable is the table of the settings' flags (docs/cli.md).
func flagsTable() string {
	var b strings.Builder
	b.WriteString(row("flag", "RenderConfig field", "meaning", "values", "default"))
	b.WriteString(row("---", "---", "---", "---", "---"))
	for _, s := range Settings {
		name := "--" + s.Flag
		if s.Short != "" {
			name = "-" + s.Short + ", " + name
		}
		help := s.Help
		if s.Takes(TreeFlags) {
			help += " (render and check)"
		}
		b.WriteString(row(code(name), code("spec."+s.Path), help, values(s), s.Default))
	}
	return b.String()
}

// argocdTable is the table of the plugin's parameters (docs/argocd.md).
func argocdTable() string {
	var b strings.Builder
	b.WriteString(row("parameter", "env entry", "RenderConfig field", "meaning", "values", "default"))
	b.WriteString(row("---", "---", "---", "---", "---", "---"))
	for _, s := range Settings {
		if s.Takes(ArgoCD) {
			p := code(s.Param)
			if s.Type == List {
				p += " (a string or an array)"
			}
			b.WriteString(row(p, code(EnvVar(s.Param)), code("spec."+s.Path), s.Help, values(s), s.Default))
		}
	}
	return b.String()
}

// configMapTable is the table of the KRM function's ConfigMap keys
// (docs/krm-function.md).
func configMapTable() string {
	var b strings.Builder
	b.WriteString(row("ConfigMap key", "RenderConfig field", "meaning", "values", "default"))
	b.WriteString(row("---", "---", "---", "---", "---"))
	for _, s := range Settings {
		if s.Takes(ConfigMap) {
			k := code(s.Key)
			if s.Type == List {
				k += " (comma-separated)"
			}
			b.WriteString(row(k, code("spec."+s.Path), s.Help, values(s), s.Default))
		}
	}
	return b.String()
}
