package load

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// kinds is what a registry says about the objects loaded: which are
// specs, and what each spec reads.
type kinds struct {
	reg generators.Registry
	// apis are the apiVersion prefixes of the registry's groups
	// ("wavesmith.io/v"): a file that does not decode but holds one may
	// be a broken spec.
	apis [][]byte
}

func newKinds(reg generators.Registry) kinds {
	k := kinds{reg: reg}
	seen := map[string]bool{}
	for _, gk := range reg.Kinds() {
		g, _, _ := strings.Cut(gk, "/")
		if !seen[g] {
			seen[g] = true
			k.apis = append(k.apis, []byte(g+"/v"))
		}
	}
	return k
}

// isSpec tells whether o is of a spec kind of the registry.
func (k kinds) isSpec(o *manifest.Object) bool {
	_, ok := k.reg.Lookup(o)
	return ok
}

// firstSpec returns the first spec among objs, or nil.
func (k kinds) firstSpec(objs []*manifest.Object) *manifest.Object {
	for _, o := range objs {
		if k.isSpec(o) {
			return o
		}
	}
	return nil
}

// mayHoldSpec tells whether a file may hold a spec: it names a spec's
// apiVersion, or it could spell one otherwise (an escape in a quoted
// scalar, or UTF-16, which holds NUL bytes or starts with a byte order
// mark). Loading decodes such a file before it knows the specs' sources.
func (k kinds) mayHoldSpec(b []byte) bool {
	return k.namesSpecAPI(b) || bytes.IndexByte(b, '\\') >= 0 || bytes.IndexByte(b, 0) >= 0 ||
		bytes.HasPrefix(b, []byte{0xfe, 0xff}) || bytes.HasPrefix(b, []byte{0xff, 0xfe})
}

// namesSpecAPI tells whether a file that did not decode looks like a spec
// (names the apiVersion of one): its error must not be discarded.
func (k kinds) namesSpecAPI(b []byte) bool {
	for _, api := range k.apis {
		if bytes.Contains(b, api) {
			return true
		}
	}
	return false
}

// source is a file or folder a spec reads.
type source struct {
	abs   string
	obj   *manifest.Object
	field string // spec.source.chart.path, spec.valuesFiles[0], ...
	path  string // as written
}

// sources are the files and folders specs read.
type sources []source

// covering returns the source that file is or lies below, or nil.
func (s sources) covering(file string) *source {
	if file == "-" || len(s) == 0 {
		return nil // no source: no path to make absolute (os.Getwd stats two folders)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	for i, p := range s {
		if abs == p.abs || strings.HasPrefix(abs, p.abs+string(filepath.Separator)) {
			return &s[i]
		}
	}
	return nil
}

// sources lists what the specs among docs read, as their generators
// report it (generators.Reader), resolved against each spec's file.
func (k kinds) sources(docs [][]*manifest.Object, root string) sources {
	var out sources
	for _, d := range docs {
		for _, o := range d {
			if o.Source.File == "" || o.Source.File == "-" {
				continue
			}
			g, ok := k.reg.Lookup(o)
			if !ok {
				continue
			}
			r, ok := g.(generators.Reader)
			if !ok {
				continue
			}
			for _, rd := range r.Reads(o, root) {
				if abs, err := filepath.Abs(filepath.Join(filepath.Dir(o.Source.File), rd.Path)); err == nil {
					out = append(out, source{abs: abs, obj: o, field: rd.Field, path: rd.Path})
				}
			}
		}
	}
	return out
}

// WithoutSources drops the objects that come from files a spec among
// objs reads (as its generator in reg reports it, generators.Reader: a
// Component's kustomization folder, its values files): they are rendered
// through the spec, not on their own. A spec is never a source: a file a
// spec reads that holds a spec is an error naming both
// (generators.ErrSourceCoversSpec), as Inputs reports it. root is the render's: a
// generator reads nothing outside it to answer. The KRM function, whose
// objects come in a ResourceList rather than from files, calls it.
func WithoutSources(objs []*manifest.Object, reg generators.Registry, root string) ([]*manifest.Object, error) {
	if reg == nil {
		return nil, ErrNoGenerators
	}
	k := newKinds(reg)
	used := k.sources([][]*manifest.Object{objs}, root)
	if len(used) == 0 {
		return objs, nil
	}
	out := objs[:0:0]
	var errs []error
	for _, o := range objs {
		src := (*source)(nil)
		if o.Source.File != "" {
			src = used.covering(o.Source.File)
		}
		switch {
		case src == nil:
			out = append(out, o)
		case k.isSpec(o):
			errs = append(errs, src.obj.FieldError(src.field, fmt.Errorf("%w: %s covers %s, which holds %s: a spec is never a source", generators.ErrSourceCoversSpec, src.path, o.Source.File, o.Key())))
		}
	}
	return out, manifest.JoinSorted(errs)
}
