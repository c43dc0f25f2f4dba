package render

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestReportCapped: thousands of bad names give the first
// manifest.MaxReported errors, sorted, and one summary by kind; the same
// report whatever the order of the inputs, every error reachable.
func TestReportCapped(t *testing.T) {
	const n = 2_000
	objs := func(reverse bool) []*manifest.Object {
		var out []*manifest.Object
		for i := range n {
			j := i
			if reverse {
				j = n - 1 - i
			}
			o := manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("Bad_%04d", j), "namespace": "ns"}})
			o.Source = manifest.Source{File: fmt.Sprintf("f%04d.yaml", j), Line: 1}
			out = append(out, o)
		}
		return out
	}
	var reports []string
	for _, reverse := range []bool{false, true} {
		_, err := Render(context.Background(), objs(reverse), Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry(), Namespace: "ns"})
		var es manifest.Errors
		if !errors.As(err, &es) {
			t.Fatalf("want manifest.Errors, got %T: %v", err, err)
		}
		if len(es) != manifest.MaxReported+1 {
			t.Fatalf("%d errors listed, want %d", len(es), manifest.MaxReported+1)
		}
		if !strings.HasPrefix(es[0].Error(), "f0000.yaml:") {
			t.Errorf("first error %q, want the first file's", es[0])
		}
		var o manifest.Omitted
		if !errors.As(es[len(es)-1], &o) || len(o) != n-manifest.MaxReported {
			t.Fatalf("last error %v, want a summary of %d errors", es[len(es)-1], n-manifest.MaxReported)
		}
		if want := "and 1,900 more errors not listed: 1,900 × metadata.name: invalid value: refused by the API server's rules"; es[len(es)-1].Error() != want {
			t.Errorf("summary %q, want %q", es[len(es)-1], want)
		}
		if !errors.Is(err, ErrAPIRules) {
			t.Errorf("errors.Is does not reach the errors")
		}
		reports = append(reports, err.Error())
	}
	if diff := cmp.Diff(reports[0], reports[1]); diff != "" {
		t.Errorf("the report depends on the order of the inputs:\n%s", diff)
	}
}
