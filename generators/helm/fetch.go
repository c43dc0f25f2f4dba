package helm

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wavesmith/wavesmith/internal/fsroot"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/manifest"
)

// ErrFetch: a chart repository could not be read, or has no chart that
// matches.
var ErrFetch = errors.New("fetching a chart")

// FetchOptions say where fetched charts go and which credentials apply.
type FetchOptions struct {
	// Cache is the chart cache (CacheDir).
	Cache string
	// RepositoryConfig is Helm's repositories.yaml (helm repo add writes
	// it): an entry whose URL is a Component's repo gives its
	// credentials and TLS files. "" or a missing file: none.
	RepositoryConfig string
	// RegistryConfig is Helm's registry credentials file (helm registry
	// login writes it), for oci:// charts. "": none.
	RegistryConfig string
	// PlainHTTP reaches OCI registries over plain HTTP (helm's
	// --plain-http).
	PlainHTTP bool
	// Timeout bounds each download (default 2 minutes).
	Timeout time.Duration
}

// Fetch resolves the repository charts the Components among specs name
// (and the repository dependencies a chart folder's Chart.yaml names),
// downloads each archive whose digest the lock at root does not already
// find in the cache, checks it (digest against the repository's index,
// archive safety, name and version), stores it in the cache by digest and
// writes the lock: exactly the charts the specs name, sorted (none is
// written when there are none and were none). It returns the lock's
// entries.
func Fetch(ctx context.Context, root string, specs []*manifest.Object, opts FetchOptions) ([]LockedChart, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	old, err := readLock(root)
	if err != nil {
		return nil, err
	}
	creds, err := repoCredentials(opts.RepositoryConfig)
	if err != nil {
		return nil, err
	}
	lock := &Lock{}
	indexes := map[string]*repo.IndexFile{}
	for _, spec := range specs {
		if spec.Group() != v1alpha1.Group || spec.Kind() != v1alpha1.ComponentKind {
			continue
		}
		c, err := component.Decode(spec)
		if err != nil {
			return nil, err
		}
		src := c.Spec.Source.Chart
		if src == nil {
			continue
		}
		// The chart itself, or the repository dependencies of a chart
		// folder (Chart.yaml's, charts/ lacking them).
		wanted, field := []*v1alpha1.PathSource{src}, repoField
		if !repoSource(src) {
			field = chartField
			wanted, err = folderDependencies(spec, src.Path, root)
			if err != nil {
				return nil, err
			}
		}
		for _, w := range wanted {
			if lock.find(w.Repo, w.Name, w.Version) != nil {
				continue
			}
			if lc := old.find(w.Repo, w.Name, w.Version); lc != nil && checkPinned(w, lc) == nil && cached(opts.Cache, lc) {
				lock.Charts = append(lock.Charts, *lc)
				continue
			}
			fetch := func() (*LockedChart, error) {
				return fetchOne(ctx, w, indexes, creds[strings.TrimSuffix(w.Repo, "/")], opts)
			}
			if strings.HasPrefix(w.Repo, ociScheme) {
				fetch = func() (*LockedChart, error) { return fetchOCI(ctx, w, opts) }
			}
			lc, err := fetch()
			if err != nil {
				field := field
				if w != src {
					err = fmt.Errorf("dependency %s of Chart.yaml: %w", w.Name, err)
				} else if se := (*stageError)(nil); errors.As(err, &se) {
					field, err = se.field, se.err
				}
				return nil, spec.FieldError(field, err)
			}
			lock.Charts = append(lock.Charts, *lc)
		}
	}
	if len(lock.Charts) == 0 && len(old.Charts) == 0 {
		return nil, nil // no repository charts: no lock to write
	}
	b, err := lock.encode()
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(root, filepath.Join(root, LockFile), b); err != nil {
		return nil, err
	}
	return lock.Charts, nil
}

// folderDependencies returns the repository dependencies of the chart
// folder path (relative to spec's file) that its charts/ lacks, checked as
// render checks the folder before Helm's loader reads it.
func folderDependencies(spec *manifest.Object, path, root string) ([]*v1alpha1.PathSource, error) {
	dir, err := component.ResolvePath(spec, chartField, path, root)
	if err != nil {
		return nil, err
	}
	if err := component.CheckTree(spec, chartField, dir, root); err != nil {
		return nil, err
	}
	if err := checkChartSize(dir, root); err != nil {
		return nil, spec.FieldError(chartField, err)
	}
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, spec.FieldError(chartField, fmt.Errorf("%w: loading %s: %w", ErrChart, dir, err))
	}
	var out []*v1alpha1.PathSource
	for _, d := range repoDependencies(chrt) {
		out = append(out, &v1alpha1.PathSource{Repo: d.Repository, Name: d.Name, Version: d.Version})
	}
	return out, nil
}

