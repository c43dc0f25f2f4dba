package argocdplugin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrefixWriter(t *testing.T) {
	cases := map[string]struct {
		reason string
		writes []string
		want   string
	}{
		"Lines":   {"each line", []string{"a\nb\n"}, "wavesmith (argocd app app): a\nwavesmith (argocd app app): b\n"},
		"Split":   {"a line in pieces gets one prefix", []string{"err", "or: x\n", "y"}, "wavesmith (argocd app app): error: x\nwavesmith (argocd app app): y"},
		"Empty":   {"empty lines too", []string{"\n\n"}, "wavesmith (argocd app app): \nwavesmith (argocd app app): \n"},
		"Nothing": {"no writes", nil, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			w := Stderr(&b, func(k string) string { return map[string]string{EnvAppName: "app"}[k] })
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestLayersOnlyUnderArgoCD(t *testing.T) {
	vars := map[string]string{EnvVar("wave"): "7", EnvAppParameters: `[{"name":"platform","string":"openshift"}]`, EnvKubeVersion: "1.33.0"}
	getenv := func(k string) string { return vars[k] }
	params, env, cluster, err := Layers(getenv)
	if err != nil || params.Spec.Platform != "" || env.Spec.Wave != nil || cluster.Spec.KubeVersion != "1.33.0" {
		t.Errorf("outside Argo CD: %+v %+v %+v %v, want only the cluster layer", params.Spec, env.Spec, cluster.Spec, err)
	}
	vars[EnvAppName] = "shop"
	params, env, _, err = Layers(getenv)
	if err != nil || params.Spec.Platform != "openshift" || env.Spec.Wave == nil || *env.Spec.Wave != 7 {
		t.Errorf("under Argo CD: %+v %+v %v", params.Spec, env.Spec, err)
	}
}

func TestCheckEnv(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		bad     string
	}{
		{[]string{"ARGOCD_ENV_UPDATE_POLICIY=replace"}, ""}, // outside Argo CD
		{[]string{EnvAppName + "=shop", "ARGOCD_ENV_UPDATE_POLICY=replace", "ARGOCD_APP_REVISION=x"}, ""},
		{[]string{EnvAppName + "=shop", "ARGOCD_ENV_UPDATE_POLICIY=replace"}, "ARGOCD_ENV_UPDATE_POLICIY"},
		{[]string{EnvAppName + "=shop", "ARGOCD_ENV_OUTPUT=out"}, "ARGOCD_ENV_OUTPUT"},
	} {
		err := CheckEnv(tc.environ)
		if tc.bad == "" && err != nil || tc.bad != "" && (!errors.Is(err, ErrEnv) || !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("CheckEnv(%v) = %v, want %q", tc.environ, err, tc.bad)
		}
	}
}

func TestRoot(t *testing.T) {
	base := t.TempDir()
	app := filepath.Join(base, "apps", "shop")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(app)
	cwd, _ := os.Getwd()
	repo := filepath.Dir(filepath.Dir(cwd))
	for _, tc := range []struct {
		env  map[string]string
		want string
		err  bool
	}{
		{map[string]string{EnvSourcePath: "apps/shop"}, "", false}, // outside Argo CD
		{map[string]string{EnvAppName: "a", EnvSourcePath: "apps/shop"}, repo, false},
		{map[string]string{EnvAppName: "a", EnvSourcePath: "apps/shop/"}, repo, false},
		{map[string]string{EnvAppName: "a", EnvSourcePath: "."}, cwd, false},
		{map[string]string{EnvAppName: "a", EnvSourcePath: "apps/other"}, "", true},
		{map[string]string{EnvAppName: "a", EnvSourcePath: "../x"}, "", true},
		{map[string]string{EnvAppName: "a", EnvSourcePath: "/abs"}, "", true},
		{map[string]string{EnvAppName: "a"}, "", true},
	} {
		got, err := Root(func(k string) string { return tc.env[k] }, cwd)
		if got != tc.want || tc.err != errors.Is(err, ErrEnv) {
			t.Errorf("Root(%v) = %q, %v; want %q, error %v", tc.env, got, err, tc.want, tc.err)
		}
	}
}
