package helm

import (
	"fmt"
	"sync"

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
	// Released helm binaries stamp their version (v3.22.0) with ldflags; the
	// SDK alone says v3.22. Charts read it (.Capabilities.HelmVersion).
	caps.HelmVersion.Version = sdkVersion()
	// A fresh slice: the default set is shared by all renders.
	caps.APIVersions = append(append(chartutil.VersionSet{}, chartutil.DefaultVersionSet...), opts.APIVersions...)
	return caps, nil
}

// fallbackSDKVersion is offered when the binary carries no module
// information (test binaries). Keep it at helm.sh/helm/v3 in go.mod (a
// test checks).
const fallbackSDKVersion = "v3.22.0"

// sdkVersion is the version of the Helm SDK module wavesmith is built with.
var sdkVersion = sync.OnceValue(func() string {
	if v, ok := generators.ModuleVersion("helm.sh/helm/v3"); ok {
		return v
	}
	return fallbackSDKVersion
})
