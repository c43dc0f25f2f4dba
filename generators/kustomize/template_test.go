package kustomize

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/golden"
	"github.com/wavesmith/wavesmith/internal/testobj"
	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
	"github.com/wavesmith/wavesmith/manifest"
)

func encode(objs []*manifest.Object) []byte {
	var b bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		manifest.Encode(&b, o.Map)
	}
	return b.Bytes()
}

// TestGoldenTemplated renders the templated fixtures from the Components
// in testdata/*.input.yaml into testdata/*.golden.yaml. Each golden file
// was read when written: the comments in the inputs say what to expect.
func TestGoldenTemplated(t *testing.T) {
	cases := map[string]generators.Options{
		"templated":         {KubeVersion: "v1.33.2", APIVersions: []string{"monitoring.coreos.com/v1/ServiceMonitor"}},
		"templated-minimal": {KubeVersion: "v1.29.4"},
		"templated-suffix":  {},
	}
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	if len(inputs) != len(cases) {
		t.Errorf("testdata has %d inputs, the test knows %d", len(inputs), len(cases))
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			res := generate(t, testobj.Load(t, filepath.Join("testdata", name+".input.yaml")), opts)
			got := encode(res.Objects)
			golden.Assert(t, filepath.Join("testdata", name+".golden.yaml"), got)
		})
	}
}

// TestTemplatedFacts checks, independently of the golden files, the
// points the templated fixtures exist for.
func TestTemplatedFacts(t *testing.T) {
	res := generate(t, testobj.Load(t, filepath.Join("testdata", "templated.input.yaml")),
		generators.Options{KubeVersion: "v1.33.2", APIVersions: []string{"monitoring.coreos.com/v1/ServiceMonitor"}})
	byKey, _ := keyed(res.Objects)
	cm := byKey["ConfigMap/web/store-storefront-settings"]
	if cm == nil {
		t.Fatalf("no ConfigMap store-storefront-settings in the web namespace; got %v", keysOf(byKey))
	}
	data := cm["data"].(map[string]any)
	want := map[string]any{
		"greeting":   "Hello from store in web", // tpl of a value, with the placement
		"kubernetes": "1.33",                    // kubernetesVersion
		"features":   "search,recommendations",  // spec values over the defaults
		"missing":    "default",                 // dig for a key that may be missing
		"cache-ttl":  "60s",                     // fromYaml(toYaml)
	}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("data.%s = %v, want %v", k, data[k], v)
		}
	}
	for _, k := range []string{"Ingress.networking.k8s.io/web/store-storefront", "ServiceMonitor.monitoring.coreos.com/web/store-storefront"} {
		if byKey[k] == nil {
			t.Errorf("%s is missing (ingress.enabled, apiResources)", k)
		}
	}
	suffix := generate(t, testobj.Load(t, filepath.Join("testdata", "templated-suffix.input.yaml")), generators.Options{})
	byKey, _ = keyed(suffix.Objects)
	rule := byKey["PrometheusRule.monitoring.coreos.com/batch/jobs-worker"]
	if rule == nil {
		t.Fatalf("no PrometheusRule; got %v", keysOf(byKey))
	}
	r := rule["spec"].(map[string]any)["groups"].([]any)[0].(map[string]any)["rules"].([]any)[0].(map[string]any)
	if s := r["annotations"].(map[string]any)["summary"]; s != "Worker {{ $labels.pod }} uses {{ $value }}% CPU" {
		t.Errorf("{{ }} in a [[ ]] template must stay: %v", s)
	}
	if !strings.HasSuffix(r["expr"].(string), "> 80") || r["labels"].(map[string]any)["severity"] != "critical" {
		t.Errorf("config defaults under spec.values: %v", r)
	}
}

