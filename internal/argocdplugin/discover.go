package argocdplugin

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/manifest"
)

// Discover lists the files that make dir wavesmith's: the project file
// config.ProjectFile in it, and every file render would load below it that
// holds an object of a spec kind of reg, even one that does not parse (so
// that the render reports the mistake rather than another tool taking the
// folder). A folder in a tree wavesmith rendered (it, or a folder above it
// up to root, holds outtree.RecordFile) is never wavesmith's input: Discover
// returns nothing for it. Like render, it walks each folder once, at most
// load.MaxFolderDepth deep, and reads at most load.MaxRenderInputSize
// bytes (load.ErrTooDeep, load.ErrInputsTooLarge).
func Discover(dir, root string, reg generators.Registry) ([]string, error) {
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("discovering specs in %s: %w", dir, err)
	}
	defer r.Close()
	if load.RenderedTree(r, dir) != "" {
		return nil, nil
	}
	var found []string
	if _, err := r.Lstat(filepath.Join(dir, config.ProjectFile)); err == nil {
		found = append(found, filepath.Join(dir, config.ProjectFile))
	}
	files, err := load.Files(root, dir)
	if err != nil {
		return nil, fmt.Errorf("discovering specs in %s: %w", dir, err)
	}
	// What render would refuse to read is not read either.
	var total int64
	for _, p := range files {
		fi, err := r.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("discovering specs in %s: %w", dir, err)
		}
		if total += fi.Size(); total > load.MaxRenderInputSize {
			return nil, fmt.Errorf("discovering specs in %s: %s: %w: the files hold more than the %d bytes a render may read", dir, p, load.ErrInputsTooLarge, load.MaxRenderInputSize)
		}
	}
	match := matcher(reg)
	for _, p := range files {
		b, err := r.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("discovering specs in %s: %w", dir, err)
		}
		if holdsSpec(p, b, reg, match) {
			found = append(found, p)
		}
	}
	return found, nil
}

// matcher is the textual fallback for files that do not parse: an
// apiVersion of a spec group and a kind of a spec kind.
func matcher(reg generators.Registry) func([]byte) bool {
	groups, kinds := map[string]bool{}, map[string]bool{}
	for _, gk := range reg.Kinds() {
		g, k, _ := strings.Cut(gk, "/")
		groups[regexp.QuoteMeta(g)], kinds[regexp.QuoteMeta(k)] = true, true
	}
	alt := func(m map[string]bool) string {
		var s []string
		for k := range m {
			s = append(s, k)
		}
		sort.Strings(s)
		return strings.Join(s, "|")
	}
	apiVersion := regexp.MustCompile(`["']?\bapiVersion["']?\s*:\s*["']?(` + alt(groups) + `)/`)
	kind := regexp.MustCompile(`["']?\bkind["']?\s*:\s*["']?(` + alt(kinds) + `)\b`)
	return func(b []byte) bool { return apiVersion.Match(b) && kind.Match(b) }
}

// holdsSpec tells whether a file holds an object of a spec kind.
func holdsSpec(file string, b []byte, reg generators.Registry, match func([]byte) bool) bool {
	objs, err := manifest.Decode(file, b)
	if err != nil {
		return match(b)
	}
	for _, o := range objs {
		if _, ok := reg.Lookup(o); ok {
			return true
		}
	}
	return false
}
