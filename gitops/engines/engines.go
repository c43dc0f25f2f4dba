// Package engines is the table of the GitOps engines wavesmith knows. The
// doors pass it to the render engine (render.Options.Engines: dialects and
// applier markers; the engine imports no engine) and iterate it for
// delivery files; adding an engine means adding its package (implementing
// gitops.Engine) and one line here.
package engines

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/gitops/argocd"
	"github.com/wavesmith/wavesmith/gitops/flux"
)

// All returns every engine, in the order their annotations are written.
func All() []gitops.Engine {
	return []gitops.Engine{argocd.Engine{}, flux.Engine{}}
}

// Names returns the engines' names, in the order of All.
func Names() []string {
	var out []string
	for _, e := range All() {
		out = append(out, e.Name())
	}
	return out
}

// Dialects returns the dialects of all engines, as gitops.Dialect.
func Dialects() []gitops.Dialect {
	var out []gitops.Dialect
	for _, e := range All() {
		out = append(out, e)
	}
	return out
}

// ErrDialect is matched (errors.Is) by every error of ParseDialects.
var ErrDialect = errors.New("invalid dialect")

// dialectError is an error of ParseDialects: its message names the
// dialect, and it is ErrDialect for errors.Is.
type dialectError string

func (e dialectError) Error() string        { return string(e) }
func (e dialectError) Is(target error) bool { return target == ErrDialect }

// ParseDialects reads a comma-separated list of engine names; "none" (or
// "") means none: an empty, non-nil list. "none" beside an engine's name
// is an error: the list would contradict itself.
func ParseDialects(s string) ([]gitops.Dialect, error) {
	out := []gitops.Dialect{}
	seen := map[string]bool{}
	none := false
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if p == "none" {
			none = true
			continue
		}
		e, ok := byName(p)
		if !ok {
			return nil, dialectError(fmt.Sprintf("dialect %q: want %s or none", p, strings.Join(Names(), ", ")))
		}
		out = append(out, e)
	}
	// In the order of All, whatever the order given.
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Name()) < rank(out[j].Name()) })
	if none && len(out) > 0 {
		names := make([]string, len(out))
		for i, d := range out {
			names[i] = d.Name()
		}
		return nil, dialectError(fmt.Sprintf("dialect none cannot be combined with %s: give none alone for no engine's annotations, or the engines without none", strings.Join(names, ", ")))
	}
	return out, nil
}

func byName(name string) (gitops.Engine, bool) {
	for _, e := range All() {
		if e.Name() == name {
			return e, true
		}
	}
	return nil, false
}

func rank(name string) int {
	for i, n := range Names() {
		if n == name {
			return i
		}
	}
	return len(Names())
}

// Files returns the delivery files of every engine cfg asks for, for the
// tree whose object files are tree; previous is the tree being replaced
// (nil for a first render). Files that would clash with the tree's own are
// an error.
func Files(p *gitops.Plan, tree map[string][]byte, previous fs.FS, cfg *v1alpha1.RenderConfigSpec) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, e := range All() {
		more, err := e.Files(p, previous, cfg)
		if err != nil {
			return nil, err
		}
		for k, v := range more {
			if err := clash(k, tree, out); err != nil {
				return nil, fmt.Errorf("%s: %w", e.Name(), err)
			}
			out[k] = v
		}
	}
	return out, nil
}

// clash refuses a file the tree or another engine already has, or one
// that needs a folder where the tree has a file.
func clash(p string, sets ...map[string][]byte) error {
	for _, s := range sets {
		if _, ok := s[p]; ok {
			return fmt.Errorf("%w: %s is already a file of the tree", gitops.ErrOption, p)
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := s[d]; ok {
				return fmt.Errorf("%w: %s needs the folder %s, a file of the tree", gitops.ErrOption, p, d)
			}
		}
	}
	return nil
}
