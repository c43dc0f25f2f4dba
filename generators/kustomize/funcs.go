package kustomize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"text/template"
	"time"
	"unicode"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
	"github.com/wavesmith/wavesmith/manifest"
)

var (
	staticOnce  sync.Once
	staticFuncs template.FuncMap
)

// static returns the functions that do not depend on the component:
// the sandbox's (tmplsandbox.Funcs: sprig without env and expandenv,
// Helm's YAML, JSON and TOML helpers, print*) without getHostByName (a
// render must not depend on the network), the ones that read the
// machine's time zone in UTC instead, and the must* YAML and JSON
// helpers and required that component-operator-runtime adds.
func static() template.FuncMap {
	staticOnce.Do(func() {
		f := tmplsandbox.Funcs()
		delete(f, "getHostByName")
		inZone := f["dateInZone"].(func(string, any, string) string)
		for k, v := range map[string]any{
			"now":      func() time.Time { return time.Now().UTC() },
			"date":     func(layout string, date any) string { return inZone(layout, date, "UTC") },
			"htmlDate": func(date any) string { return inZone("2006-01-02", date, "UTC") },
			"toDate": func(layout, s string) time.Time {
				t, _ := time.ParseInLocation(layout, s, time.UTC)
				return t
			},
			"mustToDate":        func(layout, s string) (time.Time, error) { return time.ParseInLocation(layout, s, time.UTC) },
			"mustToYaml":        mustToYAML,
			"mustFromYaml":      mustFromYAML,
			"mustFromYamlArray": mustFromYAMLArray,
			"mustFromJson":      mustFromJSON,
			"mustFromJsonArray": mustFromJSONArray,
			"required":          required,
		} {
			f[k] = v
		}
		staticFuncs = f
	})
	return staticFuncs
}

// funcs returns the function map for one rendering: the static functions
// plus the helpers that know the placement, the target cluster and the
// template set (include, tpl), all guarded by the budget.
func (j *job) funcs(set *template.Template, b *tmplsandbox.Budget) (template.FuncMap, error) {
	kubeVersion := j.opts.KubeVersion
	if kubeVersion == "" {
		kubeVersion = generators.DefaultKubeVersion()
	}
	parsed, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return nil, &manifest.Error{File: j.spec.Source.File, Object: j.spec.Key().String(), Ref: j.spec.Ref(),
			Err: fmt.Errorf("%w: kube version %q: %v", manifest.ErrInvalid, kubeVersion, err)}
	}
	kv := *parsed
	s := static()
	f := make(template.FuncMap, len(s)+8)
	for k, v := range s {
		f[k] = v
	}
	ns, name := j.namespace, j.name
	f["namespace"] = func() string { return ns }
	f["name"] = func() string { return name }
	f["kubernetesVersion"] = func() *version.Info {
		return &version.Info{Major: kv.Major, Minor: kv.Minor, GitVersion: kv.Version}
	}
	var resources []*metav1.APIResourceList
	f["apiResources"] = func() []*metav1.APIResourceList {
		if resources == nil {
			resources = apiResources(append(append([]string(nil), chartutil.DefaultVersionSet...), j.opts.APIVersions...))
		}
		return resources
	}
	// lookup sees no cluster: it finds nothing, as in helm template.
	f["lookup"] = func(apiVersion, kind, namespace, name string) map[string]any { return map[string]any{} }
	// include and tpl render into bounded buffers; the templates they
	// run count their nesting (see tmplsandbox.Budget.Instrument).
	b.Nested(f, set, func(out []byte) []byte { return bytes.ReplaceAll(out, noValue, nil) })
	b.Guard(f)
	return f, nil
}

// apiResources turns helm-style API versions ("v1", "apps/v1",
// "apps/v1/Deployment") into sorted resource lists. Resource names are
// guessed from the kinds; scope and verbs are unknown.
func apiResources(versions []string) []*metav1.APIResourceList {
	kinds := map[string]map[string]bool{}
	for _, s := range versions {
		gv, kind := s, ""
		if i := strings.LastIndexByte(s, '/'); i > 0 && i < len(s)-1 && unicode.IsUpper(rune(s[i+1])) {
			gv, kind = s[:i], s[i+1:]
		}
		if kinds[gv] == nil {
			kinds[gv] = map[string]bool{}
		}
		if kind != "" {
			kinds[gv][kind] = true
		}
	}
	gvs := make([]string, 0, len(kinds))
	for gv := range kinds {
		gvs = append(gvs, gv)
	}
	sort.Strings(gvs)
	out := make([]*metav1.APIResourceList, 0, len(gvs))
	for _, gv := range gvs {
		l := &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{}}
		parsed, _ := schema.ParseGroupVersion(gv)
		ks := make([]string, 0, len(kinds[gv]))
		for k := range kinds[gv] {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			plural, _ := meta.UnsafeGuessKindToResource(parsed.WithKind(k))
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: plural.Resource, Group: parsed.Group, Version: parsed.Version, Kind: k})
		}
		out = append(out, l)
	}
	return out
}

// required fails when v is nil or the empty string.
func required(msg string, v any) (any, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: %s", ErrRequired, msg)
	}
	if s, ok := v.(string); ok && s == "" {
		return nil, fmt.Errorf("%w: %s", ErrRequired, msg)
	}
	return v, nil
}

func mustToYAML(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

func mustFromYAML(s string) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func mustFromYAMLArray(s string) ([]any, error) {
	var a []any
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		return nil, err
	}
	return a, nil
}

func mustFromJSON(s string) (map[string]any, error) {
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func mustFromJSONArray(s string) ([]any, error) {
	var a []any
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, err
	}
	return a, nil
}
