package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/cli"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/generators/helm"
	"github.com/wavesmith/wavesmith/internal/load"
)

func newFetchCommand() *cobra.Command {
	var root string
	var timeout time.Duration
	var plainHTTP bool
	c := &cobra.Command{
		Use:   "fetch [PATH]...",
		Short: "Fetch the charts Components name from Helm repositories into the lock and the cache",
		Long: `Fetch resolves every chart a Component names by repo (an https:// chart
repository or an oci:// registry), name and version (or semver range; for
oci:// also a manifest digest, sha256:<hex> or TAG@sha256:<hex>),
downloads the archives the cache lacks into the chart cache
($WAVESMITH_CACHE_DIR, else wavesmith/ in the user's cache folder), by
SHA-256, and writes ` + helm.LockFile + ` at the root (next to the project file):
each chart's exact version and digest. render and check read the lock and the
cache only, never the network. Credentials and TLS files come from Helm's
repositories.yaml (helm repo add) and registry config (helm registry login),
as helm reads them ($HELM_REPOSITORY_CONFIG, $HELM_REGISTRY_CONFIG).`,
		Example: `  wavesmith fetch deploy/`,
		Args:    cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
			if len(args) == 0 {
				args = []string{"."}
			}
			for _, a := range args {
				if a == "" || a == "-" {
					return usage(errors.New("name folders or files holding Components (not stdin)"))
				}
			}
			r, err := (&renderFlags{root: root}).decideRoot(args[:1], "") // the one rule
			if err != nil {
				return usage(err)
			}
			ctx, cancel := context.WithTimeout(c.Context(), timeout)
			defer cancel()
			objs, err := load.Inputs(ctx, r, builtin.Registry(), args, nil)
			if err != nil {
				return err
			}
			cache, err := helm.CacheDir()
			if err != nil {
				return err
			}
			settings := cli.New()
			locked, err := helm.Fetch(ctx, r, objs, helm.FetchOptions{Cache: cache, RepositoryConfig: settings.RepositoryConfig, RegistryConfig: settings.RegistryConfig, PlainHTTP: plainHTTP})
			if err != nil {
				return err
			}
			for _, l := range locked {
				fmt.Fprintf(c.OutOrStdout(), "%s %s %s %s\n", l.Repo, l.Name, l.Resolved, l.Digest)
			}
			return nil
		},
	}
	c.Flags().StringVar(&root, "root", "", "the folder sources may not leave, where the lock lies (default: the git repository of the first PATH)")
	c.Flags().BoolVar(&plainHTTP, "plain-http", false, "reach oci:// registries over plain HTTP (as helm's --plain-http)")
	c.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long")
	return c
}
