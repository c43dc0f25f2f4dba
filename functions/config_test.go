package functions

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/render"
)

func wave(n int32) *int32 { return &n }

// TestPrecedence: flags > functionConfig > defaults, from config.Merge.
func TestPrecedence(t *testing.T) {
	flags := func(s v1alpha1.RenderConfigSpec) config.Layer { return config.Layer{Name: "flags", Spec: s} }
	cmFC := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  wave: \"1\"\n  namespace: from-fc\n"
	rcFC := "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: c}\nspec:\n  wave: 1\n  platform: openshift\n"
	for _, tc := range []struct {
		name, fc  string
		above     []config.Layer
		wantWave  string
		wantNS    string
		wantRoute bool
	}{
		{name: "flag over ConfigMap", fc: cmFC, above: []config.Layer{flags(v1alpha1.RenderConfigSpec{Wave: wave(3)})}, wantWave: "3", wantNS: "from-fc"},
		{name: "flag over RenderConfig", fc: rcFC, above: []config.Layer{flags(v1alpha1.RenderConfigSpec{Wave: wave(3), Platform: "kubernetes"})}, wantWave: "3"},
		{name: "no flags: the functionConfig", fc: rcFC, above: []config.Layer{flags(v1alpha1.RenderConfigSpec{})}, wantWave: "1", wantRoute: true},
		{name: "flag namespace over ConfigMap", fc: cmFC, above: []config.Layer{flags(v1alpha1.RenderConfigSpec{Namespace: "from-flag"})}, wantWave: "1", wantNS: "from-flag"},
		{name: "flags without functionConfig", above: []config.Layer{flags(v1alpha1.RenderConfigSpec{Wave: wave(4)})}, wantWave: "4"},
		{name: "defaults", above: []config.Layer{flags(v1alpha1.RenderConfigSpec{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			p := &Processor{Options: render.Options{Generators: builtin.Registry(), Root: root}, Above: tc.above}
			var fc *yaml.RNode
			if tc.fc != "" {
				fc = yaml.MustParse(tc.fc)
			}
			o, err := p.options(fc)
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Defaults[inventory.ApplyOrder]; got != tc.wantWave {
				t.Errorf("wave %q, want %q", got, tc.wantWave)
			}
			if o.Namespace != tc.wantNS {
				t.Errorf("namespace %q, want %q", o.Namespace, tc.wantNS)
			}
			if route := string(o.Platform) == "openshift"; route != tc.wantRoute {
				t.Errorf("platform %v, want openshift: %v", o.Platform, tc.wantRoute)
			}
			if o.Root != root || o.Generators == nil {
				t.Errorf("the base's root and generators are lost: %q %v", o.Root, o.Generators == nil)
			}
		})
	}
}

// TestBelow: the functionConfig wins over the layers below it.
func TestBelow(t *testing.T) {
	cluster := config.Layer{Name: "KUBE_VERSION", Spec: v1alpha1.RenderConfigSpec{KubeVersion: "v1.30.0", Namespace: "from-cluster"}}
	p := &Processor{Options: render.Options{Generators: builtin.Registry(), Root: t.TempDir()}, Above: []config.Layer{{Name: "flags"}}, Below: []config.Layer{cluster}}
	o, err := p.options(yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  kubeVersion: v1.31.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o.KubeVersion != "v1.31.0" || o.Namespace != "from-cluster" {
		t.Errorf("kubeVersion %q (want the functionConfig's v1.31.0), namespace %q (want the cluster's)", o.KubeVersion, o.Namespace)
	}
}

// TestRunPrecedence: the same through Run, on the rendered children.
func TestRunPrecedence(t *testing.T) {
	in := resourceList + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    wave: \"1\"\n"
	var out bytes.Buffer
	err := Run(context.Background(), strings.NewReader(in), &out, render.Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()},
		config.Layer{Name: "flags", Spec: v1alpha1.RenderConfigSpec{Wave: wave(3)}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), `argocd.argoproj.io/sync-wave: "3"`) || strings.Contains(out.String(), `sync-wave: "1"`) {
		t.Errorf("--wave 3 must win over the functionConfig's wave 1:\n%s", out.String())
	}
}

// TestNotForFn: the settings of render that the function cannot honour
// are refused, each named.
func TestNotForFn(t *testing.T) {
	fc := yaml.MustParse("apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: project}\nspec:\n  inputs: [deploy]\n  output: rendered\n  flux: {source: GitRepository/flux-system}\n  wave: 1\n")
	for _, p := range []*Processor{{Options: render.Options{Generators: builtin.Registry()}},
		{Options: render.Options{Generators: builtin.Registry()}, Above: []config.Layer{{Name: "flags"}}}} {
		_, err := p.options(fc)
		if !errors.Is(err, ErrNotForFn) {
			t.Fatalf("want ErrNotForFn, got %v", err)
		}
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Name != "RenderConfig project: spec.inputs" {
			t.Errorf("want the first field named, got %v", err)
		}
		for _, f := range []string{"spec.inputs", "spec.output", "spec.flux"} {
			if !strings.Contains(err.Error(), "RenderConfig project: "+f) {
				t.Errorf("the error does not name %s: %v", f, err)
			}
		}
	}
	out, err := process(t, resourceList+"functionConfig:\n  apiVersion: wavesmith.io/v1alpha1\n  kind: RenderConfig\n  metadata: {name: project}\n  spec: {output: rendered}\n")
	if err == nil || !strings.Contains(out, "spec.output") || !strings.Contains(out, "severity: error") {
		t.Errorf("want an error result naming spec.output, got %v:\n%s", err, out)
	}
}

// TestConfigMapFromSettings: the ConfigMap's keys are the table of
// settings' (config.Settings); every bad key and value is reported at
// once, an unknown key with the known ones.
func TestConfigMapFromSettings(t *testing.T) {
	data := map[string]string{}
	for _, s := range config.Settings {
		if s.Takes(config.ConfigMap) {
			data[s.Key] = map[config.Type]string{config.Int: "2", config.List: "argocd"}[s.Type]
			if data[s.Key] == "" {
				data[s.Key] = "x"
			}
		}
	}
	spec, err := configFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range config.Settings {
		if s.Takes(config.ConfigMap) && s.Get(&spec) == "" {
			t.Errorf("data.%s did not set spec.%s", s.Key, s.Path)
		}
	}
	_, err = configFromData(map[string]string{"wave": "soon", "updatepolicy": "replace", "platform": "openshift"})
	if !errors.Is(err, render.ErrOptions) {
		t.Fatalf("want render.ErrOptions, got %v", err)
	}
	for _, want := range []string{`data.wave: "soon": want an integer`, "data.updatepolicy: unknown key (known: platform, namespace, dialects, kubeVersion, apiVersions, wave, adoptionPolicy, updatePolicy, deletePolicy, reconcilePolicy)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %q", err, want)
		}
	}
}
