package helm

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/wavesmith/wavesmith/generators"
)

// capabilities are helm template's: the default API versions plus the
// extra ones of the options, and the options' kube version, by default
// generators.DefaultKubeVersion.
func capabilities(opts generators.Options) (*chartutil.Capabilities, error) {
	caps := chartutil.DefaultCapabilities.Copy()
	kv := opts.KubeVersion
	if kv == "" {
		kv = generators.DefaultKubeVersion()
	}
	parsed, err := chartutil.ParseKubeVersion(kv)
	if err != nil {
		return nil, fmt.Errorf("kube version %q: %v", kv, err)
	}
	caps.KubeVersion = *parsed
	// A fresh slice: the default set is shared by all renders.
	caps.APIVersions = append(append(chartutil.VersionSet{}, chartutil.DefaultVersionSet...), opts.APIVersions...)
	return caps, nil
}
