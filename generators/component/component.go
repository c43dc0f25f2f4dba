package component

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// Sentinel errors: a path leaving the root is generators.ErrOutsideRoot, a
// source covering a spec generators.ErrSourceCoversSpec.

// Decode reads a Component strictly: unknown fields and wrong types are
// errors naming the field path; exactly one source is required. It
// reports every error it finds, not the first.
func Decode(spec *manifest.Object) (*v1alpha1.Component, error) {
	var errs []error
	if spec.Name() == "" {
		errs = append(errs, spec.FieldError("metadata.name", fmt.Errorf("%w: a Component needs a name", manifest.ErrInvalid)))
	}
	raw, _ := spec.Map["spec"]
	if raw == nil {
		errs = append(errs, spec.FieldError("spec.source", fmt.Errorf("%w: spec.source is required", manifest.ErrInvalid)))
		return nil, manifest.Join(errs)
	}
	if err := check(spec, "spec", raw, reflect.TypeOf(v1alpha1.ComponentSpec{})); err != nil {
		// The fields that are right are still checked below, on a
		// spec without the wrong ones.
		bad := flatten(err)
		errs = append(errs, bad...)
		if raw = withoutBad(raw, bad); raw == nil {
			return nil, manifest.Join(errs)
		}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, manifest.Join(append(errs, spec.FieldError("spec", fmt.Errorf("%w: %v", manifest.ErrInvalid, err))))
	}
	c := &v1alpha1.Component{}
	if err := json.Unmarshal(b, &c.Spec); err != nil {
		return nil, manifest.Join(append(errs, spec.FieldError("spec", fmt.Errorf("%w: %v", manifest.ErrInvalid, err))))
	}
	c.Name, c.Namespace = spec.Name(), spec.Namespace()
	c.Annotations = map[string]string{}
	for k, v := range spec.Annotations() {
		if s, ok := v.(string); ok {
			c.Annotations[k] = s
		}
	}
	if err := checkSpec(spec, c, badPaths(errs)); err != nil {
		errs = append(errs, flatten(err)...)
	}
	if len(errs) > 0 {
		return nil, manifest.Join(errs)
	}
	return c, nil
}

