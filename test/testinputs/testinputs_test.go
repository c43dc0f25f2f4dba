package testinputs

import (
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatalf instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.failed = format }

func TestRequire(t *testing.T) {
	cases := map[string]struct {
		value string
		want  string // a part of the failure; empty: no failure
	}{
		"unset":      {"", "is not set"},
		"not hex":    {"digest", "want the sha256 digest"},
		"too short":  {"0123abcd", "want the sha256 digest"},
		"a digest":   {strings.Repeat("0a", 32), ""},
		"upper case": {strings.Repeat("0A", 32), "want the sha256 digest"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(Env, tc.value)
			r := &recorder{TB: t}
			Require(r)
			if tc.want == "" && r.failed != "" || tc.want != "" && !strings.Contains(r.failed, tc.want) {
				t.Errorf("Require with %s=%q failed with %q, want %q", Env, tc.value, r.failed, tc.want)
			}
		})
	}
}
