package helm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestChartSize: the files of a chart may hold maxChartSize bytes in all,
// subcharts included; beyond, the Component fails with ErrBudget naming
// the chart before Helm's loader reads anything (the files here are
// sparse: Helm would fail to parse them).
func TestChartSize(t *testing.T) {
	const file = 15 << 20
	for _, extra := range []int64{0, 1} {
		t.Run(fmt.Sprint(extra), func(t *testing.T) {
			repo := t.TempDir()
			chart := filepath.Join(repo, "chart")
			write := func(p string, size int64) {
				full := filepath.Join(chart, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				f, err := os.Create(full)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Truncate(size); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			chartYAML := "apiVersion: v2\nname: big\nversion: 0.1.0\n"
			if err := os.MkdirAll(chart, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte(chartYAML), 0o644); err != nil {
				t.Fatal(err)
			}
			left := int64(maxChartSize) - int64(len(chartYAML)) + extra
			for i := 0; left > 0; i++ {
				n := min(left, file)
				write(fmt.Sprintf("charts/sub/templates/t%d.yaml", i), n)
				left -= n
			}
			err := checkChartSize(chart, repo)
			if got, want := errors.Is(err, ErrBudget), extra > 0; got != want {
				t.Fatalf("%d bytes over: ErrBudget %v, want %v (%v)", extra, got, want, err)
			}
			if extra == 0 {
				return
			}
			objs, err := manifest.Decode(filepath.Join(repo, "c.yaml"), []byte("apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: c, namespace: ns}\nspec:\n  source: {chart: {path: chart}}\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Generator{}.Generate(context.Background(), objs[0], generators.Options{Root: repo})
			var merr *manifest.Error
			if !errors.Is(err, ErrBudget) || !errors.As(err, &merr) || merr.Field != chartField || !strings.Contains(merr.Object, "Component") || !strings.Contains(err.Error(), chart) {
				t.Errorf("got %v, want ErrBudget at the Component's %s naming %s", err, chartField, chart)
			}
		})
	}
}
