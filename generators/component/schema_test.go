package component

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/internal/golden"
)

// TestEditorSchema keeps kustomize/crd/component.schema.json, the JSON
// Schema editors use for Component specs, equal to the spec schema of the
// CRD controller-gen generates from the Go type.
func TestEditorSchema(t *testing.T) {
	root := filepath.Join("..", "..", "kustomize", "crd")
	b, err := os.ReadFile(filepath.Join(root, "bases", "wavesmith.io_components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]any `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	spec, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].(map[string]any)
	if !ok {
		t.Fatal("the CRD has no spec schema")
	}
	schema := map[string]any{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"$id":     "https://wavesmith.io/schemas/component-spec.json",
		"title":   "wavesmith.io/v1alpha1 Component spec",
	}
	for k, v := range spec {
		schema[k] = v
	}
	got, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden.Assert(t, filepath.Join(root, "component.schema.json"), got)
}
