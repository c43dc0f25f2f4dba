package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/kindscope"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// ProjectFile is the project file: render and check without arguments use
// it, Argo CD discovery takes a folder holding it.
const ProjectFile = ".wavesmith.yaml"

// DefaultTimeout bounds a render when no layer sets a timeout.
const DefaultTimeout = time.Minute

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid configuration")

// ErrNoRoot: Merged.Options was given no root; the door decides one.
// It is internal/load's sentinel, re-exported as the same value (errors.Is
// matches either name) for callers outside the module; config is its
// public home as the one public package that returns it.
var ErrNoRoot = load.ErrNoRoot

// Root is the render's root as the door opened it: config reads every
// file (a project file, a tree's record, an apiResources list) through
// it and confines every path setting to it. OpenRoot returns wavesmith's
// (internal/fsroot's: nothing outside the folder, through symlinks
// neither; regular files only, each under a size cap), the one every
// door passes; config opens no file by itself. A Root of the caller's
// own must keep those rules: config trusts what it returns.
type Root interface {
	// Rel returns path relative to the root, an error when it lies
	// outside it lexically.
	Rel(path string) (string, error)
	// Lstat returns what path is inside the root, not following a final
	// symlink (fs.ErrNotExist when nothing is there).
	Lstat(path string) (fs.FileInfo, error)
	// CheckFile refuses what ReadFile would refuse, without reading;
	// a folder is returned as it is.
	CheckFile(path string) (fs.FileInfo, error)
	// ReadFile reads the regular file path inside the root.
	ReadFile(path string) ([]byte, error)
	// Confine refuses a path, existing or not, that leaves the root
	// lexically or through a symlink.
	Confine(path string) error
}

// RootCloser is a Root to close when done (OpenRoot's).
type RootCloser interface {
	Root
	io.Closer
}

var _ RootCloser = (*fsroot.Root)(nil)

// OpenRoot opens the folder dir as the root of a render, for callers
// outside wavesmith's doors; close it when done.
func OpenRoot(dir string) (RootCloser, error) {
	r, err := fsroot.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Layer is one source of settings.
type Layer struct {
	// Name of the source, for messages: "flags", ".wavesmith.yaml".
	Name string
	Spec v1alpha1.RenderConfigSpec
	// FieldName names a field of Spec (its JSON path, "policies.update")
	// as the layer's user wrote it ("--update-policy"); nil gives
	// "<Name>: spec.<path>".
	FieldName func(path string) string
	// Dir is the folder relative paths of the layer (inputs, output) are
	// relative to ("" for the current folder).
	Dir string
}

func (l *Layer) name(path string) string {
	if l.FieldName != nil {
		if n := l.FieldName(path); n != "" {
			return n
		}
	}
	return l.Name + ": spec." + path
}

// Merged is the result of Merge: the settings and where each came from.
type Merged struct {
	Spec v1alpha1.RenderConfigSpec
	from map[string]*Layer
}

// Name names a field as the user wrote it in the layer that set it; for a
// field no layer set, its path.
func (m *Merged) Name(path string) string {
	if l := m.from[path]; l != nil {
		return l.name(path)
	}
	for p, l := range m.from { // a field below a section, e.g. flux.source
		if strings.HasPrefix(path, p+".") {
			return l.name(path)
		}
	}
	return path
}

// Source returns the layer that set a field, nil when none did.
func (m *Merged) Source(path string) *Layer { return m.from[path] }

// Merge takes each field from the first layer that sets it. A section
// (flux, argocd, policies) is set by any layer that sets it, and merged
// field by field. Paths (inputs, output) are made relative to the current
// folder.
func Merge(layers ...Layer) *Merged {
	m := &Merged{from: map[string]*Layer{}}
	dst := reflect.ValueOf(&m.Spec).Elem()
	for i := range layers {
		l := &layers[i]
		spec := l.Spec
		if l.Dir != "" {
			spec.Inputs = append([]string(nil), spec.Inputs...)
			for j, in := range spec.Inputs {
				spec.Inputs[j] = join(l.Dir, in)
			}
			if spec.Output != "" && spec.Output != "-" {
				spec.Output = join(l.Dir, spec.Output)
			}
			if spec.APIResources != "" {
				spec.APIResources = join(l.Dir, spec.APIResources)
			}
		}
		merge(dst, reflect.ValueOf(spec), "", l, m.from)
	}
	return m
}

func join(dir, p string) string {
	if p == "-" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// merge fills the unset fields of dst from src, recording the layer of
// each field it sets by JSON path.
func merge(dst, src reflect.Value, prefix string, l *Layer, from map[string]*Layer) {
	t := dst.Type()
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		path := prefix + name
		d, s := dst.Field(i), src.Field(i)
		if s.IsZero() {
			continue
		}
		if s.Kind() == reflect.Pointer && s.Elem().Kind() == reflect.Struct {
			if d.IsNil() {
				d.Set(reflect.New(s.Elem().Type()))
				from[path] = l
			}
			merge(d.Elem(), s.Elem(), path+".", l, from)
			continue
		}
		if d.IsZero() {
			d.Set(s)
			from[path] = l
		}
	}
}

// FieldError is a bad setting, named as the user wrote it.
type FieldError struct {
	Name string
	Err  error
}

func (e *FieldError) Error() string { return e.Name + ": " + e.Err.Error() }

// Unwrap returns ErrConfig and the cause.
func (e *FieldError) Unwrap() []error { return []error{ErrConfig, e.Err} }

// Options is OptionsIn the root the door decided (its one rule: the
// CLI's decideRoot, load.DefaultRoot; the KRM function takes its door's);
// the settings never find a root of their own.
func (m *Merged) Options(root string) (render.Options, time.Duration, error) {
	if root == "" {
		return render.Options{}, 0, ErrNoRoot
	}
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return render.Options{}, 0, err
	}
	defer r.Close()
	return m.OptionsIn(r)
}

