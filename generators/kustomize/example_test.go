package kustomize_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/kustomize"
	"github.com/wavesmith/wavesmith/manifest"
)

// A Component pointing at a kustomization with kustomize Components,
// rendered offline, in kustomize build's order.
func ExampleGenerator() {
	spec := manifest.New(map[string]any{
		"apiVersion": "wavesmith.io/v1alpha1",
		"kind":       "Component",
		"metadata":   map[string]any{"name": "catalog", "namespace": "apps"},
		"spec": map[string]any{
			"source": map[string]any{"kustomization": map[string]any{"path": "with-components"}},
		},
	})
	spec.Source.File = filepath.Join("..", "..", "testdata", "kustomizations", "components.yaml")
	res, err := kustomize.Generator{}.Generate(context.Background(), spec, generators.Options{Root: filepath.Join("..", "..")})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range res.Objects {
		fmt.Println(o.Key())
	}
	// Output:
	// Service/catalog/catalog
	// Deployment.apps/catalog/catalog
	// ServiceMonitor.monitoring.coreos.com/catalog/catalog
	// Ingress.networking.k8s.io/catalog/catalog
}
