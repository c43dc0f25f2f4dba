package argocdplugin

import (
	"context"

	"helm.sh/helm/v3/pkg/cli"

	"github.com/wavesmith/wavesmith/generators/helm"
)

// Charts returns the context a render runs under. Under Argo CD (Active)
// the repo-server has network, so a chart the lock (wavesmith.lock) names
// but the chart cache lacks is fetched, exactly as locked (by URL or
// manifest digest), its digest checked against the lock
// (helm.FetchOnMiss); credentials come from Helm's configuration files
// ($HELM_REPOSITORY_CONFIG, $HELM_REGISTRY_CONFIG). Nothing is resolved
// at plugin time: a chart the lock lacks fails naming wavesmith fetch,
// so that every render of a commit is the same. Elsewhere ctx is
// returned unchanged: render and check stay offline.
func Charts(ctx context.Context, getenv func(string) string) context.Context {
	if !Active(getenv) {
		return ctx
	}
	cache, err := helm.CacheDir()
	if err != nil {
		return ctx // no cache folder: a miss fails as offline, naming it
	}
	settings := cli.New()
	opts := helm.FetchOptions{Cache: cache, RepositoryConfig: settings.RepositoryConfig, RegistryConfig: settings.RegistryConfig}
	if f := getenv("HELM_REPOSITORY_CONFIG"); f != "" {
		opts.RepositoryConfig = f
	}
	if f := getenv("HELM_REGISTRY_CONFIG"); f != "" {
		opts.RegistryConfig = f
	}
	return helm.FetchOnMiss(ctx, opts)
}