// OptionsIn checks the merged settings and returns the engine options
// (without Generators, which the door passes) and the render timeout.
// Every setting that holds a path (inputs, output, apiResources) must lie
// in root, lexically and through symlinks (Root.Confine; OpenRoot's
// wraps generators.ErrOutsideRoot), and files are read through it
// only. Every mistake is reported, sorted, each naming its field.
func (m *Merged) OptionsIn(root Root) (render.Options, time.Duration, error) {
	c := m.Spec
	var errs []error
	bad := func(path string, format string, args ...any) {
		errs = append(errs, &FieldError{Name: m.Name(path), Err: fmt.Errorf(format, args...)})
	}
	confined := func(path, p string) bool {
		if err := root.Confine(p); err != nil {
			errs = append(errs, &FieldError{Name: m.Name(path), Err: err})
			return false
		}
		return true
	}
	for _, in := range c.Inputs {
		if in != "-" {
			confined("inputs", in)
		}
	}
	o := render.Options{Namespace: c.Namespace, KubeVersion: c.KubeVersion, APIVersions: c.APIVersions, PartOf: c.PartOf, Defaults: map[string]string{}}
	if c.Platform != "" {
		p, err := generators.ParsePlatform(strings.ToLower(strings.TrimSpace(c.Platform)))
		if err != nil {
			bad("platform", "%v", err)
		}
		o.Platform = p
	} else {
		o.Platform = render.PlatformFromAPIVersions(c.APIVersions)
	}
	if c.Dialects != nil {
		ds, err := engines.ParseDialects(strings.Join(c.Dialects, ","))
		if err != nil {
			bad("dialects", "%v", err)
		}
		o.Dialects = ds
	}
	if c.Wave != nil {
		if *c.Wave < -32768 || *c.Wave > 32767 {
			bad("wave", "%d: want -32768..32767", *c.Wave)
		}
		o.Defaults[inventory.ApplyOrder] = strconv.Itoa(int(*c.Wave))
	}
	if p := c.Policies; p != nil {
		for _, f := range []struct{ path, key, v string }{
			{"policies.adoption", inventory.AdoptionPolicy, p.Adoption}, {"policies.update", inventory.UpdatePolicy, p.Update},
			{"policies.delete", inventory.DeletePolicy, p.Delete}, {"policies.reconcile", inventory.ReconcilePolicy, p.Reconcile},
		} {
			if f.v == "" {
				continue
			}
			nv, err := render.CheckPolicy(f.key, f.v)
			if err != nil {
				bad(f.path, "%q is not one of %s", f.v, strings.Join(inventory.Allowed[f.key], ", "))
			}
			o.Defaults[f.key] = nv
		}
	}
	if c.KubeVersion != "" && !strings.HasPrefix(strings.TrimPrefix(c.KubeVersion, "v"), "1.") {
		bad("kubeVersion", "%q: want a Kubernetes version such as v1.33.0", c.KubeVersion)
	}
	if c.APIResources != "" && confined("apiResources", c.APIResources) {
		t, err := readAPIResources(root, c.APIResources)
		if err != nil {
			errs = append(errs, &FieldError{Name: m.Name("apiResources"), Err: err})
		}
		o.Scope = t
	}
	timeout := DefaultTimeout
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			bad("timeout", "%q: want a positive duration such as 90s or 5m", c.Timeout)
		}
		timeout = d
	}
	if c.Output != "" && c.Output != "-" && confined("output", c.Output) {
		if err := CheckOutput(c.Output); err != nil {
			bad("output", "%v", err)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return o, timeout, errors.Join(errs...)
}

// maxAPIResources bounds a kubectl api-resources file (a cluster with
// thousands of kinds prints a few hundred kilobytes).
const maxAPIResources = 4 << 20

// readAPIResources reads a kubectl api-resources file through root:
// regular, inside it, at most maxAPIResources bytes.
func readAPIResources(root Root, path string) (*kindscope.Table, error) {
	fi, err := root.CheckFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if fi.IsDir() || fi.Size() > maxAPIResources {
		return nil, fmt.Errorf("%s: want a regular file of at most %d bytes (the output of kubectl api-resources)", path, maxAPIResources)
	}
	b, err := root.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxAPIResources {
		return nil, fmt.Errorf("%s: want a regular file of at most %d bytes (the output of kubectl api-resources)", path, maxAPIResources)
	}
	return kindscope.ParseAPIResources(path, b)
}

// CheckOutput refuses output folder names that are a kubectl habit (-o
// yaml, -o json) rather than a folder.
func CheckOutput(out string) error {
	switch strings.ToLower(filepath.Clean(out)) {
	case "yaml", "yml", "json", "wide", "name":
		return fmt.Errorf("%q would be a folder named %s: for a stream on standard output leave -o out (or -o -), for JSON use --format json; a folder named so needs ./%s", out, out, out)
	}
	return nil
}

// ReadFile reads a wavesmith.io/v1alpha1 RenderConfig document (a project
// file, a tree's record) through root (inside it, through symlinks
// neither; a regular file under a size cap: never a FIFO or a
// device) strictly: unknown fields are errors naming the file. Relative
// paths in it are relative to its folder (Layer.Dir).
func ReadFile(root Root, path string) (Layer, error) {
	b, err := root.ReadFile(path)
	if err != nil {
		return Layer{}, fmt.Errorf("%s: %w", path, err)
	}
	return Parse(path, b)
}

// Parse reads a RenderConfig document; file names it in errors. An empty
// file is an empty configuration (a project file may only mark a folder).
// Mistakes are reported as spec errors are, all at once, each as
// "file:line: RenderConfig/name: field.path: message" (manifest.Error,
// wrapping ErrConfig): an unknown field lists the known ones, a value of
// the wrong type says which type is wanted.
func Parse(file string, b []byte) (Layer, error) {
	empty := Layer{Name: file, Dir: filepath.Dir(file)}
	if len(bytes.TrimSpace(b)) == 0 {
		return empty, nil
	}
	objs, err := manifest.Decode(file, b)
	if err != nil {
		return Layer{}, configErr{err}
	}
	switch len(objs) {
	case 0: // comments only
		return empty, nil
	case 1:
	default:
		return Layer{}, configErr{&manifest.Error{File: file, Line: objs[1].Source.Line, Err: fmt.Errorf("%d documents: want one RenderConfig", len(objs))}}
	}
	o := objs[0]
	if o.APIVersion() != v1alpha1.GroupVersion.String() || o.Kind() != v1alpha1.RenderConfigKind {
		return Layer{}, configErr{&manifest.Error{File: file, Line: o.Source.Line, Err: fmt.Errorf("want apiVersion %s and kind %s, got %q and %q", v1alpha1.GroupVersion, v1alpha1.RenderConfigKind, o.APIVersion(), o.Kind())}}
	}
	var errs []error
	for _, k := range manifest.SortedKeys(o.Map) {
		switch k {
		case "apiVersion", "kind", "metadata":
		case "spec":
			errs = append(errs, checkField(o, "spec", o.Map[k], reflect.TypeOf(v1alpha1.RenderConfigSpec{}))...)
		default:
			errs = append(errs, o.FieldError(k, configError(fmt.Sprintf("unknown field %q (known: apiVersion, kind, metadata, spec)", k))))
		}
	}
	if len(errs) > 0 {
		line := func(e error) int { var me *manifest.Error; errors.As(e, &me); return me.Line }
		sort.SliceStable(errs, func(i, j int) bool { return line(errs[i]) < line(errs[j]) })
		return Layer{}, manifest.Errors(errs)
	}
	j, err := json.Marshal(o.Map)
	if err == nil {
		var rc v1alpha1.RenderConfig
		if err = json.Unmarshal(j, &rc); err == nil {
			return Layer{Name: file, Spec: rc.Spec, Dir: filepath.Dir(file)}, nil
		}
	}
	return Layer{}, configErr{&manifest.Error{File: file, Line: o.Source.Line, Err: err}} // checkField lets nothing through that fails here
}

// configError is a mistake in a RenderConfig document.
type configError string

func (e configError) Error() string { return string(e) }

// Unwrap returns ErrConfig.
func (e configError) Unwrap() error { return ErrConfig }

// configErr wraps a decoding error, its text unchanged, with ErrConfig.
type configErr struct{ err error }

func (e configErr) Error() string { return e.err.Error() }

// Unwrap returns ErrConfig and the cause.
func (e configErr) Unwrap() []error { return []error{ErrConfig, e.err} }

// checkField checks a decoded value against the Go type of its field
// (manifest.CheckFields): unknown fields (with the known ones listed) and
// values of the wrong type, every one, at their line, wrapping ErrConfig.
func checkField(o *manifest.Object, path string, v any, t reflect.Type) []error {
	return manifest.CheckFields(o, path, v, t, manifest.FieldCheck{
		Err:        func(msg string) error { return configError(msg) },
		Int32Range: true,
	})
}

// Project reads the project file of dir (ProjectFile) through root, ok
// false when there is none. Anything else at its name (a symlink out of
// root, a FIFO, a device, a folder) is an error.
func Project(root Root, dir string) (l Layer, ok bool, err error) {
	p := filepath.Join(dir, ProjectFile)
	if _, err := root.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return Layer{}, false, nil
	}
	l, err = ReadFile(root, p)
	return l, true, err
}

