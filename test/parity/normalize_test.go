package parity

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// The normalisations applied before two outputs are compared. This table
// is the only place they are defined (README.md lists them too, and
// TestREADMEListsNormalisations keeps the two in step). Each one undoes
// something wavesmith documents that it does on purpose; none may hide a
// difference in what a chart or kustomization renders.
var normalisations = []struct{ name, reason string }{
	{"component-spec", "wavesmith prints the rendered Component itself, with its inventory (docs/component.md); the tools have no such object: it is left out of wavesmith's output"},
	{"release-namespace", "helm template and kustomize build leave namespaced objects without a namespace; helm install -n, kubectl apply -n and wavesmith (docs/component.md: namespaced objects get the placement namespace) put them in the release namespace. A namespaced object of the tool's output without one gets it; scope comes from the tool's own CRDs, kustomize's built-in OpenAPI schema (kyaml) and the knownScopes table, never from wavesmith"},
	{"hooks-not-on-install", "helm template prints every hook; wavesmith renders an install and leaves test, rollback and upgrade-only hooks out with a warning (docs/component.md, Charts): hooks of the tool's output whose helm.sh/hook names none of pre-install, post-install, pre-delete and post-delete are dropped (tests are already left out by --skip-tests)"},
	{"wavesmith-annotations", "wavesmith writes its waves and policies as wavesmith.io/* annotations on every object (docs/waves-and-policies.md): those the tool's object does not carry are dropped from wavesmith's"},
	{"engine-annotations", "wavesmith writes the Argo CD and Flux forms of waves and policies (argocd.argoproj.io/*, kustomize.toolkit.fluxcd.io/*; for hooks argocd.argoproj.io/hook and hook-delete-policy): those the tool's object does not carry are dropped from wavesmith's"},
	{"sync-options-merge", "wavesmith appends its Argo CD sync options after the object's own (README: the object's own options come first and win): when the tool's object has argocd.argoproj.io/sync-options, wavesmith's value is cut back to it if it starts with it"},
	{"applier-markers", "wavesmith removes the markers appliers set themselves, argocd.argoproj.io/tracking-id and kustomize.toolkit.fluxcd.io/name|namespace, with a warning (docs/waves-and-policies.md): they are dropped from the tool's objects"},
	{"recommended-labels", "wavesmith gives every object the five app.kubernetes.io/* recommended labels it lacks (name, instance, component, part-of, managed-by; README, Labels): those the tool's object does not carry are dropped from wavesmith's; a label the tool's object has must be equal"},
	{"random-values", "a variation marked random renders a chart that draws random values (randAlphaNum): helm's own output changes from run to run, so only the objects' keys are compared, and wavesmith must render the same bytes twice (README: deterministic output)"},
	{"empty-metadata-maps", "a labels or annotations map left empty by the rules above takes the tool's form back: removed when the tool's object has none, null when the tool's is null (wavesmith had to put its own annotations and labels somewhere)"},
}

// knownScopes gives the scope of kinds whose CRD is neither in the tool's
// output nor in kustomize's built-in schema (true: namespaced). Each
// entry names the project that defines the CRD.
var knownScopes = map[string]bool{
	"kyverno.io/ClusterPolicy": false, // kyverno (charts/kyverno CRDs)
	"kyverno.io/Policy":        true,  // kyverno
	// kyverno, config/crds/policies.kyverno.io of the same module
	"policies.kyverno.io/ValidatingPolicy": false,
	// keda, config/crd/bases of the same module
	"eventing.keda.sh/CloudEventSource":        true,
	"eventing.keda.sh/ClusterCloudEventSource": false,
	"keda.sh/ClusterTriggerAuthentication":     false,
	"keda.sh/ScaledJob":                        true,
	"keda.sh/ScaledObject":                     true,
	"keda.sh/TriggerAuthentication":            true,
}

// obj is one decoded object: the JSON form kubectl, Argo CD and Flux read
// (YAML 1.1 through sigs.k8s.io/yaml), numbers kept as written.
type obj = map[string]any

// decodeStream splits a YAML stream as kubectl does and decodes each
// document; empty documents are skipped.
func decodeStream(data []byte) ([]obj, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []obj
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		m, ok := v.(obj)
		if !ok {
			return nil, fmt.Errorf("document %d is not a mapping", i)
		}
		out = append(out, m)
	}
}

