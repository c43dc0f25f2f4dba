package generators

import (
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// clientGoKubeVersion reads the k8s.io/client-go requirement of go.mod and
// maps it as Helm's Makefile does (v0.37.x is Kubernetes v1.37.0).
func clientGoKubeVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/client-go v0\.(\d+)\.`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/client-go")
	}
	return "v1." + string(m[1]) + ".0"
}

func TestDefaultKubeVersion(t *testing.T) {
	want := clientGoKubeVersion(t)
	if got := DefaultKubeVersion(); got != want {
		t.Errorf("DefaultKubeVersion() = %s, want %s (from k8s.io/client-go in go.mod)", got, want)
	}
	if fallbackKubeVersion != want {
		t.Errorf("fallbackKubeVersion = %s: update it to %s", fallbackKubeVersion, want)
	}
}

func TestKubeVersionOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string
		ok     bool
	}{
		"Release":    {"a release", "v0.37.2", "v1.37.0", true},
		"Prerelease": {"a pre-release", "v0.38.0-alpha.1", "v1.38.0", true},
		"Pseudo":     {"a pseudo-version", "v0.0.0-20260101000000-abcdef", "", false},
		"Empty":      {"a local replacement has no version", "", "", false},
		"Major":      {"not a v0 module", "v1.2.3", "", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := kubeVersionOf(tc.in)
			if diff := cmp.Diff([]any{tc.want, tc.ok}, []any{got, ok}); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
