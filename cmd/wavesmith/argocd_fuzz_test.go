package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzArgoCDSettings: the Argo CD parameter parser never panics, decides
// the same way twice, and what it accepts is sound: only known
// parameters, each with the source it came from (ARGOCD_APP_PARAMETERS
// winning over ARGOCD_ENV_*), each a value the engine accepts. params is
// ARGOCD_APP_PARAMETERS; the lines of env are the ARGOCD_ENV_ variables of
// the parameters, in the order of pluginParameters.
func FuzzArgoCDSettings(f *testing.F) {
	f.Add(`[{"name":"wave","string":"2"},{"name":"dialects","array":["argocd","flux"]}]`, "openshift\nflux\n-3\nalways\nssa-merge\norphan\nonce")
	f.Add(`[{"name":"update-policy","string":"replace"}]`, "\n\n\n\n\n\n")
	f.Add(`[{"name":"wave","map":{"a":"b"}}]`, "")
	f.Add(`[{"name":"colour","string":"red"}] []`, "kubernetes")
	f.Add(`[{"name":"platform","string":" openshift "},{"name":"platform","string":"kubernetes"}]`, "")
	f.Add("", " 7 \n\n99999")
	f.Fuzz(func(t *testing.T, params, env string) {
		vars := map[string]string{envAppParameters: params}
		for i, v := range strings.SplitN(env, "\n", len(pluginParameters)) {
			vars[envVar(pluginParameters[i])] = v
		}
		getenv := func(k string) string { return vars[k] }

		fromParams, perr := parseAppParameters(params)
		again, perr2 := parseAppParameters(params)
		if fmt.Sprint(perr) != fmt.Sprint(perr2) || !cmp.Equal(fromParams, again, cmp.AllowUnexported(setting{})) {
			t.Fatalf("two parses of %q differ", params)
		}
		for p, s := range fromParams {
			if !isPluginParameter(p) || s.value == "" || !strings.HasPrefix(s.source, fmt.Sprintf("%s parameter %q", envAppParameters, p)) {
				t.Fatalf("parameter %q accepted as %+v", p, s)
			}
		}

		settings, err := argocdSettings(getenv)
		if perr != nil && err == nil {
			t.Fatalf("ARGOCD_APP_PARAMETERS %q is refused alone (%v) but accepted with the environment", params, perr)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "ARGOCD_") {
				t.Fatalf("an error that names no variable: %v", err)
			}
			return
		}
		for p, s := range settings {
			if !isPluginParameter(p) {
				t.Fatalf("unknown parameter %q accepted", p)
			}
			if want, ok := fromParams[p]; ok && s != want {
				t.Fatalf("%s: ARGOCD_APP_PARAMETERS gave %+v, the result is %+v", p, want, s)
			}
			if _, ok := fromParams[p]; !ok && s.source != envVar(p) {
				t.Fatalf("%s: source %q, want %s", p, s.source, envVar(p))
			}
			if err := checkSetting(p, s.value); err != nil {
				t.Fatalf("%s=%q accepted, but the engine refuses it: %v", p, s.value, err)
			}
		}
	})
}
