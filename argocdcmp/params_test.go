package argocdcmp

import (
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
