package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// KRM function annotations (kpt and kustomize set them on every item).
const (
	pathAnnotation  = "internal.config.kubernetes.io/path"
	indexAnnotation = "internal.config.kubernetes.io/index"
)

// resourceListFrom builds the ResourceList kpt would hand the function for
// the top-level files of repo (*.yaml, *.yml, *.json, as render reads
// them): one item per document, annotated with its path and index. It
// fails on a document it cannot read: such a case gives its own fnInput
// or leaves fn out of its modes.
func resourceListFrom(repo string) ([]byte, error) {
	entries, err := os.ReadDir(repo)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		ext := strings.ToLower(filepath.Ext(n))
		if strings.HasPrefix(n, ".") || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		switch n {
		case "kustomization.yaml", "kustomization.yml", "Chart.yaml", "values.yaml":
			continue
		}
		if !leadsToRegular(filepath.Join(repo, n)) {
			return nil, fmt.Errorf("%s is not a regular file: give the case an fnInput", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	var items []any
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(repo, n))
		if err != nil {
			return nil, err
		}
		for i, doc := range splitDocuments(b) {
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return nil, fmt.Errorf("%s document %d: %w (give the case an fnInput)", n, i, err)
			}
			dec := json.NewDecoder(bytes.NewReader(j))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("%s document %d: %w", n, i, err)
			}
			if v == nil {
				continue
			}
			annotate(v, n, i)
			items = append(items, v)
		}
	}
	rl := map[string]any{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
	j, err := json.Marshal(rl)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range separator.Split(string(b), -1) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

// annotate sets the path and index annotations where metadata and
// annotations are mappings (or absent); a malformed item stays as it is.
func annotate(v any, path string, index int) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	meta, ok := obj["metadata"].(map[string]any)
	if obj["metadata"] == nil {
		meta, ok = map[string]any{}, true
		obj["metadata"] = meta
	}
	if !ok {
		return
	}
	ann, ok := meta["annotations"].(map[string]any)
	if meta["annotations"] == nil {
		ann, ok = map[string]any{}, true
		meta["annotations"] = ann
	}
	if !ok {
		return
	}
	ann[pathAnnotation] = path
	ann[indexAnnotation] = fmt.Sprint(index)
}

// fnOutput is the part of a ResourceList the harness reads back.
type fnOutput struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Results    []struct {
		Message     string `json:"message"`
		Severity    string `json:"severity"`
		ResourceRef *struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			Namespace  string `json:"namespace"`
		} `json:"resourceRef"`
		Field *struct {
			Path string `json:"path"`
		} `json:"field"`
		File *struct {
			Path string `json:"path"`
		} `json:"file"`
	} `json:"results"`
}

var topLevelKey = regexp.MustCompile(`(?m)^([A-Za-z][A-Za-z0-9]*):`)

// readFnOutput reads stdout as a ResourceList. Items are echoed as the
// function got them, aliases and all (an alias bomb among them must not
// go off here), so only the top-level apiVersion, kind and results are
// decoded, each section on its own: kyaml writes block YAML, one
// top-level key a line.
func readFnOutput(b []byte) (*fnOutput, error) {
	sections := map[string]string{}
	keys := topLevelKey.FindAllSubmatchIndex(b, -1)
	for i, k := range keys {
		end := len(b)
		if i+1 < len(keys) {
			end = keys[i+1][0]
		}
		sections[string(b[k[2]:k[3]])] = string(b[k[0]:end])
	}
	var out fnOutput
	for _, key := range []string{"apiVersion", "kind", "results"} {
		if err := yaml.Unmarshal([]byte(sections[key]), &out); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	if out.Kind != "ResourceList" || !strings.HasPrefix(out.APIVersion, "config.kubernetes.io/") {
		return nil, fmt.Errorf("not a ResourceList: apiVersion %q, kind %q", out.APIVersion, out.Kind)
	}
	if _, ok := sections["items"]; !ok {
		return nil, fmt.Errorf("a ResourceList without items")
	}
	return &out, nil
}

// errorResults counts the results of severity error.
func (o *fnOutput) errorResults() int {
	n := 0
	for _, r := range o.Results {
		if r.Severity == "error" {
			n++
		}
	}
	return n
}

// text formats the results like the CLI's errors, "file: Kind.group/
// namespace/name: field: message", one a line, so that a case's expected
// substrings read the same in every mode.
func (o *fnOutput) text() string {
	var b strings.Builder
	for _, r := range o.Results {
		b.WriteString(r.Severity + ": ")
		if r.File != nil && r.File.Path != "" {
			b.WriteString(r.File.Path + ": ")
		}
		if ref := r.ResourceRef; ref != nil {
			kind := ref.Kind
			if i := strings.LastIndexByte(ref.APIVersion, '/'); i >= 0 {
				kind += "." + ref.APIVersion[:i]
			}
			if ref.Namespace != "" {
				b.WriteString(kind + "/" + ref.Namespace + "/" + ref.Name + ": ")
			} else {
				b.WriteString(kind + "/" + ref.Name + ": ")
			}
		}
		if r.Field != nil && r.Field.Path != "" {
			b.WriteString(r.Field.Path + ": ")
		}
		b.WriteString(r.Message + "\n")
	}
	return b.String()
}

var fileLine = regexp.MustCompile(`^(.+\.(?:yaml|yml|json)):\d+$`)

// fnExpectation adapts an expected substring to fn mode: results name the
// file but no line.
func fnExpectation(s string) string {
	if m := fileLine.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}
