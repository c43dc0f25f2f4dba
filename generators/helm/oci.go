package helm

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// ociScheme starts an OCI registry reference.
const ociScheme = "oci://"

// fetchOCI resolves and pulls a chart of an OCI registry with Helm's
// registry client: repo oci://HOST/PATH, the chart HOST/PATH/NAME, its
// version an exact tag or a semver range over the registry's tags. All
// the client reads (manifest, config, chart layer) is capped.
func fetchOCI(ctx context.Context, src *v1alpha1.PathSource, opts FetchOptions) (*LockedChart, error) {
	ref := strings.TrimSuffix(strings.TrimPrefix(src.Repo, ociScheme), "/") + "/" + src.Name
	tr, err := cappedTransport(maxArchive+4<<20, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFetch, ref, err)
	}
	copts := []registry.ClientOption{registry.ClientOptHTTPClient(&http.Client{Transport: tr, Timeout: opts.Timeout})}
	if opts.RegistryConfig != "" {
		copts = append(copts, registry.ClientOptCredentialsFile(opts.RegistryConfig))
	}
	if opts.PlainHTTP {
		copts = append(copts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFetch, ref, err)
	}
	version := src.Version
	if _, err := semver.StrictNewVersion(version); err != nil {
		c, err := semver.NewConstraint(version)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: version %q is neither a version nor a semver range: %v", ErrFetch, ref, version, err)
		}
		tags, err := client.Tags(ref)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: listing tags: %v", ErrFetch, ref, err)
		}
		version = ""
		for _, t := range tags { // sorted, highest first
			if v, err := semver.NewVersion(t); err == nil && c.Check(v) {
				version = t
				break
			}
		}
		if version == "" {
			return nil, fmt.Errorf("%w: %s has no tag matching version %q", ErrFetch, ref, src.Version)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFetch, ref, err)
	}
	tagged := ref + ":" + strings.ReplaceAll(version, "+", "_")
	res, err := client.Pull(tagged, registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFetch, tagged, err)
	}
	data := res.Chart.Data
	digest := sha256Digest(data)
	if res.Chart.Digest != digest {
		return nil, fmt.Errorf("%w: %s: the chart layer is %s, its manifest says %s", ErrDigest, tagged, digest, res.Chart.Digest)
	}
	if _, err := loadArchive(data, src.Name, version); err != nil {
		return nil, fmt.Errorf("%s: %w", tagged, err)
	}
	h, _ := digestHex(digest)
	if err := writeAtomic(cachePath(opts.Cache, h), data); err != nil {
		return nil, err
	}
	return &LockedChart{Repo: src.Repo, Name: src.Name, Version: src.Version, Resolved: version, Digest: digest, URL: ociScheme + tagged}, nil
}
