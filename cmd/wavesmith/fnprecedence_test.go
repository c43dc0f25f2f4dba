package main

import (
	"strings"
	"testing"
)

// TestFnFlagsOverFunctionConfig: flags win over the functionConfig, as
// every door's precedence says (flags > functionConfig > defaults); the
// functionConfig wins over the defaults.
func TestFnFlagsOverFunctionConfig(t *testing.T) {
	const list = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: config}
  data: {wave: "1"}
items:
- apiVersion: designer.kaoto.io/v1alpha1
  kind: Kaoto
  metadata:
    name: designer
    namespace: demo
    annotations:
      config.kubernetes.io/path: kaoto.yaml
  spec: {}
`
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fn", "--wave", "3"}, `wavesmith.io/apply-order: "3"`},
		{[]string{"fn"}, `wavesmith.io/apply-order: "1"`},
	} {
		code, out, stderr := wavesmith(t, list, tc.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		i := strings.Index(out, "kind: Service")
		if i < 0 {
			t.Fatalf("%v: no Service among the items:\n%s", tc.args, out)
		}
		if svc := out[i:]; !strings.Contains(svc[:strings.Index(svc, "spec:")], tc.want) {
			t.Errorf("%v: the Service lacks %s:\n%s", tc.args, tc.want, svc)
		}
	}
}
