package testkit

import (
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatalf and Skipf instead of
// stopping.
type recorder struct {
	testing.TB
	failed, skipped string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.failed = format }
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = format }

func TestInputs(t *testing.T) {
	cases := map[string]struct {
		value, require string
		want           string // a part of the failure; empty: no failure
	}{
		"unset, by hand":    {"", "", ""},
		"unset, under make": {"", "1", "is not set"},
		"not hex":           {"digest", "", "want the sha256 digest"},
		"too short":         {"0123abcd", "1", "want the sha256 digest"},
		"a digest":          {strings.Repeat("0a", 32), "1", ""},
		"upper case":        {strings.Repeat("0A", 32), "", "want the sha256 digest"},
		"a digest, by hand": {strings.Repeat("0a", 32), "", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(InputsEnv, tc.value)
			t.Setenv(RequireEnv, tc.require)
			r := &recorder{TB: t}
			Inputs(r)
			if tc.want == "" && r.failed != "" || !strings.Contains(r.failed, tc.want) {
				t.Errorf("failure %q, want one containing %q", r.failed, tc.want)
			}
		})
	}
}

func TestMissing(t *testing.T) {
	for _, require := range []string{"", "1"} {
		t.Setenv(RequireEnv, require)
		r := &recorder{TB: t}
		Missing(r, "flux is missing")
		// The recorder does not stop at Fatalf: only the first call counts.
		// Only -short skips, and not when make requires every tool.
		wantSkip := testing.Short() && require == ""
		if failed, skipped := r.failed != "", r.skipped != ""; failed == wantSkip || skipped != wantSkip {
			t.Errorf("%s=%q, -short %v: failed %v skipped %v, want a skip only under -short without it", RequireEnv, require, testing.Short(), failed, skipped)
		}
	}
}

func TestTail(t *testing.T) {
	if got, want := Tail("a\nb\nc", 2), "[1 lines before]\nb\nc"; got != want {
		t.Errorf("Tail = %q, want %q", got, want)
	}
	if got := Tail("a\nb", 5); got != "a\nb" {
		t.Errorf("Tail = %q, want it whole", got)
	}
}
