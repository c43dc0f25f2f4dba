package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
)

func wave(n int32) *int32 { return &n }

// TestMerge: each field comes from the first layer that sets it, sections
// merge field by field, and a field is named as its layer's user wrote it.
func TestMerge(t *testing.T) {
	flags := Layer{Name: "flags", Spec: v1alpha1.RenderConfigSpec{Platform: "openshift", Flux: &v1alpha1.FluxDelivery{Timeout: "3m"}},
		FieldName: func(p string) string {
			return map[string]string{"platform": "--platform", "flux.timeout": "--flux-timeout"}[p]
		}}
	project := Layer{Name: ".wavesmith.yaml", Dir: "repo", Spec: v1alpha1.RenderConfigSpec{
		Platform: "kubernetes", Wave: wave(2), Inputs: []string{"deploy"}, Output: "out",
		Policies: &v1alpha1.Policies{Update: "ssa-merge"}, Flux: &v1alpha1.FluxDelivery{Source: "GitRepository/x", Timeout: "9m"},
	}}
	defaults := Layer{Name: "env", Spec: v1alpha1.RenderConfigSpec{Namespace: "apps", Wave: wave(7), Policies: &v1alpha1.Policies{Delete: "orphan"}}}
	m := Merge(flags, project, defaults)
	want := v1alpha1.RenderConfigSpec{
		Platform: "openshift", Wave: wave(2), Namespace: "apps", Inputs: []string{filepath.Join("repo", "deploy")}, Output: filepath.Join("repo", "out"),
		Policies: &v1alpha1.Policies{Update: "ssa-merge", Delete: "orphan"},
		Flux:     &v1alpha1.FluxDelivery{Source: "GitRepository/x", Timeout: "3m"},
	}
	if diff := cmp.Diff(want, m.Spec); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	for path, name := range map[string]string{
		"platform": "--platform", "wave": ".wavesmith.yaml: spec.wave", "namespace": "env: spec.namespace",
		"flux.timeout": "--flux-timeout", "flux.source": ".wavesmith.yaml: spec.flux.source",
		"policies.delete": "env: spec.policies.delete", "timeout": "timeout",
	} {
		if got := m.Name(path); got != name {
			t.Errorf("Name(%s) = %q, want %q", path, got, name)
		}
	}
	if project.Spec.Inputs[0] != "deploy" {
		t.Error("Merge changed a layer's own paths")
	}
}

