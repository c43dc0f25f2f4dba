package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// fileScheme starts a dependency a chart folder names by path
// (Chart.yaml's repository: file://../other), relative to the chart.
const fileScheme = "file://"

// fileDependency is a dependency of a chart folder named by file://: the
// folder dir holding it, at index i of Chart.yaml's dependencies.
type fileDependency struct {
	i    int
	name string
	// version is Chart.yaml's version constraint.
	version string
	dir     string
}

// chartMetadata reads the Chart.yaml of the chart folder dir inside root
// leniently: nil when it cannot be read (Helm's loader reports it).
func chartMetadata(r *fsroot.Root, dir string) *chart.Metadata {
	b, err := r.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil
	}
	md := &chart.Metadata{}
	if yaml.Unmarshal(b, md) != nil {
		return nil
	}
	return md
}

// fileDependencies returns the file:// dependencies of the chart folder
// dir whose charts/ lacks them (what helm dependency build would package
// into charts/), each checked as the chart folder itself is before Helm's
// loader reads it: inside root (a path leaving it, lexically or through a
// symlink, is generators.ErrOutsideRoot naming the Chart.yaml and
// dependencies[i].repository), a folder holding only folders and regular
// files, within the size budget. Errors are at spec's chart field.
func fileDependencies(spec *manifest.Object, dir, root string) ([]fileDependency, error) {
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return nil, spec.FieldError(chartField, err)
	}
	defer r.Close()
	md := chartMetadata(r, dir)
	if md == nil {
		return nil, nil
	}
	var out []fileDependency
	for i, d := range md.Dependencies {
		if d == nil || !strings.HasPrefix(d.Repository, fileScheme) || inCharts(r, dir, d.Name) {
			continue
		}
		at := fmt.Sprintf("%s: dependencies[%d].repository", filepath.Join(dir, "Chart.yaml"), i)
		p := strings.TrimPrefix(d.Repository, fileScheme)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := r.Rel(p); err != nil {
			return nil, spec.FieldError(chartField, fmt.Errorf("%w: %s: %s leaves %s (the root)", fsroot.ErrOutsideRoot, at, d.Repository, r.Dir()))
		}
		fi, err := r.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, spec.FieldError(chartField, fmt.Errorf("%w: %s: %s does not exist", ErrChart, at, p))
		case err != nil:
			return nil, spec.FieldError(chartField, fmt.Errorf("%s: %s: %w", at, d.Repository, err))
		case !fi.IsDir():
			return nil, spec.FieldError(chartField, fmt.Errorf("%w: %s: %s is not a chart folder", ErrChart, at, p))
		}
		if err := component.CheckTree(spec, chartField, p, root); err != nil {
			return nil, err
		}
		if err := checkChartSize(p, root); err != nil {
			return nil, spec.FieldError(chartField, fmt.Errorf("%s: %w", at, err))
		}
		out = append(out, fileDependency{i: i, name: d.Name, version: d.Version, dir: p})
	}
	return out, nil
}

// inCharts reports whether charts/ of the chart folder dir holds a
// chart named name (a folder, or an archive name-VERSION.tgz), as Helm's
// loader would find it. Lenient: the loader reports what is wrong.
func inCharts(r *fsroot.Root, dir, name string) bool {
	entries, err := r.ReadDir(filepath.Join(dir, "charts"))
	if err != nil {
		return false
	}
	for _, e := range entries {
		n := e.Name()
		if n == name || strings.HasPrefix(n, name+"-") && strings.HasSuffix(n, ".tgz") {
			return true
		}
	}
	return false
}

// addFileDependencies adds to chrt, loaded from the folder dir, the
// file:// dependencies fileDependencies checked, as helm dependency build
// packages them: the chart at the path, whose version must meet the
// dependency's constraint (required, as helm dependency build requires
// it). Helm then processes them as any subchart
// (alias, condition, tags, import-values).
func addFileDependencies(chrt *chart.Chart, dir string, deps []fileDependency) error {
	have := map[string]bool{}
	for _, d := range chrt.Dependencies() {
		have[d.Name()] = true
	}
	loaded := map[string]*chart.Chart{}
	for _, d := range deps {
		if have[d.name] {
			continue
		}
		at := fmt.Sprintf("%s: dependencies[%d]", filepath.Join(dir, "Chart.yaml"), d.i)
		sub := loaded[d.dir]
		if sub == nil {
			var err error
			if sub, err = loader.Load(d.dir); err != nil {
				return fmt.Errorf("%s: loading %s: %w", at, d.dir, err)
			}
			if sub.Metadata.Name != d.name {
				return fmt.Errorf("%s: %s holds the chart %s, not %s", at, d.dir, sub.Metadata.Name, d.name)
			}
			loaded[d.dir] = sub
			chrt.AddDependency(sub)
		}
		// As helm dependency build: a version constraint is required.
		c, err := semver.NewConstraint(d.version)
		if err != nil {
			return fmt.Errorf("%s.version: %q: want a version or a semver range, as helm dependency build does: %w", at, d.version, err)
		}
		v, err := semver.NewVersion(sub.Metadata.Version)
		if err != nil || !c.Check(v) {
			return fmt.Errorf("%s.version: %s is at version %s, not %s", at, d.dir, sub.Metadata.Version, d.version)
		}
	}
	return nil
}

// Reads implements generators.Reader: the chart folder
// (spec.source.chart.path) and the folders of its file:// dependencies
// (read leniently: Generate reports what is wrong), which are the chart's
// sources, never objects of the render. A chart of a repository reads
// no file of the render.
func (Generator) Reads(spec *manifest.Object, root string) []generators.Read {
	s, _ := spec.Map["spec"].(map[string]any)
	src, _ := s["source"].(map[string]any)
	c, _ := src["chart"].(map[string]any)
	p, _ := c["path"].(string)
	if p == "" {
		return nil
	}
	out := []generators.Read{{Field: chartField, Path: p}}
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return out
	}
	defer r.Close()
	base := "."
	if f := spec.Source.File; f != "" && f != "-" {
		base = filepath.Dir(f)
	}
	md := chartMetadata(r, filepath.Join(base, p))
	if md == nil {
		return out
	}
	for _, d := range md.Dependencies {
		if d == nil || !strings.HasPrefix(d.Repository, fileScheme) {
			continue
		}
		rel := strings.TrimPrefix(d.Repository, fileScheme)
		if filepath.IsAbs(rel) {
			continue // Generate refuses it unless inside the root; loading needs no more
		}
		out = append(out, generators.Read{Field: chartField, Path: filepath.Join(p, rel)})
	}
	return out
}
