package schemagen_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/schemagen"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// schemaDir holds the committed schemas editors use.
const schemaDir = "../../schemas"

// draft07 is the dialect of editors whose validator stops at draft-07
// (yaml-language-server): the schemas use only keywords that mean the same
// there, and the tests validate with both dialects.
const draft07 = "http://json-schema.org/draft-07/schema#"

// compiled compiles the committed schemas with a real JSON Schema
// validator (santhosh-tekuri/jsonschema), by dialect ($schema: the
// committed draft 2020-12, and draft-07) and kind.
func compiled(t *testing.T) map[string]map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]map[string]*jsonschema.Schema{}
	for _, draft := range []string{schemagen.Draft, draft07} {
		out[draft] = map[string]*jsonschema.Schema{}
		for _, k := range []string{"Kaoto", "Component", "RenderConfig"} {
			p, err := filepath.Abs(filepath.Join(schemaDir, schemagen.FileName(k)))
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			doc.(map[string]any)["$schema"] = draft
			c := jsonschema.NewCompiler()
			c.AssertVocabs()
			if err := c.AddResource(p, doc); err != nil {
				t.Fatal(err)
			}
			s, err := c.Compile(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			out[draft][k] = s
		}
	}
	return out
}

// instance reads one YAML document as the JSON value an editor validates.
func instance(t *testing.T, doc []byte) any {
	t.Helper()
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fields lists the fields a validation error of inst points at, written
// as wavesmith writes field paths (spec.source.chart, spec.dependsOn[0]):
// the instance location of each leaf error, plus the property an
// unknown-field or missing-field error names.
func fields(err error, inst any) []string {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []string{"not a validation error: " + fmt.Sprint(err)}
	}
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		loc := path(e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.PropertyNames:
			// jsonschema v6.0.3 shares the slice of this error's
			// InstanceLocation with later locations, which overwrite
			// it: find the mapping holding the name instead.
			for _, l := range holding(inst, k.Property, "") {
				seen[join(l, k.Property)] = true
			}
			return
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				seen[join(loc, p)] = true
			}
			return
		case *kind.Required:
			for _, p := range k.Missing {
				seen[join(loc, p)] = true
			}
			return
		}
		if len(e.Causes) == 0 {
			seen[loc] = true
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(verr)
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// holding lists the locations of the mappings in v holding the key name.
func holding(v any, name, loc string) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t[name]; ok {
			out = append(out, loc)
		}
		for k, e := range t {
			out = append(out, holding(e, name, join(loc, k))...)
		}
	case []any:
		for i, e := range t {
			out = append(out, holding(e, name, fmt.Sprintf("%s[%d]", loc, i))...)
		}
	}
	return out
}

var index = regexp.MustCompile(`^[0-9]+$`)

func path(tokens []string) string {
	s := ""
	for _, t := range tokens {
		if index.MatchString(t) {
			s += "[" + t + "]"
			continue
		}
		s = join(s, t)
	}
	return s
}

func join(loc, p string) string {
	if loc == "" {
		return p
	}
	return loc + "." + p
}

// wavesmith reads doc as wavesmith does: a RenderConfig as a project file
// (config.Parse, then the options it sets), any other document as an
// input of a render with wavesmith's generators, in a folder holding a
// chart (chart/) and a kustomization (kust/) for Component sources.
func wavesmith(t *testing.T, schemaKind string, doc []byte) error {
	t.Helper()
	var head struct{ Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	dir := t.TempDir()
	if schemaKind == "RenderConfig" {
		p := filepath.Join(dir, config.ProjectFile)
		l, err := config.Parse(p, doc)
		if err != nil {
			return err
		}
		_, _, err = config.Merge(l).Options(dir)
		return err
	}
	for name, content := range map[string]string{
		"doc.yaml":                string(doc),
		"chart/Chart.yaml":        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"kust/kustomization.yaml": "resources: [cm.yaml]\n",
		"kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := load.Inputs(context.Background(), dir, builtin.Registry(), []string{filepath.Join(dir, "doc.yaml")}, nil)
	if err != nil {
		return err
	}
	_, err = render.Render(context.Background(), objs, render.Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: dir, Namespace: "default"})
	return err
}

// documents splits a file into its YAML documents and keeps those of the
// kinds with a schema.
func documents(t *testing.T, file string) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Decode(file, b)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for i, o := range objs {
		switch o.Kind() {
		case "Kaoto", "Component", "RenderConfig":
			y, err := yaml.Marshal(o.Map)
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%s#%d %s/%s", filepath.Base(file), i, o.Kind(), o.Name())] = y
		}
	}
	return out
}
