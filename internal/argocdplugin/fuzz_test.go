package argocdplugin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/config"
)

// FuzzLayers: the Argo CD parameter parser never panics, decides the same
// way twice, and every mistake, its own or one the configuration finds in
// what it accepted, names the variable or parameter it came from. params
// is ARGOCD_APP_PARAMETERS; the lines of env are the ARGOCD_ENV_ variables
// of Parameters, in order.
func FuzzLayers(f *testing.F) {
	f.Add(`[{"name":"wave","string":"2"},{"name":"dialects","array":["argocd","flux"]}]`, "openshift\nflux\n-3\nalways\nssa-merge\norphan\nonce")
	f.Add(`[{"name":"update-policy","string":"replace"}]`, "\n\n\n\n\n\n")
	f.Add(`[{"name":"wave","map":{"a":"b"}}]`, "")
	f.Add(`[{"name":"colour","string":"red"}] []`, "kubernetes")
	f.Add(`[{"name":"platform","string":" openshift "},{"name":"platform","string":"kubernetes"}]`, "")
	f.Add("", " 7 \n\n99999")
	f.Fuzz(func(t *testing.T, params, env string) {
		vars := map[string]string{EnvAppName: "app", EnvAppParameters: params}
		for i, v := range strings.SplitN(env, "\n", len(Parameters)) {
			vars[EnvVar(Parameters[i].Name)] = v
		}
		getenv := func(k string) string { return vars[k] }
		p1, e1, c1, err1 := Layers(getenv)
		p2, e2, c2, err2 := Layers(getenv)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || !cmp.Equal([]any{p1.Spec, e1.Spec, c1.Spec}, []any{p2.Spec, e2.Spec, c2.Spec}) {
			t.Fatalf("two reads of the same environment differ")
		}
		if err1 != nil {
			if !strings.Contains(err1.Error(), "ARGOCD_") {
				t.Fatalf("an error that names no variable: %v", err1)
			}
			return
		}
		_, _, err := config.Merge(p1, e1, c1).Options(t.TempDir())
		if err != nil && !strings.Contains(err.Error(), "ARGOCD_") {
			t.Fatalf("a bad value accepted by the parser is reported without its source: %v", err)
		}
	})
}