// cached reports whether the cache holds lc's archive with its digest.
func cached(cache string, lc *LockedChart) bool {
	h, err := digestHex(lc.Digest)
	if err != nil {
		return false
	}
	b, err := readCache(cache, h)
	return err == nil && sha256Digest(b) == lc.Digest
}

func fetchOne(ctx context.Context, src *v1alpha1.PathSource, indexes map[string]*repo.IndexFile, cred *repo.Entry, opts FetchOptions) (*LockedChart, error) {
	base := strings.TrimSuffix(src.Repo, "/")
	idx := indexes[base]
	if idx == nil {
		b, err := download(ctx, base+"/index.yaml", maxIndex, cred, base, opts)
		if err != nil {
			return nil, err
		}
		idx = &repo.IndexFile{}
		if err := yaml.Unmarshal(b, idx); err != nil {
			return nil, fmt.Errorf("%w: %s/index.yaml: %v", ErrFetch, base, err)
		}
		for name, vs := range idx.Entries {
			kept := vs[:0]
			for _, v := range vs {
				if v != nil && v.Metadata != nil {
					kept = append(kept, v)
				}
			}
			idx.Entries[name] = kept
		}
		idx.SortEntries()
		indexes[base] = idx
	}
	cv, err := idx.Get(src.Name, src.Version)
	if err != nil {
		return nil, fmt.Errorf("%w: %s has no chart %s matching version %q: %v", ErrFetch, base, src.Name, src.Version, err)
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("%w: %s: %s %s has no URL in the index", ErrFetch, base, src.Name, cv.Version)
	}
	url, err := repo.ResolveReferenceURL(base+"/", cv.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFetch, cv.URLs[0], err)
	}
	data, err := download(ctx, url, maxArchive, cred, base, opts)
	if err != nil {
		return nil, err
	}
	digest := sha256Digest(data)
	if cv.Digest != "" && "sha256:"+cv.Digest != digest {
		return nil, fmt.Errorf("%w: %s is %s, the repository's index says sha256:%s", ErrDigest, url, digest, cv.Digest)
	}
	if _, err := loadArchive(data, src.Name, cv.Version); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	h, _ := digestHex(digest)
	if err := writeAtomic(opts.Cache, cachePath(opts.Cache, h), data); err != nil {
		return nil, err
	}
	return &LockedChart{Repo: src.Repo, Name: src.Name, Version: src.Version, Resolved: cv.Version, Digest: digest, URL: url}, nil
}

// download gets url with Helm's HTTP getter, the credentials of the
// repository's entry (sent to other hosts only with passCredentialsAll),
// reading at most limit bytes.
func download(ctx context.Context, url string, limit int64, cred *repo.Entry, base string, opts FetchOptions) ([]byte, error) {
	tr, err := cappedTransport(limit, cred)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFetch, url, err)
	}
	gopts := []getter.Option{getter.WithURL(url), getter.WithTransport(tr), getter.WithTimeout(opts.Timeout)}
	if cred != nil && cred.Username != "" && (cred.PassCredentialsAll || strings.HasPrefix(url, base+"/")) {
		gopts = append(gopts, getter.WithBasicAuth(cred.Username, cred.Password), getter.WithPassCredentialsAll(cred.PassCredentialsAll))
	}
	g, err := getter.NewHTTPGetter(gopts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFetch, url, err)
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		buf, err := g.Get(url)
		if err != nil {
			done <- result{nil, err}
			return
		}
		done <- result{buf.Bytes(), nil}
	}()
	select {
	case <-ctx.Done():
		tr.CloseIdleConnections()
		return nil, fmt.Errorf("%w: %s: %w", ErrFetch, url, context.Cause(ctx))
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFetch, url, r.err)
		}
		if int64(len(r.b)) > limit {
			return nil, fmt.Errorf("%w: %s holds more than %d bytes", ErrArchive, url, limit)
		}
		return r.b, nil
	}
}

