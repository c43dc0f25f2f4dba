package render

import (
	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/kaoto"
)

// DefaultGenerators returns the generator of each spec kind wavesmith
// knows, keyed by "group/Kind".
func DefaultGenerators() map[string]generators.Generator {
	return map[string]generators.Generator{
		designerv1alpha1.Group + "/" + designerv1alpha1.Kind: &kaoto.Generator{},
		componentGK: newComponentGenerator(),
	}
}
