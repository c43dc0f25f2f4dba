package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// Charts from Helm repositories are rendered offline: `wavesmith fetch`
// resolves each chart a Component names (repo, name, version or semver
// range), downloads its archive into a content-addressed cache and writes
// the exact version and digest into the lock file at the render root;
// render and check read the lock and the cache only.

// Errors of repository charts, checked with errors.Is.
var (
	// ErrNotFetched: the lock or the cache lacks the chart; the message
	// names the command that fetches it.
	ErrNotFetched = errors.New("chart not fetched")
	// ErrDigest: an archive whose SHA-256 is not the one the lock (or the
	// repository's index) records.
	ErrDigest = errors.New("chart digest mismatch")
	// ErrArchive: an archive that is no safe chart (a link, a special
	// file, a path leaving the chart, over the size caps, not gzip/tar).
	ErrArchive = errors.New("unsafe chart archive")
)

// LockFile is the lock of repository charts, at the render root (next to
// the project file .wavesmith.yaml): YAML, but not named *.yaml, so that it
// is never an input.
const LockFile = "wavesmith.lock"

// FetchCommand is what a user runs to fill the lock and the cache.
const FetchCommand = "wavesmith fetch"

// Caps of repository charts: an archive is at most maxArchive bytes (the
// largest file wavesmith reads, also from the cache), a repository index
// maxIndex; expanded, a chart holds at most maxChartSize bytes in at most
// maxArchiveEntries entries.
const (
	maxArchive        = fsroot.MaxFileSize
	maxIndex          = 32 << 20
	maxArchiveEntries = 10000
	maxLock           = 1 << 20
)

// Lock lists the repository charts of a render, each resolved to one
// version and digest.
type Lock struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Charts     []LockedChart `json:"charts"`
}

