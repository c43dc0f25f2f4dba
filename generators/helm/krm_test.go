package helm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/functions"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// TestInlineValuesInResourceList: a Component given to the KRM function
// (whose items pass through kyaml) reads its spec.values as helm reads
// the same text in a values file.
func TestInlineValuesInResourceList(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	values := "logDenies: yes\nquoted: \"yes\"\nmode: off\non: 1\nlist: [y, \"n\"]\n"
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	helm := testtool.Path(t, "HELM_BIN", "helm")
	out, err := exec.Command(helm, "template", "rel", filepath.Join(root, "testdata", "charts", "yaml11"), "-n", "apps", "-f", file).Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	want := dataOf(t, out, "rel-values")

	indented := "      " + strings.ReplaceAll(strings.TrimSuffix(values, "\n"), "\n", "\n      ")
	rl := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: wavesmith.io/v1alpha1
  kind: Component
  metadata:
    name: rel
    namespace: apps
    annotations:
      internal.config.kubernetes.io/path: ` + filepath.Join(root, "testdata", "components.yaml") + `
  spec:
    source: {chart: {path: charts/yaml11}}
    values:
` + indented + "\n"
	var b bytes.Buffer
	if err := functions.Run(context.Background(), strings.NewReader(rl), &b, render.Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: root}); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if diff := cmp.Diff(want, dataOf(t, b.Bytes(), "rel-values")); diff != "" {
		t.Errorf("-helm template -f values.yaml +KRM function:\n%s", diff)
	}
}

func dataOf(t *testing.T, stream []byte, name string) any {
	t.Helper()
	objs, err := manifest.Decode("out", stream)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Kind() == "ConfigMap" && o.Name() == name {
			return o.Map["data"]
		}
	}
	t.Fatalf("no ConfigMap %s in\n%s", name, stream)
	return nil
}
