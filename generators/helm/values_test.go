package helm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// yaml11Values are values whose reading differs between YAML 1.1 (how
// Helm reads values files) and YAML 1.2: unquoted yes/on/off/y/n are
// booleans there, keys resolve, quoted scalars stay strings.
const yaml11Values = `logDenies: yes
quoted: "yes"
single: 'on'
tagged: !!str off
mode: off
on: 1
010: octal key
list: [y, n, "no", No]
nested:
  enabled: On
  name: plain
`

// componentWithValues is a Component whose spec.values is yaml11Values,
// as a user writes it.
func componentWithValues(chartPath string) string {
	return "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: rel\n  namespace: apps\nspec:\n  source:\n    chart:\n      path: " + chartPath +
		"\n  values:\n    " + strings.ReplaceAll(strings.TrimSuffix(yaml11Values, "\n"), "\n", "\n    ") + "\n"
}

// configMapData returns the data of the ConfigMap named name.
func configMapData(t *testing.T, objs []*manifest.Object, name string) any {
	t.Helper()
	for _, o := range objs {
		if o.Kind() == "ConfigMap" && o.Name() == name {
			return o.Map["data"]
		}
	}
	t.Fatalf("no ConfigMap %s", name)
	return nil
}

// helmWithValuesFile is what helm template makes of the yaml11 chart with
// yaml11Values as a values file.
func helmWithValuesFile(t *testing.T) any {
	t.Helper()
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, []byte(yaml11Values), 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := manifest.Decode("helm", helmTemplate(t, "rel", filepath.Join(root, "testdata", "charts", "yaml11"), "-n", "apps", "-f", file))
	if err != nil {
		t.Fatal(err)
	}
	return configMapData(t, want, "rel-values")
}

// TestInlineValuesReadAsHelm: spec.values read from a file or from stdin
// mean what the same text means to helm as a values file.
func TestInlineValuesReadAsHelm(t *testing.T) {
	want := helmWithValuesFile(t)
	cases := map[string]struct {
		reason    string
		file      string
		chartPath string
	}{
		"File":  {"a spec read from a file", filepath.Join(root, "testdata", "components.yaml"), "charts/yaml11"},
		"Stdin": {"a spec read from stdin resolves paths from the working folder", "-", "testdata/charts/yaml11"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Chdir(root)
			objs, err := manifest.Decode(tc.file, []byte(componentWithValues(tc.chartPath)))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Generator{}.Generate(context.Background(), objs[0], generators.Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, configMapData(t, res.Objects, "rel-values")); diff != "" {
				t.Errorf("%s: -helm template -f values.yaml +wavesmith:\n%s", tc.reason, diff)
			}
		})
	}
}