func keysOf(m map[string]map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// execTemplate renders one template with the functions of a job.
func execTemplate(t *testing.T, j *job, text string, data any) (string, error) {
	t.Helper()
	set := template.New("").Option("missingkey=error")
	b := tmplsandbox.New(t.Context(), tmplsandbox.Default)
	fm, err := j.funcs(set, b)
	if err != nil {
		t.Fatal(err)
	}
	set.Funcs(fm)
	if _, err := set.New("t").Parse(text); err != nil {
		t.Fatal(err)
	}
	b.Instrument(set)
	w := b.File()
	err = set.ExecuteTemplate(w, "t", data)
	return string(w.Bytes()), err
}

func TestFuncs(t *testing.T) {
	spec := newSpec(fixtures, "shop", nil)
	j := &job{spec: spec, namespace: "ns", name: "rel", opts: generators.Options{KubeVersion: "v1.31.4", APIVersions: []string{"example.com/v1/Widget", "example.com/v1"}}}
	cases := map[string]struct {
		reason string
		text   string
		data   any
		want   string
		err    error
	}{
		"Placement":      {"namespace and name are the placement", `{{ namespace }}/{{ name }}`, nil, "ns/rel", nil},
		"KubeVersion":    {"kubernetesVersion is a version.Info", `{{ kubernetesVersion.GitVersion }} {{ kubernetesVersion.Major }}.{{ kubernetesVersion.Minor }}`, nil, "v1.31.4 1.31", nil},
		"ToYaml":         {"toYaml drops the final newline", `{{ toYaml . }}`, map[string]any{"b": 1, "a": []any{"x"}}, "a:\n- x\nb: 1", nil},
		"FromYamlError":  {"fromYaml reports errors in the map", `{{ (fromYaml "a: [").Error | contains "yaml" }}`, nil, "true", nil},
		"FromYamlArray":  {"fromYamlArray", `{{ index (fromYamlArray "[a, b]") 1 }}`, nil, "b", nil},
		"FromJson":       {"fromJson", `{{ (fromJson "{\"a\": 2}").a }}`, nil, "2", nil},
		"FromJsonArray":  {"fromJsonArray", `{{ len (fromJsonArray "[1,2,3]") }}`, nil, "3", nil},
		"MustFromYaml":   {"mustFromYaml fails", `{{ mustFromYaml "a: [" }}`, nil, "", errAny},
		"Lookup":         {"lookup finds nothing", `{{ len (lookup "v1" "Secret" "ns" "x") }}`, nil, "0", nil},
		"Required":       {"required passes values through", `{{ required "x" "v" }}`, nil, "v", nil},
		"RequiredNil":    {"required refuses nil", `{{ required "x is required" .x }}`, map[string]any{"x": nil}, "", ErrRequired},
		"RequiredEmpty":  {"required refuses empty strings", `{{ required "x is required" "" }}`, nil, "", ErrRequired},
		"Include":        {"include renders a define", `{{ define "d" }}[{{ . }}]{{ end }}{{ include "d" "v" | upper }}`, nil, "[V]", nil},
		"IncludeLoop":    {"include stops endless recursion", `{{ define "d" }}{{ include "d" . }}{{ end }}{{ include "d" . }}`, nil, "", errAny},
		"Tpl":            {"tpl renders text with data and defines", `{{ define "d" }}D{{ end }}{{ tpl "{{ .a }}-{{ include \"d\" . }}-{{ name }}" . }}`, map[string]any{"a": "A"}, "A-D-rel", nil},
		"TplNil":         {"tpl drops <no value>", `{{ tpl "[{{ .x }}]" . }}`, map[string]any{"x": nil}, "[]", nil},
		"TplMissingKey":  {"a missing key in tpl is an error too", `{{ tpl "[{{ .nope }}]" . }}`, map[string]any{}, "", errAny},
		"MissingKey":     {"a missing key is an error", `{{ .a.nope }}`, map[string]any{"a": map[string]any{}}, "", errAny},
		"Dig":            {"dig reads a key that may be missing", `{{ dig "a" "nope" "fallback" . }}`, map[string]any{"a": map[string]any{}}, "fallback", nil},
		"APIResources":   {"apiResources lists the API versions", `{{ range apiResources }}{{ if eq .GroupVersion "example.com/v1" }}{{ range .APIResources }}{{ .Kind }}:{{ .Name }}{{ end }}{{ end }}{{ end }}`, nil, "Widget:widgets", nil},
		"Printf":         {"printf is text/template's", `{{ printf "%05d|%-4s|%.2f|%[1]x|%%" 42 "a" 3.14159 }}`, nil, "00042|a   |3.14|2a|%", nil},
		"SharedDict":     {"a dict may be shared (no cycle)", `{{ $a := dict }}{{ $b := dict "x" $a "y" $a }}{{ $_ := set $b "z" $a }}{{ len $b }}`, nil, "3", nil},
		"SetCycle":       {"set refuses a dict that would contain itself", `{{ $a := dict }}{{ $b := dict "x" $a }}{{ $_ := set $a "b" $b }}`, nil, "", ErrBudget},
		"MergeCycle":     {"merge refuses a result that contains itself", `{{ $a := dict }}{{ $_ := merge $a (dict "x" (dict "y" $a)) }}`, nil, "", ErrBudget},
		"KeyCost":        {"key generations count by cost: 50 ECDSA keys fit", `{{ range until 50 }}{{ $_ := genPrivateKey "ecdsa" }}{{ end }}`, nil, "", nil},
		"KeyCostOver":    {"key generations count by cost: 51 ECDSA keys do not", `{{ range until 51 }}{{ $_ := genPrivateKey "ecdsa" }}{{ end }}`, nil, "", ErrBudget},
		"Sprig":          {"sprig is there", `{{ list 3 1 2 | sortAlpha | join "," }} {{ "abc" | b64enc }}`, nil, "1,2,3 YWJj", nil},
		"DefaultVersion": {"Helm's default API versions are listed", `{{ range apiResources }}{{ if eq .GroupVersion "apps/v1" }}yes{{ end }}{{ end }}`, nil, "yes", nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := execTemplate(t, j, tc.text, tc.data)
			switch {
			case tc.err == errAny && err == nil:
				t.Fatalf("%s: want an error, got %q", tc.reason, got)
			case tc.err == nil && err != nil:
				t.Fatalf("%s: %v", tc.reason, err)
			case tc.err != nil && tc.err != errAny && !errors.Is(err, tc.err):
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.err, err)
			}
			if tc.err == nil && got != tc.want {
				t.Errorf("%s: got %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

var errAny = errors.New("any error")

// TestNoEnvironment: no template function reads the environment or the
// network (env, expandenv, getHostByName are gone, as in Helm), and the
// date functions that would use the machine's time zone use UTC.
func TestNoEnvironment(t *testing.T) {
	for _, f := range []string{"env", "expandenv", "getHostByName"} {
		if _, ok := static()[f]; ok {
			t.Errorf("%s must not be a template function", f)
		}
	}
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.FixedZone("XST", 5*3600)
	j := &job{spec: newSpec(fixtures, "shop", nil)}
	for text, want := range map[string]string{
		`{{ toDate "2006-01-02 15:04" "2024-03-01 10:00" | date "15:04 MST" }}`: "10:00 UTC",
		`{{ toDate "2006-01-02 15:04" "2024-03-01 23:00" | htmlDate }}`:         "2024-03-01",
		`{{ now | date "MST" }}`:                                "UTC",
		`{{ (mustToDate "2006-01-02" "2024-03-01").Location }}`: "UTC",
	} {
		got, err := execTemplate(t, j, text, nil)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", text, got, err, want)
		}
	}
}

// TestTemplatingOptIn: files are templates only in a folder with
// .component-config.yaml or when the Component sets
// spec.source.kustomization.template; template: false turns a
// component-operator-runtime folder into a plain one.
func TestTemplatingOptIn(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  owner: \"{{ name }}\"\n"
	cases := map[string]struct {
		reason   string
		config   bool
		template any // nil: unset
		want     string
	}{
		"Plain":         {"a plain folder renders as it is", false, nil, "{{ name }}"},
		"OptIn":         {"template: true makes the files templates", false, true, "demo"},
		"Config":        {".component-config.yaml makes them templates", true, nil, "demo"},
		"ConfigOptOut":  {"template: false keeps them as they are, config or not", true, false, "{{ name }}"},
		"PlainExplicit": {"template: false on a plain folder", false, false, "{{ name }}"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{"app/cm.yaml": cm}
			if tc.config {
				files["app/.component-config.yaml"] = "values: {}\n"
			}
			for p, s := range files {
				if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			spec := newSpec(root, "app", nil)
			if tc.template != nil {
				spec.Map["spec"].(map[string]any)["source"].(map[string]any)["kustomization"].(map[string]any)["template"] = tc.template
			}
			res := generate(t, spec, generators.Options{Root: root})
			if len(res.Objects) != 1 {
				t.Fatalf("%s: want one object, got %d", tc.reason, len(res.Objects))
			}
			if got := res.Objects[0].Map["data"].(map[string]any)["owner"]; got != tc.want {
				t.Errorf("%s: data.owner = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestAPIResources(t *testing.T) {
	got := apiResources([]string{"v1", "apps/v1/Deployment", "apps/v1", "v1/Pod", "apps/v1/DaemonSet"})
	want := []*metav1.APIResourceList{
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "daemonsets", Group: "apps", Version: "v1", Kind: "DaemonSet"},
			{Name: "deployments", Group: "apps", Version: "v1", Kind: "Deployment"},
		}},
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Version: "v1", Kind: "Pod"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestBinaryFilesAreNotTemplates: with every file a template (here by
// spec.source.kustomization.template), files that are not UTF-8 are
// copied as they are.
func TestBinaryFilesAreNotTemplates(t *testing.T) {
	root := t.TempDir()
	logo := []byte{0x89, 'P', 'N', 'G', 0xff, '{', '{', 0xfe}
	for p, b := range map[string][]byte{
		"app/kustomization.yaml": []byte("configMapGenerator:\n- name: {{ name }}-assets\n  files: [logo.png]\n  options: {disableNameSuffixHash: true}\n"),
		"app/logo.png":           logo,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := generate(t, templatedSpec(root, "app", nil), generators.Options{Root: root})
	if len(res.Objects) != 1 || res.Objects[0].Name() != "demo-assets" {
		t.Fatalf("got %v", res.Objects)
	}
	got := res.Objects[0].Map["binaryData"].(map[string]any)["logo.png"]
	if want := base64.StdEncoding.EncodeToString(logo); got != want {
		t.Errorf("binaryData %v, want %v", got, want)
	}
}