func TestOptions(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   v1alpha1.RenderConfigSpec
		check  func(t *testing.T, m *Merged)
		err    []string
	}{
		"Defaults": {
			reason: "an empty configuration: kubernetes, every dialect (nil), one minute",
			check: func(t *testing.T, m *Merged) {
				o, timeout, err := m.Options()
				if err != nil || o.Platform != generators.Kubernetes || o.Dialects != nil || timeout != DefaultTimeout {
					t.Errorf("%v %v %v %v", o.Platform, o.Dialects, timeout, err)
				}
			},
		},
		"CamelCase": {
			reason: "platform and policy values in any case, as policy values always were",
			spec:   v1alpha1.RenderConfigSpec{Platform: "OpenShift", Policies: &v1alpha1.Policies{Adoption: "IfUnowned"}, Timeout: "90s", Dialects: []string{"none"}},
			check: func(t *testing.T, m *Merged) {
				o, timeout, err := m.Options()
				if err != nil || o.Platform != generators.OpenShift || o.Defaults["wavesmith.io/adoption-policy"] != "if-unowned" || timeout != 90*time.Second || o.Dialects == nil || len(o.Dialects) != 0 {
					t.Errorf("%v %v %v %v %v", o.Platform, o.Defaults, timeout, o.Dialects, err)
				}
			},
		},
		"APIVersions": {
			reason: "OpenShift from the API versions when no platform is set",
			spec:   v1alpha1.RenderConfigSpec{APIVersions: []string{"route.openshift.io/v1"}},
			check: func(t *testing.T, m *Merged) {
				if o, _, _ := m.Options(); o.Platform != generators.OpenShift {
					t.Errorf("platform %v", o.Platform)
				}
			},
		},
		"APIResources": {
			reason: "a kubectl api-resources file, relative to the layer's folder, declares scopes",
			check: func(t *testing.T, _ *Merged) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "api.txt"), []byte("APIVERSION      NAMESPACED   KIND\nkyverno.io/v1   false        ClusterPolicy\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				m := Merge(Layer{Name: "f", Dir: dir, Spec: v1alpha1.RenderConfigSpec{APIResources: "api.txt"}})
				o, _, err := m.Options()
				if err != nil {
					t.Fatal(err)
				}
				if ns, known := o.Scope.Namespaced("kyverno.io", "ClusterPolicy"); !known || ns {
					t.Errorf("ClusterPolicy: namespaced %v known %v, want cluster-scoped", ns, known)
				}
			},
		},
		"BadAPIResources": {
			reason: "a file that is no kubectl api-resources output is an error naming the setting and the line",
			check: func(t *testing.T, _ *Merged) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "api.txt"), []byte("ClusterPolicy false\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				m := Merge(Layer{Name: "f", Dir: dir, Spec: v1alpha1.RenderConfigSpec{APIResources: "api.txt"}, FieldName: func(p string) string { return "--" + p }})
				_, _, err := m.Options()
				if want := "--apiResources: " + filepath.Join(dir, "api.txt") + ":1: not in the format of kubectl api-resources"; err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("got %v, want an error starting with %q", err, want)
				}
			},
		},
		"AllMistakes": {
			reason: "every mistake at once, sorted, each named as its user wrote it",
			spec: v1alpha1.RenderConfigSpec{Platform: "mars", Wave: wave(40000), Timeout: "soon", Dialects: []string{"helm"},
				Policies: &v1alpha1.Policies{Update: "sometimes"}, Output: "yaml", KubeVersion: "2.0"},
			err: []string{`f: spec.dialects: dialect "helm"`, `f: spec.kubeVersion: "2.0"`, `f: spec.output: "yaml" would be a folder`,
				`f: spec.platform: platform "mars"`, `f: spec.policies.update: "sometimes" is not one of ssa-override, replace, ssa-merge, recreate`,
				`f: spec.timeout: "soon"`, "f: spec.wave: 40000: want -32768..32767"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := Merge(Layer{Name: "f", Spec: tc.spec})
			if tc.check != nil {
				tc.check(t, m)
			}
			if tc.err == nil {
				return
			}
			_, _, err := m.Options()
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("%s: want ErrConfig, got %v", tc.reason, err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.err) {
				t.Fatalf("%s: got %d errors:\n%s", tc.reason, len(lines), err)
			}
			for i, w := range tc.err {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("%s: error %d is %q, want it to start with %q", tc.reason, i, lines[i], w)
				}
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	l, err := ReadFile(write("ok.yaml", "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: x}\nspec:\n  inputs: [a]\n  wave: 3\n"))
	if err != nil || l.Dir != dir || *l.Spec.Wave != 3 {
		t.Errorf("%+v %v", l, err)
	}
	if l, err := ReadFile(write("empty.yaml", "\n# a marker only\n")); err != nil || l.Spec.Platform != "" {
		t.Errorf("an empty project file marks a folder: %v", err)
	}
	for name, body := range map[string]string{
		"unknown.yaml": "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nspec:\n  plattform: x\n",
		"kind.yaml":    "apiVersion: v1\nkind: ConfigMap\n",
		"bad.yaml":     "spec: [\n",
	} {
		if _, err := ReadFile(write(name, body)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: want ErrConfig naming the file, got %v", name, err)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	spec := v1alpha1.RenderConfigSpec{Inputs: []string{"../deploy"}, Output: ".", Wave: wave(-2), ArgoCD: &v1alpha1.ArgoCDDelivery{Repo: "https://x"}}
	b := Encode(spec, "tree")
	if strings.Contains(string(b), "creationTimestamp") {
		t.Errorf("encoded with a timestamp:\n%s", b)
	}
	l, err := Parse("rec.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec, l.Spec); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}