// checkSpec checks the values of a decoded Component, every one.
// bad holds the fields check refused: the source's rules are not checked
// again on a source that lost some of them.
func checkSpec(spec *manifest.Object, c *v1alpha1.Component, bad []string) error {
	var errs []error
	src := c.Spec.Source
	for _, b := range bad {
		if b == "spec.source" || strings.HasPrefix(b, "spec.source.") {
			src = v1alpha1.Source{Chart: &v1alpha1.PathSource{Path: "."}} // reported by check
		}
	}
	switch {
	case (src.Chart == nil) == (src.Kustomization == nil):
		errs = append(errs, spec.FieldError("spec.source", fmt.Errorf("%w: set exactly one of chart and kustomization", manifest.ErrInvalid)))
	case src.Chart != nil && src.Chart.Path != "" && (src.Chart.Repo != "" || src.Chart.Name != "" || src.Chart.Version != ""):
		errs = append(errs, spec.FieldError("spec.source.chart", fmt.Errorf("%w: set either path or repo, name and version", manifest.ErrInvalid)))
	case src.Chart != nil && src.Chart.Path == "" && src.Chart.Repo == "":
		errs = append(errs, spec.FieldError("spec.source.chart.path", fmt.Errorf("%w: a path (or repo, name and version) is required", manifest.ErrInvalid)))
	case src.Chart != nil && src.Chart.Repo != "" && !strings.HasPrefix(src.Chart.Repo, "https://") && !strings.HasPrefix(src.Chart.Repo, "http://") && !strings.HasPrefix(src.Chart.Repo, "oci://"):
		errs = append(errs, spec.FieldError("spec.source.chart.repo", fmt.Errorf("%w: %q: want an https:// or http:// chart repository URL, or an oci:// registry reference", manifest.ErrInvalid, src.Chart.Repo)))
	case src.Chart != nil && src.Chart.Repo != "" && src.Chart.Name == "":
		errs = append(errs, spec.FieldError("spec.source.chart.name", fmt.Errorf("%w: a chart of a repository needs its name", manifest.ErrInvalid)))
	case src.Chart != nil && src.Chart.Repo != "" && src.Chart.Version == "":
		errs = append(errs, spec.FieldError("spec.source.chart.version", fmt.Errorf("%w: a chart of a repository needs a version or a semver range (the lock records the exact one)", manifest.ErrInvalid)))
	case src.Kustomization != nil && src.Kustomization.Path == "":
		errs = append(errs, spec.FieldError("spec.source.kustomization.path", fmt.Errorf("%w: a path is required", manifest.ErrInvalid)))
	case src.Kustomization != nil && c.Spec.StrictHooks:
		errs = append(errs, spec.FieldError("spec.strictHooks", fmt.Errorf("%w: strictHooks applies to chart sources only (a kustomization has no Helm hooks)", manifest.ErrInvalid)))
	}
	if w := c.Spec.Wave; w != nil && (*w < -32768 || *w > 32767) {
		errs = append(errs, spec.FieldError("spec.wave", fmt.Errorf("%w: %d: want -32768..32767", manifest.ErrInvalid, *w)))
	}
	if p := c.Spec.Policies; p != nil {
		for _, f := range []struct{ field, key, v string }{
			{"adoption", inventory.AdoptionPolicy, p.Adoption}, {"delete", inventory.DeletePolicy, p.Delete},
			{"reconcile", inventory.ReconcilePolicy, p.Reconcile}, {"update", inventory.UpdatePolicy, p.Update},
		} {
			if f.v != "" && !slices.Contains(inventory.Allowed[f.key], inventory.PolicyValue(strings.TrimSpace(f.v))) {
				errs = append(errs, spec.FieldError("spec.policies."+f.field, fmt.Errorf("%w: %q is not one of %s", manifest.ErrInvalid, f.v, strings.Join(inventory.Allowed[f.key], ", "))))
			}
		}
	}
	for i, h := range c.Spec.StatusHints {
		path := fmt.Sprintf("spec.statusHints[%d]", i)
		switch {
		case h.Kind == "":
			errs = append(errs, spec.FieldError(path+".kind", fmt.Errorf("%w: a kind is required", manifest.ErrInvalid)))
		case h.Hint == "":
			errs = append(errs, spec.FieldError(path+".hint", fmt.Errorf("%w: a hint is required (has-observed-generation, has-ready-condition, conditions=A;B)", manifest.ErrInvalid)))
		default:
			if err := inventory.ValidateStatusHint(h.Hint); err != nil {
				errs = append(errs, spec.FieldError(path+".hint", fmt.Errorf("%w: %w", manifest.ErrInvalid, err)))
			}
		}
	}
	for i, s := range c.Spec.Scopes {
		path := fmt.Sprintf("spec.scopes[%d]", i)
		switch {
		case s.Kind == "":
			errs = append(errs, spec.FieldError(path+".kind", fmt.Errorf("%w: a kind is required", manifest.ErrInvalid)))
		case s.Scope != v1alpha1.ScopeNamespaced && s.Scope != v1alpha1.ScopeCluster:
			errs = append(errs, spec.FieldError(path+".scope", fmt.Errorf("%w: %q: want Namespaced or Cluster", manifest.ErrInvalid, s.Scope)))
		}
	}
	return manifest.Join(errs)
}

// badPaths returns the field paths of located errors.
func badPaths(errs []error) []string {
	var out []string
	for _, e := range errs {
		var me *manifest.Error
		if errors.As(e, &me) {
			out = append(out, me.Field)
		}
	}
	return out
}

// withoutBad returns a copy of the spec's value without the fields the
// errors name (a list element becomes null), or nil when the errors name
// the spec itself.
func withoutBad(raw any, errs []error) any {
	raw = manifest.DeepCopyValue(raw)
	for _, p := range badPaths(errs) {
		if p == "spec" {
			return nil
		}
		if !strings.HasPrefix(p, "spec.") {
			continue
		}
		removePath(raw, p[len("spec."):])
	}
	return raw
}

// removePath removes the field at a path of check's (a.b[2].c) from v.
func removePath(v any, path string) {
	for path != "" {
		var key string
		idx := -1
		if path[0] == '[' {
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return
			}
			n, err := strconv.Atoi(path[1:end])
			if err != nil {
				return
			}
			idx, path = n, path[end+1:]
		} else {
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			key, path = path[:end], path[end:]
		}
		path = strings.TrimPrefix(path, ".")
		switch t := v.(type) {
		case map[string]any:
			if idx >= 0 {
				return
			}
			if path == "" {
				delete(t, key)
				return
			}
			v = t[key]
		case []any:
			if idx < 0 || idx >= len(t) {
				return
			}
			if path == "" {
				t[idx] = nil
				return
			}
			v = t[idx]
		default:
			return
		}
	}
}

