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

// versionField is where a chart of a repository names its version (and,
// for an OCI registry, its manifest digest).
const versionField = "spec.source.chart.version"

// splitPin splits the version of an OCI chart into a tag (or semver
// range) and a manifest digest: "TAG@sha256:<hex>", "sha256:<hex>" (also
// "@sha256:<hex>"), or a tag or range alone (digest ""). A digest that is
// not sha256:<64 lowercase hex digits> is an error.
func splitPin(version string) (tag, digest string, err error) {
	tag, digest, ok := strings.Cut(version, "@")
	if !ok {
		if !strings.HasPrefix(version, "sha256:") {
			return version, "", nil
		}
		tag, digest = "", version
	}
	if _, err := digestHex(digest); err != nil {
		return "", "", fmt.Errorf("%w: version %q: the digest %w", ErrFetch, version, err)
	}
	return tag, digest, nil
}

// checkPinned refuses a lock entry that does not hold what the version of
// src pins: the manifest digest (and the tag) it names. The error names
// spec.source.chart.version.
func checkPinned(src *v1alpha1.PathSource, lc *LockedChart) error {
	if !strings.HasPrefix(src.Repo, ociScheme) {
		return nil
	}
	tag, digest, err := splitPin(src.Version)
	if err != nil || digest == "" {
		return err
	}
	if lc.Manifest != digest || (tag != "" && lc.Resolved != tag) {
		return &stageError{field: versionField, err: fmt.Errorf("%w: %s %s: the version pins %s, the lock records %s at %s (run %s)", ErrDigest, src.Repo, src.Name, src.Version, lc.Resolved, lc.Manifest, FetchCommand)}
	}
	return nil
}

// ociClient is Helm's registry client reading at most what a chart
// needs (manifest, config, chart layer), with the credentials of Helm's
// registry configuration.
func ociClient(ref string, opts FetchOptions) (*registry.Client, error) {
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
	return client, nil
}

// fetchOCI resolves and pulls a chart of an OCI registry with Helm's
// registry client: repo oci://HOST/PATH, the chart HOST/PATH/NAME, its
// version an exact tag, a semver range over the registry's tags, a
// manifest digest (sha256:<hex>) or a tag and the digest it must name
// (TAG@sha256:<hex>). All the client reads is capped. A chart pinned by
// digest is pulled by it; a tag naming another manifest, or a chart
// whose version is not the tag, is ErrDigest at spec.source.chart.version.
func fetchOCI(ctx context.Context, src *v1alpha1.PathSource, opts FetchOptions) (*LockedChart, error) {
	ref := strings.TrimSuffix(strings.TrimPrefix(src.Repo, ociScheme), "/") + "/" + src.Name
	version, digest, err := splitPin(src.Version)
	if err != nil {
		return nil, &stageError{field: versionField, err: err}
	}
	client, err := ociClient(ref, opts)
	if err != nil {
		return nil, err
	}
	// As Helm: a version semver reads (v1.2.3 too) is the tag; anything
	// else a range over the tags.
	if _, err := semver.NewVersion(version); err != nil && version != "" {
		if digest != "" {
			return nil, &stageError{field: versionField, err: fmt.Errorf("%w: %s: version %q: a digest pins one version, not a range", ErrFetch, ref, src.Version)}
		}
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
	pull := tagged
	if digest != "" {
		// As Helm: the tag, when the registry has it, must name the
		// digest; the chart's version must be the tag in any case.
		if version != "" {
			if desc, err := client.Resolve(tagged); err == nil && desc.Digest.String() != digest {
				got := desc.Digest.String()
				return nil, &stageError{field: versionField, err: fmt.Errorf("%w: %s names the manifest %s, the version pins %s", ErrDigest, tagged, got, digest)}
			}
		}
		pull = ref + "@" + digest
	}
	res, err := client.Pull(pull, registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFetch, pull, err)
	}
	if digest != "" && res.Manifest.Digest != digest {
		return nil, &stageError{field: versionField, err: fmt.Errorf("%w: %s: the registry gave the manifest %s", ErrDigest, pull, res.Manifest.Digest)}
	}
	data := res.Chart.Data
	sum := sha256Digest(data)
	if res.Chart.Digest != sum {
		return nil, fmt.Errorf("%w: %s: the chart layer is %s, its manifest says %s", ErrDigest, pull, sum, res.Chart.Digest)
	}
	if version == "" {
		if res.Chart.Meta == nil {
			return nil, fmt.Errorf("%w: %s: the manifest's config names no chart", ErrArchive, pull)
		}
		version = res.Chart.Meta.Version
	}
	if _, err := loadArchive(data, src.Name, version); err != nil {
		if digest != "" {
			return nil, &stageError{field: versionField, err: fmt.Errorf("%s: %w", pull, err)}
		}
		return nil, fmt.Errorf("%s: %w", pull, err)
	}
	h, _ := digestHex(sum)
	if err := writeAtomic(opts.Cache, cachePath(opts.Cache, h), data); err != nil {
		return nil, err
	}
	return &LockedChart{Repo: src.Repo, Name: src.Name, Version: src.Version, Resolved: version, Digest: sum, Manifest: res.Manifest.Digest, URL: ociScheme + pull, PlainHTTP: opts.PlainHTTP}, nil
}

// pullLocked pulls the chart lc names again, by its manifest digest (by
// its tag for a lock written before manifests were recorded).
func pullLocked(ctx context.Context, lc *LockedChart, opts FetchOptions) ([]byte, error) {
	ref := strings.TrimSuffix(strings.TrimPrefix(lc.Repo, ociScheme), "/") + "/" + lc.Name
	pull := ref + ":" + strings.ReplaceAll(lc.Resolved, "+", "_")
	if lc.Manifest != "" {
		pull = ref + "@" + lc.Manifest
	}
	client, err := ociClient(ref, opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFetch, ref, err)
	}
	res, err := client.Pull(pull, registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFetch, pull, err)
	}
	return res.Chart.Data, nil
}
