package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/manifest"
)

// pluginEnv lists every variable the Argo CD plugin mode reads, so that
// each case starts from a clean environment.
var pluginEnv = []string{
	"ARGOCD_APP_NAME", "ARGOCD_APP_NAMESPACE", "ARGOCD_APP_PARAMETERS", "ARGOCD_APP_SOURCE_PATH",
	"KUBE_VERSION", "KUBE_API_VERSIONS",
	"ARGOCD_ENV_PLATFORM", "ARGOCD_ENV_DIALECTS", "ARGOCD_ENV_WAVE", "ARGOCD_ENV_ADOPTION_POLICY",
	"ARGOCD_ENV_UPDATE_POLICY", "ARGOCD_ENV_DELETE_POLICY", "ARGOCD_ENV_RECONCILE_POLICY", "ARGOCD_ENV_TIMEOUT",
}

func setEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, k := range pluginEnv {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// rendered is what a test reads back from a render: the exit code, the
// kinds rendered, the annotations of the Deployment, stderr.
type rendered struct {
	Code        int
	Kinds       []string
	Annotations map[string]string
	Stderr      string
}

// readRender summarizes a render; keys picks the Deployment annotations to
// report ("" when absent).
func readRender(t *testing.T, code int, stdout, stderr string, keys []string) rendered {
	t.Helper()
	r := rendered{Code: code, Stderr: stderr}
	if code != exitOK {
		if stdout != "" {
			t.Errorf("exit %d with output on stdout:\n%s", code, stdout)
		}
		return r
	}
	objs, err := manifest.Decode("stdout", []byte(stdout))
	if err != nil {
		t.Fatalf("stdout is not YAML: %v\n%s", err, stdout)
	}
	for _, o := range objs {
		r.Kinds = append(r.Kinds, o.Kind())
		if o.Kind() != "Deployment" || len(keys) == 0 {
			continue
		}
		md, _ := o.Map["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		r.Annotations = map[string]string{}
		for _, k := range keys {
			s, _ := ann[k].(string)
			r.Annotations[k] = s
		}
	}
	sort.Strings(r.Kinds)
	return r
}

// kaotoSpec is a Kaoto with an ingress: a Service, a Deployment, and an
// Ingress or a Route.
const kaotoSpec = "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: designer, namespace: demo}\nspec:\n  ingress: {}\n"

var (
	ingressKinds = []string{"Deployment", "Ingress", "Kaoto", "Service"}
	routeKinds   = []string{"Deployment", "Kaoto", "Route", "Service"}
)

func TestArgoCDParameters(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "kaoto.yaml")
	if err := os.WriteFile(spec, []byte(kaotoSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	const (
		update  = "wavesmith.io/update-policy"
		del     = "wavesmith.io/delete-policy"
		adopt   = "wavesmith.io/adoption-policy"
		recon   = "wavesmith.io/reconcile-policy"
		wave    = "argocd.argoproj.io/sync-wave"
		fluxSSA = "kustomize.toolkit.fluxcd.io/ssa"
	)
	keys := []string{update, del, adopt, recon, wave, fluxSSA}
	defaults := map[string]string{update: "ssa-override", del: "delete", adopt: "if-unowned", recon: "on-object-change", wave: "0", fluxSSA: ""}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range defaults {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ok := func(kinds []string, ann map[string]string) rendered {
		return rendered{Code: exitOK, Kinds: kinds, Annotations: ann}
	}
	usage := func(msg string) rendered {
		return rendered{Code: exitUsage, Stderr: "error: " + msg + "\nRun 'wavesmith render --help' for usage.\n"}
	}
	const known = "(known: platform, dialects, wave, adoption-policy, update-policy, delete-policy, reconcile-policy, timeout)"

	cases := map[string]struct {
		reason string
		env    map[string]string
		args   []string
		want   rendered
	}{
		"Defaults": {
			reason: "no Argo CD environment: built-in defaults",
			want:   ok(ingressKinds, defaults),
		},
		"EnvPlatform": {
			reason: "ARGOCD_ENV_PLATFORM",
			env:    map[string]string{"ARGOCD_ENV_PLATFORM": "openshift"},
			want:   ok(routeKinds, defaults),
		},
		"ParameterPlatform": {
			reason: "a string parameter",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"platform","string":"openshift"}]`},
			want:   ok(routeKinds, defaults),
		},
		"ParameterBeatsEnv": {
			reason: "ARGOCD_APP_PARAMETERS wins over ARGOCD_ENV_*",
			env: map[string]string{
				"ARGOCD_ENV_PLATFORM": "openshift", "ARGOCD_ENV_UPDATE_POLICY": "replace",
				"ARGOCD_APP_PARAMETERS": `[{"name":"platform","string":"kubernetes"},{"name":"update-policy","string":"ssa-merge"}]`,
			},
			want: ok(ingressKinds, with(update, "ssa-merge", fluxSSA, "Merge")),
		},
		"FlagBeatsParameter": {
			reason: "an explicit flag wins over everything",
			env: map[string]string{
				"ARGOCD_ENV_WAVE":       "2",
				"ARGOCD_APP_PARAMETERS": `[{"name":"platform","string":"openshift"},{"name":"wave","string":"3"}]`,
			},
			args: []string{"--platform", "kubernetes", "--wave", "4"},
			want: ok(ingressKinds, with(wave, "4")),
		},
		"EnvBeatsAPIVersions": {
			reason: "ARGOCD_ENV_PLATFORM wins over the platform KUBE_API_VERSIONS implies",
			env:    map[string]string{"KUBE_API_VERSIONS": "v1,apps/v1,route.openshift.io/v1", "ARGOCD_ENV_PLATFORM": "kubernetes"},
			want:   ok(ingressKinds, defaults),
		},
		"EnvWaveAndPolicies": {
			reason: "every ARGOCD_ENV_ variable",
			env: map[string]string{
				"ARGOCD_ENV_WAVE": "-2", "ARGOCD_ENV_ADOPTION_POLICY": "always", "ARGOCD_ENV_UPDATE_POLICY": "recreate",
				"ARGOCD_ENV_DELETE_POLICY": "orphan", "ARGOCD_ENV_RECONCILE_POLICY": "on-object-or-component-change",
			},
			want: ok(ingressKinds, with(wave, "-2", adopt, "always", update, "recreate", del, "orphan", recon, "on-object-or-component-change")),
		},
		"ParameterWaveAndPolicies": {
			reason: "every parameter",
			env: map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"wave","string":"7"},{"name":"adoption-policy","string":"never"},` +
				`{"name":"update-policy","string":"ssa-merge"},{"name":"delete-policy","string":"orphan-on-delete"},{"name":"reconcile-policy","string":"once"}]`},
			want: ok(ingressKinds, with(wave, "7", adopt, "never", update, "ssa-merge", del, "orphan-on-delete", recon, "once", fluxSSA, "IfNotPresent")),
		},
		"DialectsArray": {
			reason: "dialects may be an array parameter",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"dialects","array":["argocd"]},{"name":"update-policy","string":"ssa-merge"}]`},
			want:   ok(ingressKinds, with(update, "ssa-merge")),
		},
		"DialectsEnv": {
			reason: "ARGOCD_ENV_DIALECTS=flux: no Argo CD annotations",
			env:    map[string]string{"ARGOCD_ENV_DIALECTS": "flux", "ARGOCD_ENV_UPDATE_POLICY": "ssa-merge"},
			want:   ok(ingressKinds, with(update, "ssa-merge", wave, "", fluxSSA, "Merge")),
		},
		"EmptyIsUnset": {
			reason: "Argo CD passes empty values too: they fall through to the next source",
			env: map[string]string{
				"ARGOCD_ENV_WAVE": "5", "ARGOCD_ENV_PLATFORM": "",
				"ARGOCD_APP_PARAMETERS": `[{"name":"wave","string":""},{"name":"platform"}]`,
			},
			want: ok(ingressKinds, with(wave, "5")),
		},
		"NullParameters": {
			reason: "Argo CD sends null when the Application sets no parameters",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": "null", "ARGOCD_ENV_PLATFORM": "openshift"},
			want:   ok(routeKinds, defaults),
		},
		"NoParameters": {
			reason: "an empty array",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": "[]"},
			want:   ok(ingressKinds, defaults),
		},
		"UnknownJSONField": {
			reason: "fields a later Argo CD may add are ignored",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"platform","string":"openshift","origin":"ui"}]`},
			want:   ok(routeKinds, defaults),
		},
		"TrailingData": {
			reason: "data after the array",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[] []`},
			want:   usage("ARGOCD_APP_PARAMETERS: malformed JSON: data after the array"),
		},
		"MalformedJSON": {
			reason: "ARGOCD_APP_PARAMETERS that is not JSON",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":`},
			want:   usage("ARGOCD_APP_PARAMETERS: malformed JSON (want an array of {name, string|array|map}): unexpected EOF"),
		},
		"NotAnArray": {
			reason: "a single object is not the array Argo CD sends",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `{"name":"wave","string":"1"}`},
			want:   usage("ARGOCD_APP_PARAMETERS: malformed JSON (want an array of {name, string|array|map}): got a JSON object"),
		},
		"UnknownParameter": {
			reason: "a parameter wavesmith does not know",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"plattform","string":"openshift"}]`},
			want:   usage(`ARGOCD_APP_PARAMETERS: unknown parameter "plattform" ` + known),
		},
		"NoName": {
			reason: "an entry without name",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"string":"openshift"}]`},
			want:   usage("ARGOCD_APP_PARAMETERS: entry 0 has no name"),
		},
		"Twice": {
			reason: "a parameter given twice",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"wave","string":"1"},{"name":"wave","string":"2"}]`},
			want:   usage(`ARGOCD_APP_PARAMETERS parameter "wave": given twice`),
		},
		"Map": {
			reason: "a map parameter",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"platform","map":{"a":"b"}}]`},
			want:   usage(`ARGOCD_APP_PARAMETERS parameter "platform": want a string, not a map`),
		},
		"Array": {
			reason: "an array for a string parameter",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"wave","array":["1"]}]`},
			want:   usage(`ARGOCD_APP_PARAMETERS parameter "wave": want a string, not an array`),
		},
		"BadParameterValue": {
			reason: "a bad value names the parameter",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"platform","string":"mars"}]`},
			want:   usage(`ARGOCD_APP_PARAMETERS parameter "platform": platform "mars": want kubernetes or openshift`),
		},
		"BadEnvWave": {
			reason: "a bad ARGOCD_ENV_WAVE names the variable",
			env:    map[string]string{"ARGOCD_ENV_WAVE": "soon"},
			want:   usage(`ARGOCD_ENV_WAVE: "soon": want an integer in -32768..32767`),
		},
		"BadEnvWaveRange": {
			reason: "a wave out of range",
			env:    map[string]string{"ARGOCD_ENV_WAVE": "40000"},
			want:   usage(`ARGOCD_ENV_WAVE: 40000: want -32768..32767`),
		},
		"BadEnvPolicy": {
			reason: "a bad ARGOCD_ENV_UPDATE_POLICY names the variable",
			env:    map[string]string{"ARGOCD_ENV_UPDATE_POLICY": "sometimes"},
			want:   usage(`ARGOCD_ENV_UPDATE_POLICY: "sometimes" is not one of ssa-override, replace, ssa-merge, recreate`),
		},
		"BadEnvUnderAFlag": {
			reason: "a bad value is an error even when a flag overrides it: the Application is wrong",
			env:    map[string]string{"ARGOCD_ENV_WAVE": "soon"},
			args:   []string{"--wave", "1"},
			want:   usage(`ARGOCD_ENV_WAVE: "soon": want an integer in -32768..32767`),
		},
		"AppNamePrefix": {
			reason: "under Argo CD, every stderr line names the application",
			env:    map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_ENV_WAVE": "soon"},
			want: rendered{Code: exitUsage, Stderr: `wavesmith (argocd app shop): error: ARGOCD_ENV_WAVE: "soon": want an integer in -32768..32767` + "\n" +
				"wavesmith (argocd app shop): Run 'wavesmith render --help' for usage.\n"},
		},
	}
	cases["OutsideArgoCD"] = struct {
		reason string
		env    map[string]string
		args   []string
		want   rendered
	}{
		reason: "without ARGOCD_APP_NAME the parameters and env entries are no settings",
		env:    map[string]string{"ARGOCD_APP_NAME": "", "ARGOCD_ENV_WAVE": "soon", "ARGOCD_APP_PARAMETERS": `[{"name":"wave","string":"4"}]`},
		want:   rendered{Code: exitOK, Kinds: ingressKinds, Annotations: defaults},
	}
	cases["UnknownEnv"] = struct {
		reason string
		env    map[string]string
		args   []string
		want   rendered
	}{
		reason: "an ARGOCD_ENV_ entry of no parameter is a typo, refused",
		env:    map[string]string{"ARGOCD_ENV_UPDATE_POLICIY": "replace"},
		want:   usage(`invalid Argo CD environment: unknown env entry ARGOCD_ENV_UPDATE_POLICIY (known: ARGOCD_ENV_PLATFORM, `),
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"ARGOCD_APP_NAME": "t", "ARGOCD_APP_SOURCE_PATH": "."}
			for k, v := range tc.env {
				env[k] = v
			}
			setEnv(t, env)
			t.Chdir(dir)
			args := append(append([]string{"render", "-q"}, tc.args...), spec)
			code, stdout, stderr := wavesmith(t, "", args...)
			stderr = strings.ReplaceAll(stderr, "wavesmith (argocd app t): ", "")
			if name == "UnknownEnv" { // the list of known entries is long
				stderr = stderr[:strings.Index(stderr, "(known: ARGOCD_ENV_PLATFORM, ")+len("(known: ARGOCD_ENV_PLATFORM, ")] + "\nRun 'wavesmith render --help' for usage.\n"
			}
			got := readRender(t, code, stdout, stderr, keys)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestArgoCDBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	broken := write("broken.yaml", "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\nspec:\n  imagee: x\n")
	warns := write("warns.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: n\n  annotations:\n    wavesmith.io/reconcile-policy: once\n")

	// stream is the outcome of a run: exit code, whether stdout has
	// objects, and the starts of the stderr lines.
	type stream struct {
		Code   int
		Output bool
		Lines  []string
	}
	cases := map[string]struct {
		reason string
		env    map[string]string
		args   []string
		want   stream
	}{
		"BrokenSpec": {
			reason: "a broken spec: exit 1, nothing on stdout, the error on stderr",
			args:   []string{"render", broken},
			want:   stream{exitError, false, []string{"error: " + broken + ":5: Kaoto.designer.kaoto.io/n/a: spec.imagee"}},
		},
		"BrokenSpecUnderArgoCD": {
			reason: "the same under Argo CD: the error names the application",
			env:    map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "."},
			args:   []string{"render", broken},
			want:   stream{exitError, false, []string{"wavesmith (argocd app shop): error: " + broken + ":5: Kaoto.designer.kaoto.io/n/a: spec.imagee"}},
		},
		"BrokenSpecWithParameters": {
			reason: "good parameters do not hide a broken spec",
			env:    map[string]string{"ARGOCD_APP_PARAMETERS": `[{"name":"platform","string":"openshift"}]`, "ARGOCD_ENV_WAVE": "1"},
			args:   []string{"render", broken},
			want:   stream{exitError, false, []string{"error: " + broken + ":5:"}},
		},
		"WarningUnderArgoCD": {
			reason: "warnings name the application too",
			env:    map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "."},
			args:   []string{"render", warns},
			want:   stream{exitOK, true, []string{"wavesmith (argocd app shop): warning: " + warns + ": ConfigMap/n/a: metadata.annotations[wavesmith.io/reconcile-policy]: argocd cannot express this"}},
		},
		"Warning": {
			reason: "without ARGOCD_APP_NAME, no prefix",
			args:   []string{"render", warns},
			want:   stream{exitOK, true, []string{"warning: " + warns + ": ConfigMap/n/a"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			setEnv(t, tc.env)
			t.Chdir(dir)
			code, stdout, stderr := wavesmith(t, "", tc.args...)
			got := stream{Code: code, Output: stdout != ""}
			// Report the stderr lines the wanted prefixes match, in order.
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			for i, w := range tc.want.Lines {
				line := ""
				if i < len(lines) {
					line = lines[i]
				}
				if strings.HasPrefix(line, w) {
					line = w
				}
				got.Lines = append(got.Lines, line)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s\nstderr:\n%s", tc.reason, diff, stderr)
			}
		})
	}
}

