// Package builtin assembles wavesmith's generators: Kaoto, and Component
// with its chart and kustomization sources. Every door passes Registry() to
// the engine; the engine itself knows no spec kind.
package builtin

import (
	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/generators/helm"
	"github.com/wavesmith/wavesmith/generators/kaoto"
	"github.com/wavesmith/wavesmith/generators/kustomize"
)

// Registry returns the generator of each spec kind wavesmith knows, keyed
// by "group/Kind".
func Registry() generators.Registry {
	return generators.Registry{
		designerv1alpha1.Group + "/" + designerv1alpha1.Kind: &kaoto.Generator{},
		v1alpha1.Group + "/" + v1alpha1.ComponentKind: component.Generator{Sources: map[string]generators.Generator{
			helm.Source:      helm.Generator{},
			kustomize.Source: kustomize.Generator{},
		}},
	}
}
