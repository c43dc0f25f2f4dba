package textdiff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"
	want := "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
	if diff := cmp.Diff(want, UnifiedDiff("a", "b", a, b)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if UnifiedDiff("a", "b", a, a) != "" {
		t.Error("equal inputs must give no diff")
	}
	got := Diff(map[string][]byte{"new.yaml": []byte("x\n")}, map[string][]byte{"gone.yaml": []byte("y\n")})
	for _, s := range []string{"--- /dev/null\n+++ b/new.yaml", "--- a/gone.yaml\n+++ /dev/null", "+x", "-y"} {
		if !strings.Contains(got, s) {
			t.Errorf("tree diff lacks %q:\n%s", s, got)
		}
	}
}