func str(m obj, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(obj)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

func strMap(m obj, path ...string) obj {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(obj)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	mm, _ := cur.(obj)
	return mm
}

func group(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// key names an object as wavesmith's invariants do: group/Kind/namespace/name.
func key(o obj) string {
	return group(str(o, "apiVersion")) + "/" + str(o, "kind") + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
}

// scopes answers whether a kind is namespaced, from the tool's own output
// (its CRDs), kustomize's built-in OpenAPI schema and knownScopes.
type scopes struct {
	crds map[string]bool // group/Kind -> namespaced
}

func newScopes(objs []obj) scopes {
	s := scopes{crds: map[string]bool{}}
	for _, o := range objs {
		if str(o, "kind") == "CustomResourceDefinition" && group(str(o, "apiVersion")) == "apiextensions.k8s.io" {
			s.crds[str(o, "spec", "group")+"/"+str(o, "spec", "names", "kind")] = str(o, "spec", "scope") != "Cluster"
		}
	}
	return s
}

// openapiMu serialises kyaml's OpenAPI schema, a process-wide global that
// is parsed on first use.
var openapiMu sync.Mutex

func (s scopes) namespaced(apiVersion, kind string) (bool, error) {
	gk := group(apiVersion) + "/" + kind
	if n, ok := s.crds[gk]; ok {
		return n, nil
	}
	// A kind keeps its scope across the versions of its group: when the
	// schema lacks this version (apps/v1beta1, autoscaling/v2), ask for
	// the others.
	versions := []string{apiVersion}
	for _, v := range []string{"v1", "v2", "v1beta1", "v1beta2", "v2beta1", "v2beta2"} {
		if g := group(apiVersion); g != "" {
			versions = append(versions, g+"/"+v)
		}
	}
	openapiMu.Lock()
	defer openapiMu.Unlock()
	for _, av := range versions {
		if n, ok := openapi.IsNamespaceScoped(kyaml.TypeMeta{APIVersion: av, Kind: kind}); ok {
			return n, nil
		}
	}
	if n, ok := knownScopes[gk]; ok {
		return n, nil
	}
	return false, fmt.Errorf("the scope of %s (%s) is unknown: its CRD is not in the output and kustomize's schema lacks it; add it to knownScopes in normalize_test.go", kind, apiVersion)
}

// hookRunsOnInstall reports whether a helm hook annotation value names an
// event wavesmith keeps (install, and delete, which engines run or leave
// out by their own annotations); ok is false when the object is no hook.
func hookRunsOnInstall(o obj) (install, ok bool) {
	v, ok := strMap(o, "metadata", "annotations")["helm.sh/hook"].(string)
	if !ok {
		return false, false
	}
	for _, e := range strings.Split(v, ",") {
		switch strings.TrimSpace(e) {
		case "pre-install", "post-install", "pre-delete", "post-delete":
			return true, true
		}
	}
	return false, true
}

var recommendedLabels = []string{
	"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component",
	"app.kubernetes.io/part-of", "app.kubernetes.io/managed-by",
}

var addedAnnotationPrefixes = []string{"wavesmith.io/", "argocd.argoproj.io/", "kustomize.toolkit.fluxcd.io/"}

var applierMarkers = []string{"argocd.argoproj.io/tracking-id", "kustomize.toolkit.fluxcd.io/name", "kustomize.toolkit.fluxcd.io/namespace"}

// normaliseTool applies the rules that concern the tool's output alone
// (release-namespace, hooks-not-on-install, applier-markers) and keys the
// objects. Objects with the same key are returned in dups.
func normaliseTool(objs []obj, kind, namespace string) (byKey map[string]obj, dups []string, err error) {
	sc := newScopes(objs)
	byKey = map[string]obj{}
	var errs []error
	unknown := map[string]bool{}
	for _, o := range objs {
		if kind == "chart" {
			if install, hook := hookRunsOnInstall(o); hook && !install {
				continue
			}
		}
		meta := strMap(o, "metadata")
		if meta == nil {
			errs = append(errs, fmt.Errorf("%s: no metadata", key(o)))
			continue
		}
		if ann := strMap(o, "metadata", "annotations"); ann != nil {
			for _, k := range applierMarkers {
				delete(ann, k)
			}
			if len(ann) == 0 {
				delete(meta, "annotations")
			}
		}
		if str(o, "metadata", "namespace") == "" {
			n, err := sc.namespaced(str(o, "apiVersion"), str(o, "kind"))
			if err != nil {
				if !unknown[err.Error()] {
					errs = append(errs, err)
				}
				unknown[err.Error()] = true
				continue
			}
			if n {
				meta["namespace"] = namespace
			}
		}
		k := key(o)
		if _, dup := byKey[k]; dup {
			dups = append(dups, k)
		}
		byKey[k] = o
	}
	return byKey, dups, errors.Join(errs...)
}

// normaliseWavesmith keys wavesmith's objects, leaves out the rendered
// Component (component-spec) and removes what wavesmith adds where the
// tool's object of the same key lacks it.
func normaliseWavesmith(objs []obj, tool map[string]obj, componentKey string) map[string]obj {
	out := map[string]obj{}
	for _, o := range objs {
		k := key(o)
		if k == componentKey {
			continue
		}
		stripAdditions(o, tool[k])
		out[k] = o
	}
	return out
}

// stripAdditions applies wavesmith-annotations, engine-annotations,
// sync-options-merge, recommended-labels and empty-metadata-maps to o,
// against the tool's object want (nil when the tool has none).
func stripAdditions(o, want obj) {
	meta := strMap(o, "metadata")
	if meta == nil {
		return
	}
	wantAnn := strMap(want, "metadata", "annotations")
	if ann := strMap(o, "metadata", "annotations"); ann != nil {
		for k := range ann {
			if _, kept := wantAnn[k]; kept || !hasAnyPrefix(k, addedAnnotationPrefixes) {
				continue
			}
			delete(ann, k)
		}
		const syncOptions = "argocd.argoproj.io/sync-options"
		if w, ok := wantAnn[syncOptions].(string); ok {
			if g, ok := ann[syncOptions].(string); ok && strings.HasPrefix(g, w+",") {
				ann[syncOptions] = w
			}
		}
		if len(ann) == 0 {
			restoreEmpty(meta, strMap(want, "metadata"), "annotations")
		}
	}
	wantLabels := strMap(want, "metadata", "labels")
	if labels := strMap(o, "metadata", "labels"); labels != nil {
		for _, k := range recommendedLabels {
			if _, kept := wantLabels[k]; !kept {
				delete(labels, k)
			}
		}
		if len(labels) == 0 {
			restoreEmpty(meta, strMap(want, "metadata"), "labels")
		}
	}
}

// restoreEmpty gives meta[field], an empty map, the form the tool's
// metadata has: absent or null.
func restoreEmpty(meta, wantMeta obj, field string) {
	switch v, had := wantMeta[field]; {
	case !had:
		delete(meta, field)
	case v == nil:
		meta[field] = nil
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]obj) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