// FindProject looks for the project file as git looks for .git: in dir,
// then in each folder above it up to the root's folder, never above it.
// It returns the nearest one, named by its path from dir ("../"
// repeated, so that its relative paths stay relative to its folder), ok
// false when there is none. dir outside the root: dir alone.
func FindProject(root Root, dir string) (l Layer, ok bool, err error) {
	for d := dir; ; d = filepath.Join(d, "..") {
		if l, ok, err := Project(root, d); ok || err != nil {
			return l, ok, err
		}
		if rel, err := root.Rel(d); err != nil || rel == "." {
			return Layer{}, false, nil
		}
	}
}

// Encode writes spec as a RenderConfig document, deterministically.
func Encode(spec v1alpha1.RenderConfigSpec, name string) []byte {
	rc := v1alpha1.RenderConfig{Spec: spec}
	rc.APIVersion, rc.Kind = v1alpha1.GroupVersion.String(), v1alpha1.RenderConfigKind
	rc.Name = name
	b, err := sigsyaml.Marshal(rc)
	if err != nil {
		panic(fmt.Sprintf("encoding a RenderConfig: %v", err)) // plain strings and numbers only
	}
	return bytes.Replace(b, []byte("  creationTimestamp: null\n"), nil, 1)
}

// SplitList splits a comma-separated list, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
