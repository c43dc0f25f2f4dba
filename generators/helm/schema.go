package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// Helm validates values against a chart's values.schema.json with a
// JSON Schema compiler that loads what a schema refers to: http and
// https URLs from the network, file URLs (and references relative to
// the schema, file:///values.schema.json) from the machine. wavesmith
// renders offline and reads only the repository, so a schema may refer
// only within itself.

// schemaFile is the name of a chart's schema.
const schemaFile = "values.schema.json"

// refKeywords hold a reference the compiler resolves, loading what it
// names when that is not in the schema itself.
var refKeywords = map[string]bool{"$ref": true, "$dynamicRef": true, "$recursiveRef": true}

// metaSchemas are the $schema values the compiler knows without loading
// anything (the drafts it embeds), without the scheme and an empty
// fragment.
var metaSchemas = map[string]bool{
	"json-schema.org/schema":               true,
	"json-schema.org/draft/2020-12/schema": true,
	"json-schema.org/draft/2019-09/schema": true,
	"json-schema.org/draft-07/schema":      true,
	"json-schema.org/draft-06/schema":      true,
	"json-schema.org/draft-04/schema":      true,
}

// knownMetaSchema reports whether s names a draft the compiler embeds.
func knownMetaSchema(s string) bool {
	s, ok := strings.CutPrefix(s, "http://")
	if !ok {
		s, _ = strings.CutPrefix(s, "https://")
	}
	return metaSchemas[strings.TrimSuffix(s, "#")]
}

// checkSchemas refuses, before Helm validates anything, a schema of chrt
// or of any of its subcharts (enabled or not) that refers to something
// outside itself. dir is the chart's folder, to name the files.
func checkSchemas(chrt *chart.Chart, dir string) error {
	var visit func(c *chart.Chart, dir string) error
	visit = func(c *chart.Chart, dir string) error {
		if len(c.Schema) > 0 {
			if err := checkSchema(c.Schema); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, schemaFile), err)
			}
		}
		for _, d := range c.Dependencies() {
			if err := visit(d, filepath.Join(dir, "charts", d.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	return visit(chrt, dir)
}

// checkSchema refuses a schema holding, anywhere, a $ref, $dynamicRef
// or $recursiveRef that is not a local reference ("#..."), or a $schema
// the compiler does not embed. A schema that is not JSON is left to Helm,
// which reports it.
func checkSchema(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return walkSchema(v, "")
}

// walkSchema checks v, found at the JSON pointer ptr.
func walkSchema(v any, ptr string) error {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			at := ptr + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
			if s, ok := v[k].(string); ok {
				switch {
				case refKeywords[k] && !strings.HasPrefix(s, "#"):
					return fmt.Errorf("%s %q at %s: only references within the schema (\"#...\") are allowed: wavesmith renders offline and never fetches or reads other files for a schema; copy what it refers to into the schema's definitions", k, s, at)
				case k == "$schema" && !knownMetaSchema(s):
					return fmt.Errorf("%s %q at %s: only the JSON Schema drafts (such as https://json-schema.org/draft-07/schema#) are allowed: any other meta-schema would be fetched", k, s, at)
				}
			}
			if err := walkSchema(v[k], at); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := walkSchema(e, ptr+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}