// flatten lists the errors of a joined error.
func flatten(err error) []error {
	if es, ok := err.(manifest.Errors); ok {
		return es
	}
	return []error{err}
}

var jsonType = reflect.TypeOf(apiextensionsv1.JSON{})

// check walks a decoded value against the Go type (manifest.CheckFields):
// unknown fields and wrong kinds of values are errors at their field path,
// wrapping manifest.ErrInvalid; values and other free-form JSON are not
// looked into.
func check(spec *manifest.Object, path string, v any, t reflect.Type) error {
	return manifest.Join(manifest.CheckFields(spec, path, v, t, manifest.FieldCheck{Opaque: []reflect.Type{jsonType}}))
}

// Placement returns the deployment namespace and name: spec.namespace and
// spec.name, defaulting to the Component's own.
func Placement(c *v1alpha1.Component) (namespace, name string) {
	namespace, name = c.Spec.Namespace, c.Spec.Name
	if namespace == "" {
		namespace = c.Namespace
	}
	if name == "" {
		name = c.Name
	}
	return namespace, name
}

// ResolvePath resolves rel against the folder of the spec's file and
// refuses a result outside root, also through symlinks (generators.ErrOutsideRoot),
// one that is neither a folder nor a regular file of at most
// fsroot.MaxFileSize bytes (generators.ErrNotRegular, generators.ErrTooLarge), and one
// that covers the spec's own file (generators.ErrSourceCoversSpec). field names the
// spec field in errors. A folder's content is checked by CheckTree.
func ResolvePath(spec *manifest.Object, field, rel, root string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", spec.FieldError(field, fmt.Errorf("%w: %q is absolute; give a path relative to the spec file", fsroot.ErrOutsideRoot, rel))
	}
	base := "."
	if f := spec.Source.File; f != "" && f != "-" {
		base = filepath.Dir(f)
	}
	p := filepath.Join(base, rel)
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return "", spec.FieldError(field, err)
	}
	defer r.Close()
	if _, err := r.Rel(p); err != nil {
		// Lexically outside: refuse before asking the file system, so
		// the answer does not depend on what exists beyond the root.
		return "", spec.FieldError(field, fmt.Errorf("%w: %s leaves %s (the root; --root sets another)", fsroot.ErrOutsideRoot, rel, r.Dir()))
	}
	fi, err := r.CheckFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", spec.FieldError(field, fmt.Errorf("%w: %s does not exist", manifest.ErrInvalid, p))
	}
	if err != nil {
		return "", spec.FieldError(field, fmt.Errorf("%s: %w", rel, err))
	}
	if f := spec.Source.File; f != "" && f != "-" {
		if own := mustAbs(f); own == mustAbs(p) || (fi.IsDir() && within(own, mustAbs(p))) {
			return "", spec.FieldError(field, fmt.Errorf("%w: %s covers %s, the Component's own file", generators.ErrSourceCoversSpec, rel, f))
		}
	}
	return p, nil
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

func mustAbs(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return abs
}

// CheckTree walks the source folder dir (a chart or a kustomization, as
// ResolvePath returned it) before a loader reads it: every entry must be
// a folder or a regular file of at most fsroot.MaxFileSize bytes inside
// root, symlinks included (generators.ErrOutsideRoot, generators.ErrNotRegular,
// generators.ErrTooLarge), and no folder may lead back to one being walked. The
// error names the file, at the spec's field.
func CheckTree(spec *manifest.Object, field, dir, root string) error {
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return spec.FieldError(field, err)
	}
	defer r.Close()
	var stack []fs.FileInfo
	var visit func(dir string) error
	visit = func(dir string) error {
		fi, err := r.CheckFile(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if !fi.IsDir() {
			return nil
		}
		for _, s := range stack {
			if os.SameFile(s, fi) {
				return fmt.Errorf("%s: %w: it leads back to a folder of the source", dir, fsroot.ErrNotRegular)
			}
		}
		stack = append(stack, fi)
		defer func() { stack = stack[:len(stack)-1] }()
		entries, err := r.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		for _, e := range entries {
			if err := visit(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(dir); err != nil {
		return spec.FieldError(field, err)
	}
	return nil
}

var errNative = fmt.Errorf("%w: charts may not set wavesmith.io annotations; set waves and policies on the Component", manifest.ErrInvalid)
