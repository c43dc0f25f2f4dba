package main

import (
	"strings"
	"testing"
)

// TestFnConfigEveryError runs the built binary's KRM function on a
// RenderConfig functionConfig with two faults: both are reported at once,
// as the project file's are (at their line, the known fields listed), not
// the first only with encoding/json's "json:" prefix.
func TestFnConfigEveryError(t *testing.T) {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: designer.kaoto.io/v1alpha1
  kind: Kaoto
  metadata: {name: k, namespace: demo}
functionConfig:
  apiVersion: wavesmith.io/v1alpha1
  kind: RenderConfig
  metadata: {name: c}
  spec:
    platfrom: openshift
    wave: "3"
`
	code, out, stderr := wavesmithBinaryIn(t, in, "fn")
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitError, stderr)
	}
	for _, want := range []string{
		`functionConfig line 5: spec.platfrom: unknown field "platfrom" (known: apiResources, apiVersions, argocd,`,
		"functionConfig line 6: spec.wave: want an integer, got string",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the results lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+stderr, "json:") {
		t.Errorf("encoding/json's prefix leaks:\n%s\n%s", out, stderr)
	}
}
