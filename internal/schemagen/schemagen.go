package schemagen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
)

// Draft is the JSON Schema dialect of every schema written here.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// ErrUnsupported: the CRD uses a construct this package cannot express in
// JSON Schema without making the schema looser or stricter than the CRD.
var ErrUnsupported = errors.New("not expressible in the editor schema")

// Settings lists the kinds wavesmith reads as settings and never renders
// (RenderConfig: the project file, the tree record, the KRM
// functionConfig): their metadata, name included, is optional and free of
// the API server's name and label rules. Every other kind is a spec
// wavesmith renders for the API server: metadata.name is required and
// names, namespaces and labels follow the API server's rules, as
// wavesmith checks them.
var Settings = map[string]bool{"RenderConfig": true}

// The API server's rules (k8s.io/apimachinery/pkg/util/validation), as
// patterns: a DNS-1123 subdomain (metadata.name of custom resources), a
// DNS-1123 label (namespaces), a qualified name (label and annotation
// keys; the 253-character bound of the prefix is left to wavesmith) and a
// label value.
const (
	dns1123Subdomain = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	dns1123Label     = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	qualifiedName    = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$`
	labelValue       = `^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$`
)

// FileName is the schema file of a kind: its lowercase name with .json.
func FileName(kind string) string { return strings.ToLower(kind) + ".json" }

// ReadCRD reads one CustomResourceDefinition from YAML or JSON.
func ReadCRD(file string) (*apiextensionsv1.CustomResourceDefinition, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if crd.Kind != "CustomResourceDefinition" {
		return nil, fmt.Errorf("%s: want a CustomResourceDefinition, got kind %q", file, crd.Kind)
	}
	return crd, nil
}

// Generate reads the CRD files and returns the schema of each kind, keyed
// by its FileName, encoded by Encode.
func Generate(crdFiles []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	var errs []error
	for _, f := range crdFiles {
		crd, err := ReadCRD(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := Document(crd, !Settings[crd.Spec.Names.Kind])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
			continue
		}
		name := FileName(crd.Spec.Names.Kind)
		if _, dup := out[name]; dup {
			errs = append(errs, fmt.Errorf("%s: a second CRD of kind %s", f, crd.Spec.Names.Kind))
			continue
		}
		out[name] = Encode(s)
	}
	return out, errors.Join(errs...)
}

// Encode writes a schema as JSON: sorted keys, two-space indentation, no
// HTML escaping, a trailing newline.
func Encode(schema map[string]any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(schema); err != nil {
		panic(fmt.Sprintf("encoding a schema: %v", err)) // maps, strings, numbers and booleans only
	}
	return b.Bytes()
}

// Document returns the JSON Schema of a whole document of the CRD's kind.
// rendered says whether wavesmith renders documents of this kind for the
// API server (see Settings).
func Document(crd *apiextensionsv1.CustomResourceDefinition, rendered bool) (map[string]any, error) {
	if len(crd.Spec.Versions) != 1 {
		return nil, fmt.Errorf("CustomResourceDefinition/%s: %w: %d versions (one schema per kind holds one)", crd.Name, ErrUnsupported, len(crd.Spec.Versions))
	}
	v := crd.Spec.Versions[0]
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CustomResourceDefinition/%s: %w: no openAPIV3Schema", crd.Name, ErrUnsupported)
	}
	root := v.Schema.OpenAPIV3Schema
	kind, apiVersion := crd.Spec.Names.Kind, crd.Spec.Group+"/"+v.Name

	props := map[string]any{
		"apiVersion": map[string]any{"const": apiVersion},
		"kind":       map[string]any{"const": kind},
		"metadata":   metadata(rendered),
	}
	for _, name := range sortedKeys(root.Properties) {
		switch name {
		case "apiVersion", "kind", "metadata":
			continue
		}
		s, err := convert(root.Properties[name], name)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition/%s: %w", crd.Name, err)
		}
		props[name] = s
	}
	required := []string{"apiVersion", "kind"}
	if rendered {
		required = append(required, "metadata")
	}
	for _, r := range root.Required {
		if r != "apiVersion" && r != "kind" && r != "metadata" {
			required = append(required, r)
		}
	}
	doc := map[string]any{
		"$schema":              Draft,
		"title":                apiVersion + " " + kind,
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
	if root.Description != "" {
		doc["description"] = root.Description
	}
	return doc, nil
}

// metadata is the schema of metadata: name, namespace, labels and
// annotations, nothing else (generateName is refused by wavesmith; the
// fields the API server writes have no place in a source file).
func metadata(rendered bool) map[string]any {
	stringMap := func(desc string) map[string]any {
		return map[string]any{"type": "object", "description": desc, "additionalProperties": map[string]any{"type": "string"}}
	}
	name := map[string]any{"type": "string", "description": "The name of the object."}
	namespace := map[string]any{"type": "string", "description": "The namespace of the object (default: the render's namespace)."}
	labels := stringMap("Labels of the object; wavesmith adds its own.")
	annotations := stringMap("Annotations of the object; wavesmith.io/ annotations set the defaults of the objects it generates.")
	m := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"properties": map[string]any{
			"name":        name,
			"namespace":   namespace,
			"labels":      labels,
			"annotations": annotations,
		},
	}
	if rendered {
		name["minLength"], name["maxLength"], name["pattern"] = 1, 253, dns1123Subdomain
		namespace["maxLength"], namespace["pattern"] = 63, dns1123Label
		labels["propertyNames"] = map[string]any{"pattern": qualifiedName}
		labels["additionalProperties"] = map[string]any{"type": "string", "maxLength": 63, "pattern": labelValue}
		annotations["propertyNames"] = map[string]any{
			"pattern": qualifiedName,
			// A wavesmith.io/ annotation must be one wavesmith knows.
			"anyOf": []any{map[string]any{"not": map[string]any{"pattern": `^wavesmith\.io/`}}, map[string]any{"enum": inventory.Known}},
		}
		annotations["properties"] = nativeAnnotations()
		m["required"] = []string{"name"}
	}
	return m
}

// nativeAnnotations describes the wavesmith.io/ annotations an input may
// carry. Orders are integers (their range is left to wavesmith); the
// policies list their values in the description only, since wavesmith
// also reads them in CamelCase.
func nativeAnnotations() map[string]any {
	out := map[string]any{}
	for _, k := range inventory.Known {
		a := map[string]any{"type": "string"}
		switch {
		case contains(inventory.Orders, k):
			a["pattern"] = `^\s*[+-]?[0-9]+\s*$`
			a["description"] = "An integer in -32768..32767."
		case inventory.Allowed[k] != nil:
			a["description"] = "One of " + strings.Join(inventory.Allowed[k], ", ") + " (the first is the default)."
		case k == inventory.StatusHint:
			a["description"] = "A comma-separated list of has-observed-generation, has-ready-condition, conditions=A;B."
		case k == inventory.Hook:
			a["description"] = "A comma-separated list of " + strings.Join(inventory.HookValues, ", ") + "."
		default:
			a["description"] = "Written by wavesmith render."
		}
		out[k] = a
	}
	return out
}

// exactlyOne is the CEL rule controller-gen writes for "exactly one of two
// optional fields": has(self.a) != has(self.b).
var exactlyOne = regexp.MustCompile(`^\s*has\(self\.([A-Za-z_][A-Za-z0-9_]*)\)\s*!=\s*has\(self\.([A-Za-z_][A-Za-z0-9_]*)\)\s*$`)

// convert maps one OpenAPI v3 schema of a CRD to JSON Schema; path names
// it in errors.
func convert(p apiextensionsv1.JSONSchemaProps, path string) (map[string]any, error) {
	fail := func(what string) (map[string]any, error) {
		return nil, fmt.Errorf("%s: %w: %s", path, ErrUnsupported, what)
	}
	switch {
	case p.Ref != nil:
		return fail("$ref")
	case len(p.PatternProperties) > 0:
		return fail("patternProperties")
	case len(p.Dependencies) > 0:
		return fail("dependencies")
	case len(p.Definitions) > 0:
		return fail("definitions")
	case p.AdditionalItems != nil:
		return fail("additionalItems")
	case p.XMapType != nil && *p.XMapType != "granular" && *p.XMapType != "atomic":
		return fail("x-kubernetes-map-type " + *p.XMapType)
	}
	s := map[string]any{}
	set := func(k string, v any, ok bool) {
		if ok {
			s[k] = v
		}
	}
	set("description", p.Description, p.Description != "")
	set("title", p.Title, p.Title != "")
	set("format", p.Format, p.Format != "")
	set("pattern", p.Pattern, p.Pattern != "")
	if p.Type != "" {
		s["type"] = p.Type
	}
	for k, v := range map[string]*int64{
		"maxLength": p.MaxLength, "minLength": p.MinLength,
		"maxItems": p.MaxItems, "minItems": p.MinItems,
		"maxProperties": p.MaxProperties, "minProperties": p.MinProperties,
	} {
		set(k, deref(v), v != nil)
	}
	// OpenAPI v3.0 marks a bound exclusive with a boolean; JSON Schema
	// 2020-12 gives the exclusive bound itself.
	if p.Maximum != nil {
		k := "maximum"
		if p.ExclusiveMaximum {
			k = "exclusiveMaximum"
		}
		s[k] = *p.Maximum
	}
	if p.Minimum != nil {
		k := "minimum"
		if p.ExclusiveMinimum {
			k = "exclusiveMinimum"
		}
		s[k] = *p.Minimum
	}
	set("multipleOf", deref(p.MultipleOf), p.MultipleOf != nil)
	set("uniqueItems", true, p.UniqueItems || (p.XListType != nil && *p.XListType == "set"))
	if p.Default != nil {
		v, err := value(p.Default.Raw)
		if err != nil {
			return fail("default: " + err.Error())
		}
		s["default"] = v
	}
	if len(p.Enum) > 0 {
		enum := make([]any, 0, len(p.Enum)+1)
		for _, e := range p.Enum {
			v, err := value(e.Raw)
			if err != nil {
				return fail("enum: " + err.Error())
			}
			enum = append(enum, v)
		}
		if p.Nullable {
			enum = append(enum, nil)
		}
		s["enum"] = enum
	}
	if len(p.Required) > 0 {
		s["required"] = append([]string(nil), p.Required...)
	}
	if len(p.Properties) > 0 {
		props := map[string]any{}
		for _, name := range sortedKeys(p.Properties) {
			c, err := convert(p.Properties[name], path+"."+name)
			if err != nil {
				return nil, err
			}
			props[name] = c
		}
		s["properties"] = props
	}
	if p.Items != nil {
		if p.Items.Schema == nil {
			return fail("items as a list of schemas")
		}
		c, err := convert(*p.Items.Schema, path+"[]")
		if err != nil {
			return nil, err
		}
		s["items"] = c
	}
	for _, l := range []struct {
		key  string
		list []apiextensionsv1.JSONSchemaProps
	}{{"allOf", p.AllOf}, {"anyOf", p.AnyOf}, {"oneOf", p.OneOf}} {
		if len(l.list) == 0 {
			continue
		}
		out := make([]any, 0, len(l.list))
		for i, e := range l.list {
			c, err := convert(e, fmt.Sprintf("%s(%s %d)", path, l.key, i))
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		s[l.key] = out
	}
	if p.Not != nil {
		c, err := convert(*p.Not, path+"(not)")
		if err != nil {
			return nil, err
		}
		s["not"] = c
	}

	preserve := p.XPreserveUnknownFields != nil && *p.XPreserveUnknownFields
	switch {
	case p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil:
		c, err := convert(*p.AdditionalProperties.Schema, path+".*")
		if err != nil {
			return nil, err
		}
		s["additionalProperties"] = c
	case p.AdditionalProperties != nil:
		s["additionalProperties"] = p.AdditionalProperties.Allows
	case preserve:
		// Any field is allowed: leave additionalProperties out.
	case p.Type == "object" || len(p.Properties) > 0:
		// wavesmith refuses unknown fields, and so does the API server
		// (pruning): editors flag them.
		s["additionalProperties"] = false
	}
	if p.XEmbeddedResource {
		embedded(s)
	}
	if p.XIntOrString && len(p.AnyOf) == 0 {
		s["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
	}
	if p.Nullable {
		if t, ok := s["type"].(string); ok {
			s["type"] = []any{t, "null"}
		} else if _, ok := s["anyOf"]; ok {
			s["anyOf"] = append(s["anyOf"].([]any), map[string]any{"type": "null"})
		}
	}
	// CEL rules: editors cannot run them, so each one is translated or
	// the generator stops.
	var rules []any
	for _, r := range p.XValidations {
		m := exactlyOne.FindStringSubmatch(r.Rule)
		if m == nil {
			return fail(fmt.Sprintf("x-kubernetes-validations rule %q (teach internal/schemagen its JSON Schema)", r.Rule))
		}
		rules = append(rules, map[string]any{"oneOf": []any{
			map[string]any{"required": []string{m[1]}},
			map[string]any{"required": []string{m[2]}},
		}})
	}
	_, taken := s["oneOf"]
	switch {
	case len(rules) == 1 && !taken:
		s["oneOf"] = rules[0].(map[string]any)["oneOf"]
	case len(rules) > 0:
		all, _ := s["allOf"].([]any)
		s["allOf"] = append(all, rules...)
	}
	return s, nil
}

// embedded adds what the API server requires of an embedded resource
// (x-kubernetes-embedded-resource): apiVersion and kind strings and an
// object metadata.
func embedded(s map[string]any) {
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	for _, k := range []string{"apiVersion", "kind"} {
		if _, ok := props[k]; !ok {
			props[k] = map[string]any{"type": "string", "minLength": 1}
		}
	}
	if _, ok := props["metadata"]; !ok {
		props["metadata"] = map[string]any{"type": "object"}
	}
	s["properties"] = props
	req, _ := s["required"].([]string)
	for _, k := range []string{"apiVersion", "kind"} {
		if !contains(req, k) {
			req = append(req, k)
		}
	}
	s["required"] = req
	s["type"] = "object"
}

func value(raw []byte) (any, error) {
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WriteDir writes the schemas Generate returned into dir.
func WriteDir(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range sortedKeys(files) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