// cappedTransport reads at most limit bytes (and 64 KiB of headers) from
// the connection of one request, with the TLS files of cred.
func cappedTransport(limit int64, cred *repo.Entry) (*http.Transport, error) {
	left := &atomic.Int64{}
	left.Store(limit + 64<<10)
	d := &net.Dialer{Timeout: 30 * time.Second}
	tr := &http.Transport{
		Proxy:              http.ProxyFromEnvironment,
		DisableCompression: true,
		DisableKeepAlives:  true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &cappedConn{Conn: c, left: left, limit: limit}, nil
		},
	}
	if cred != nil && (cred.CAFile != "" || cred.CertFile != "" || cred.InsecureSkipTLSverify) {
		cfg := &tls.Config{InsecureSkipVerify: cred.InsecureSkipTLSverify} //nolint:gosec // the user's repositories.yaml asks for it
		if cred.CAFile != "" {
			pem, err := fsroot.ReadFile(filepath.Dir(cred.CAFile), cred.CAFile)
			if err != nil {
				return nil, err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%s: no certificate", cred.CAFile)
			}
			cfg.RootCAs = pool
		}
		if cred.CertFile != "" && cred.KeyFile != "" {
			cert, err := tls.LoadX509KeyPair(cred.CertFile, cred.KeyFile)
			if err != nil {
				return nil, err
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		tr.TLSClientConfig = cfg
	}
	return tr, nil
}

type cappedConn struct {
	net.Conn
	left  *atomic.Int64
	limit int64
}

func (c *cappedConn) Read(b []byte) (int, error) {
	if c.left.Load() <= 0 {
		return 0, fmt.Errorf("%w: the response holds more than %d bytes", ErrArchive, c.limit)
	}
	n, err := c.Conn.Read(b)
	c.left.Add(-int64(n))
	return n, err
}

// repoCredentials reads Helm's repositories.yaml, by URL (no trailing
// slash).
func repoCredentials(file string) (map[string]*repo.Entry, error) {
	out := map[string]*repo.Entry{}
	if file == "" {
		return out, nil
	}
	f, err := repo.LoadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, e := range f.Repositories {
		if e != nil {
			out[strings.TrimSuffix(e.URL, "/")] = e
		}
	}
	return out, nil
}

// writeAtomic writes b to file (below dir) through a temporary file in
// its folder, inside dir opened as an os.Root: no symlink leads the write
// out of dir (the cache, or the render root for the lock), and a file
// there that is a symlink is replaced, never written through.
func writeAtomic(dir, file string, b []byte) error {
	rel, err := filepath.Rel(dir, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is outside %s", file, dir)
	}
	if err := fsroot.MkdirBelowExisting(dir); err != nil {
		return err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(rel), ".wavesmith-fetch-"+hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer r.Remove(tmp)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return r.Rename(tmp, rel)
}

type fetchKey struct{}

// FetchOnMiss returns ctx under which rendering fetches, on a cache miss,
// a chart the lock names (and only such a chart), by the lock's URL or
// manifest digest, checks its digest against the lock and stores it in
// opts.Cache: the Argo CD plugin's door, whose repo-server has network,
// passes it. A chart the lock lacks is still ErrNotFetched: versions and
// digests are decided by wavesmith fetch alone.
func FetchOnMiss(ctx context.Context, opts FetchOptions) context.Context {
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	return context.WithValue(ctx, fetchKey{}, &opts)
}

// refetch downloads the archive lc names, exactly: an OCI chart by its
// manifest digest, a repository chart by its URL (with the credentials
// of Helm's repositories.yaml), and checks it is lc.Digest. It stores it
// in the cache when it can: a cache that cannot be written (a read-only
// home) costs a download per render, not the render.
func refetch(ctx context.Context, lc *LockedChart, opts FetchOptions) ([]byte, error) {
	var data []byte
	var err error
	if strings.HasPrefix(lc.Repo, ociScheme) {
		opts.PlainHTTP = opts.PlainHTTP || lc.PlainHTTP
		data, err = pullLocked(ctx, lc, opts)
	} else {
		var creds map[string]*repo.Entry
		if creds, err = repoCredentials(opts.RepositoryConfig); err != nil {
			return nil, err
		}
		base := strings.TrimSuffix(lc.Repo, "/")
		data, err = download(ctx, lc.URL, maxArchive, creds[base], base, opts)
	}
	if err != nil {
		return nil, err
	}
	if got := sha256Digest(data); got != lc.Digest {
		return nil, fmt.Errorf("%w: %s is %s, the lock says %s", ErrDigest, lc.URL, got, lc.Digest)
	}
	h, _ := digestHex(lc.Digest)
	_ = writeAtomic(opts.Cache, cachePath(opts.Cache, h), data) // best effort, see above
	return data, nil
}