// LockedChart is one chart of a repository as Components ask for it
// (Repo, Name, Version: a version or a semver range; for an OCI registry
// also TAG@sha256:<hex> or sha256:<hex>, a manifest digest) and as it was
// resolved (Resolved, Digest "sha256:<hex>" of the archive, URL; for an
// OCI registry Manifest, the digest of the chart's manifest, by which it
// is pulled again, and PlainHTTP when fetch reached the registry so).
type LockedChart struct {
	Repo      string `json:"repo"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	Resolved  string `json:"resolved"`
	Digest    string `json:"digest"`
	Manifest  string `json:"manifest,omitempty"`
	URL       string `json:"url"`
	PlainHTTP bool   `json:"plainHTTP,omitempty"`
}

const (
	lockAPIVersion = "wavesmith.io/v1alpha1"
	lockKind       = "ChartLock"
)

func (l *Lock) find(repo, name, version string) *LockedChart {
	for i := range l.Charts {
		c := &l.Charts[i]
		if c.Repo == repo && c.Name == name && c.Version == version {
			return c
		}
	}
	return nil
}

// encode writes the lock deterministically (charts sorted).
func (l *Lock) encode() ([]byte, error) {
	sort.Slice(l.Charts, func(i, j int) bool {
		a, b := l.Charts[i], l.Charts[j]
		return a.Repo+"\x00"+a.Name+"\x00"+a.Version < b.Repo+"\x00"+b.Name+"\x00"+b.Version
	})
	l.APIVersion, l.Kind = lockAPIVersion, lockKind
	return yaml.Marshal(l)
}

// readLock reads the lock at root: a regular file inside root (no
// symlink), at most maxLock bytes, strictly decoded. A missing lock is an
// empty one.
func readLock(root string) (*Lock, error) {
	file := filepath.Join(root, LockFile)
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fi, err := r.Lstat(LockFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxLock {
		return nil, fmt.Errorf("%s: want a regular file of at most %d bytes", file, maxLock)
	}
	b, err := r.ReadFile(LockFile)
	if err != nil {
		return nil, err
	}
	l := &Lock{}
	if err := yaml.UnmarshalStrict(b, l); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if l.APIVersion != lockAPIVersion || l.Kind != lockKind {
		return nil, fmt.Errorf("%s: want apiVersion %s and kind %s", file, lockAPIVersion, lockKind)
	}
	for i, c := range l.Charts {
		if _, err := digestHex(c.Digest); err != nil {
			return nil, fmt.Errorf("%s: charts[%d].digest: %w", file, i, err)
		}
		if c.Manifest != "" {
			if _, err := digestHex(c.Manifest); err != nil {
				return nil, fmt.Errorf("%s: charts[%d].manifest: %w", file, i, err)
			}
		}
	}
	return l, nil
}

// CacheDir is the cache of chart archives: $WAVESMITH_CACHE_DIR, else
// wavesmith/ in the user's cache folder ($XDG_CACHE_HOME, ~/.cache).
func CacheDir() (string, error) {
	if d := os.Getenv("WAVESMITH_CACHE_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "wavesmith"), nil
}

// cachePath is where the archive of a digest lies in cache.
func cachePath(cache, hexDigest string) string {
	return filepath.Join(cache, "charts", "sha256", hexDigest+".tgz")
}

func digestHex(d string) (string, error) {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%q: want sha256:<64 lowercase hex digits>", d)
	}
	return h, nil
}

func sha256Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// repoSource is a chart source naming a repository.
func repoSource(src *v1alpha1.PathSource) bool { return src.Repo != "" }

// loadLocked loads the chart src names from the cache, as the lock at
// root resolves it; where names it for messages.
func loadLocked(ctx context.Context, root string, src *v1alpha1.PathSource) (chrt *chart.Chart, where string, err error) {
	lock, err := readLock(root)
	if err != nil {
		return nil, fmt.Sprintf("%s %s (version %s)", src.Repo, src.Name, src.Version), err
	}
	return loadFromLock(ctx, root, lock, src)
}

// repoDependencies returns the dependencies chrt's Chart.yaml names from a
// chart repository or an OCI registry (by URL: https://, http://, oci://)
// that its charts/ folder lacks, once per repository, name and version
// (two aliases of one chart need it once; two versions of it, each). Helm
// needs them in charts/ (helm dependency build); wavesmith takes them
// from the lock and cache.
func repoDependencies(chrt *chart.Chart) []*chart.Dependency {
	have := map[string]bool{}
	for _, d := range chrt.Dependencies() {
		have[d.Name()] = true
	}
	seen := map[string]bool{}
	var out []*chart.Dependency
	for _, d := range chrt.Metadata.Dependencies {
		if d == nil || have[d.Name] {
			continue
		}
		key := d.Repository + "\x00" + d.Name + "\x00" + d.Version
		if r := d.Repository; !seen[key] && (strings.HasPrefix(r, "https://") || strings.HasPrefix(r, "http://") || strings.HasPrefix(r, ociScheme)) {
			seen[key] = true
			out = append(out, d)
		}
	}
	return out
}

// addLockedDependencies adds to chrt, from the lock at root and the
// cache, the repository dependencies its charts/ lacks.
func addLockedDependencies(ctx context.Context, root string, chrt *chart.Chart) error {
	deps := repoDependencies(chrt)
	if len(deps) == 0 {
		return nil
	}
	lock, err := readLock(root)
	if err != nil {
		return err
	}
	for _, d := range deps {
		sub, _, err := loadFromLock(ctx, root, lock, &v1alpha1.PathSource{Repo: d.Repository, Name: d.Name, Version: d.Version})
		if err != nil {
			return fmt.Errorf("dependency %s of Chart.yaml: %w", d.Name, err)
		}
		chrt.AddDependency(sub)
	}
	return nil
}

// loadFromLock loads the chart src names from the cache, as lock resolves
// it. A chart the cache lacks is ErrNotFetched, unless ctx allows
// fetching on a miss (FetchOnMiss: under the Argo CD plugin), which
// downloads exactly what the lock names and checks its digest.
func loadFromLock(ctx context.Context, root string, lock *Lock, src *v1alpha1.PathSource) (chrt *chart.Chart, where string, err error) {
	where = fmt.Sprintf("%s %s (version %s)", src.Repo, src.Name, src.Version)
	lc := lock.find(src.Repo, src.Name, src.Version)
	if lc == nil {
		return nil, where, fmt.Errorf("%w: %s is not in %s: run %s", ErrNotFetched, where, filepath.Join(root, LockFile), FetchCommand)
	}
	if err := checkPinned(src, lc); err != nil {
		return nil, where, err
	}
	// Files of the chart are named inside its archive (name-version.tgz).
	where = fmt.Sprintf("%s-%s.tgz", src.Name, lc.Resolved)
	h, _ := digestHex(lc.Digest) // checked by readLock
	fetch, onMiss := ctx.Value(fetchKey{}).(*FetchOptions)
	cache := ""
	if onMiss {
		cache = fetch.Cache
	} else if cache, err = CacheDir(); err != nil {
		return nil, where, fmt.Errorf("%w: %s: no cache folder: %v", ErrNotFetched, where, err)
	}
	data, err := readCache(cache, h)
	switch {
	case errors.Is(err, fs.ErrNotExist) && onMiss:
		if data, err = refetch(ctx, lc, *fetch); err != nil {
			return nil, where, err
		}
	case errors.Is(err, fs.ErrNotExist):
		return nil, where, fmt.Errorf("%w: %s (%s) is not in the cache %s: run %s", ErrNotFetched, where, lc.Digest, cache, FetchCommand)
	case err != nil:
		return nil, where, fmt.Errorf("%s: the cache %s: %w", where, cache, err)
	}
	if got := sha256Digest(data); got != lc.Digest {
		return nil, where, fmt.Errorf("%w: %s: %s is %s, the lock says %s (delete it and run %s)", ErrDigest, where, cachePath(cache, h), got, lc.Digest, FetchCommand)
	}
	chrt, err = loadArchive(data, src.Name, lc.Resolved)
	if err != nil {
		return nil, where, fmt.Errorf("%s: %w", where, err)
	}
	return chrt, where, nil
}

// readCache reads the archive of a digest from the cache, opened as its
// own root (fsroot.Root): a regular file of at most maxArchive bytes, no
// symlink leaving the cache. A missing cache or archive is
// fs.ErrNotExist.
func readCache(cache, hexDigest string) ([]byte, error) {
	r, err := fsroot.OpenRoot(cache)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(cachePath(r.Dir(), hexDigest))
}

// loadArchive expands a chart archive (gzip, tar) as Helm's loader does
// (the first path element is the chart's folder), refusing what a chart
// never holds: links, special files, paths leaving the chart, more than
// maxChartSize bytes or maxArchiveEntries entries. The chart must be
// name at version.
func loadArchive(data []byte, name, version string) (*chart.Chart, error) {
	files, err := untar(data)
	if err != nil {
		return nil, err
	}
	chrt, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArchive, err)
	}
	if chrt.Metadata.Name != name || chrt.Metadata.Version != version {
		return nil, fmt.Errorf("%w: the archive holds %s %s, not %s %s", ErrArchive, chrt.Metadata.Name, chrt.Metadata.Version, name, version)
	}
	return chrt, nil
}

func untar(data []byte) ([]*loader.BufferedFile, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: not gzip: %v", ErrArchive, err)
	}
	tr := tar.NewReader(zr)
	var files []*loader.BufferedFile
	seen := map[string]bool{}
	var total int64
	for n := 0; ; n++ {
		if n >= maxArchiveEntries {
			return nil, fmt.Errorf("%w: more than %d entries", ErrArchive, maxArchiveEntries)
		}
		hd, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrArchive, err)
		}
		switch hd.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("%w: %s is a link or a special file (tar type %q), which a chart never holds", ErrArchive, hd.Name, hd.Typeflag)
		}
		name := strings.ReplaceAll(hd.Name, "\\", "/")
		if path.IsAbs(name) || name != path.Clean(name) || strings.HasPrefix(name, "../") || name == ".." || strings.Contains(name, "/../") {
			return nil, fmt.Errorf("%w: %s leaves the chart", ErrArchive, hd.Name)
		}
		_, rel, ok := strings.Cut(name, "/")
		if !ok || rel == "" {
			return nil, fmt.Errorf("%w: %s lies outside the chart's folder", ErrArchive, hd.Name)
		}
		if seen[rel] {
			return nil, fmt.Errorf("%w: %s is in the archive twice", ErrArchive, hd.Name)
		}
		seen[rel] = true
		if hd.Size < 0 || total+hd.Size > maxChartSize {
			return nil, fmt.Errorf("%w: expanded, the chart holds more than %d bytes (%d MiB)", ErrBudget, maxChartSize, maxChartSize>>20)
		}
		b, err := io.ReadAll(io.LimitReader(tr, hd.Size))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrArchive, hd.Name, err)
		}
		total += int64(len(b))
		files = append(files, &loader.BufferedFile{Name: rel, Data: b})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no files", ErrArchive)
	}
	return files, nil
}