func TestArgoCDDiscover(t *testing.T) {
	kaoto := "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a}\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
	cases := map[string]struct {
		reason string
		files  map[string]string
		want   []string
	}{
		"Kaoto":      {"a Kaoto", map[string]string{"k.yaml": kaoto, "cm.yaml": cm}, []string{"k.yaml"}},
		"Nested":     {"specs in subfolders, in order", map[string]string{"b/k.yml": kaoto, "a/k.yaml": "---\n" + cm + "---\n" + kaoto}, []string{"a/k.yaml", "b/k.yml"}},
		"Component":  {"a Component in JSON", map[string]string{"c.json": `{"apiVersion":"wavesmith.io/v1alpha1","kind":"Component","metadata":{"name":"c"}}`}, []string{"c.json"}},
		"List":       {"a Kaoto in a List", map[string]string{"l.yaml": "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(kaoto, "\n"), "\n", "\n  ") + "\n"}, []string{"l.yaml"}},
		"Marker":     {"the .wavesmith.yaml marker", map[string]string{".wavesmith.yaml": "", "cm.yaml": cm}, []string{".wavesmith.yaml"}},
		"Broken":     {"a spec that does not parse still counts", map[string]string{"k.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: [\n"}, []string{"k.yaml"}},
		"BrokenJSON": {"a broken JSON spec too", map[string]string{"k.json": `{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", `}, []string{"k.json"}},
		"Plain":      {"plain objects", map[string]string{"cm.yaml": cm}, nil},
		"Other":      {"a Component of another group", map[string]string{"c.yaml": "apiVersion: example.com/v1\nkind: Component\nmetadata: {name: a}\n"}, nil},
		"BrokenOther": {"a broken file without a spec",
			map[string]string{"x.yaml": "apiVersion: example.com/v1\nkind: Kaoto\nmetadata: [\n"}, nil},
		"Hidden":   {"hidden folders and files are skipped", map[string]string{".git/k.yaml": kaoto, ".k.yaml": kaoto, "sub/.wavesmith.yaml": ""}, nil},
		"NotYAML":  {"other extensions are skipped", map[string]string{"k.txt": kaoto}, nil},
		"Empty":    {"an empty folder", map[string]string{}, nil},
		"Comments": {"a commented-out spec is not a spec", map[string]string{"k.yaml": "# apiVersion: designer.kaoto.io/v1alpha1\n# kind: Kaoto\n" + cm}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			setEnv(t, nil)
			dir := t.TempDir()
			for f, s := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			code, stdout, stderr := wavesmith(t, "", "discover", ".")
			if code != exitOK || stderr != "" {
				t.Fatalf("%s: exit %d, stderr %q", tc.reason, code, stderr)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
				if l != "" {
					got = append(got, filepath.ToSlash(l))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestArgoCDRoot: the cmp-server's copy of the repository may lack .git;
// ARGOCD_APP_SOURCE_PATH still lets Components use sources beside the
// application folder.
func TestArgoCDRoot(t *testing.T) {
	repo := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(repo, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("base/kustomization.yaml", "resources: [cm.yaml]\n")
	write("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n")
	write("apps/shop/component.yaml", "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: shop, namespace: shop}\nspec:\n  source:\n    kustomization:\n      path: ../../base\n")

	app := filepath.Join(repo, "apps", "shop")
	outside := rendered{Code: exitError, Stderr: "error: component.yaml:7: Component.wavesmith.io/shop/shop: spec.source.kustomization.path: path leaves the repository root: ../../base leaves " + app + " (the root; --root sets another)\n"}
	envError := func(msg string) rendered {
		return rendered{Code: exitUsage, Stderr: "wavesmith (argocd app shop): error: invalid Argo CD environment: " + msg + "\nwavesmith (argocd app shop): Run 'wavesmith render --help' for usage.\n"}
	}
	cases := map[string]struct {
		reason string
		env    map[string]string
		args   []string
		want   rendered
	}{
		"SourcePath": {
			reason: "the root is the application folder less ARGOCD_APP_SOURCE_PATH",
			env:    map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "apps/shop"},
			want:   rendered{Code: exitOK, Kinds: []string{"Component", "ConfigMap"}},
		},
		"SourcePathSlash": {
			reason: "a trailing slash does not matter",
			env:    map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "apps/shop/"},
			want:   rendered{Code: exitOK, Kinds: []string{"Component", "ConfigMap"}},
		},
		"NotArgoCD": {
			reason: "outside Argo CD (and without .git) the sources lie outside the root",
			env:    map[string]string{"ARGOCD_APP_SOURCE_PATH": "apps/shop"},
			want:   outside,
		},
		"NoSourcePath": {
			reason: "under Argo CD without it the checkout is unknown: an error, not a guess",
			env:    map[string]string{"ARGOCD_APP_NAME": "shop"},
			want:   envError("ARGOCD_APP_SOURCE_PATH is not set: the checkout (the root nothing is read outside of) cannot be known"),
		},
		"OtherSourcePath": {
			reason: "a source path the folder does not end in is an error, not a fallback",
			env:    map[string]string{"ARGOCD_APP_NAME": "shop", "ARGOCD_APP_SOURCE_PATH": "apps/other"},
			want:   envError(`ARGOCD_APP_SOURCE_PATH="apps/other", but the working folder ` + app + ` does not end in it`),
		},
		"RootFlag": {
			reason: "--root wins",
			env:    map[string]string{"ARGOCD_APP_SOURCE_PATH": "shop"},
			args:   []string{"--root", repo},
			want:   rendered{Code: exitOK, Kinds: []string{"Component", "ConfigMap"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			setEnv(t, tc.env)
			t.Chdir(app)
			code, stdout, stderr := wavesmith(t, "", append(append([]string{"render", "-q"}, tc.args...), ".")...)
			got := readRender(t, code, stdout, stderr, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestArgoCDHelp(t *testing.T) {
	setEnv(t, nil)
	code, out, _ := wavesmith(t, "", "render", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, s := range []string{"ARGOCD_APP_PARAMETERS", "ARGOCD_ENV_PLATFORM", "ARGOCD_ENV_DIALECTS", "ARGOCD_ENV_WAVE",
		"ARGOCD_ENV_ADOPTION_POLICY", "ARGOCD_ENV_UPDATE_POLICY", "ARGOCD_ENV_DELETE_POLICY", "ARGOCD_ENV_RECONCILE_POLICY",
		"ARGOCD_APP_SOURCE_PATH"} {
		if !strings.Contains(out, s) {
			t.Errorf("render --help does not mention %s", s)
		}
	}
}
