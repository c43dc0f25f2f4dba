package helm

import (
	"fmt"
	"path/filepath"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// maxChartSize bounds the bytes of the files of one chart folder, its
// subcharts included (an archive counts as it lies on disk). Helm's
// loader reads every file of a chart folder into memory and keeps them
// for the whole render, bounding only each file (5 MiB): 240 files under
// that cap took 1.25 GB. 100 MiB is what Helm lets a chart archive unpack
// to (loader.MaxDecompressedChartSize): any chart Helm can package fits.
const maxChartSize = 100 << 20

// maxChartDepth bounds how deep folders nest in a chart (subcharts
// included).
const maxChartDepth = 256

// checkChartSize refuses a chart folder whose files hold more than
// maxChartSize bytes, before Helm's loader reads any of them: the sizes
// are summed from a walk (files .helmignore lists count too). It runs
// after component.CheckTree, which refused what leaves the root, special
// files and symlink loops.
func checkChartSize(dir, root string) error {
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	chart, total := dir, int64(0)
	var visit func(dir string, depth int) error
	visit = func(dir string, depth int) error {
		if depth > maxChartDepth {
			return fmt.Errorf("%w: %s: folders nest more than %d deep in the chart", ErrBudget, dir, maxChartDepth)
		}
		entries, err := r.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			fi, err := r.Stat(p)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if fi.IsDir() {
				if err := visit(p, depth+1); err != nil {
					return err
				}
				continue
			}
			if total += fi.Size(); total > maxChartSize {
				return fmt.Errorf("%w: the files of the chart %s hold more than %d bytes (%d MiB) with %s", ErrBudget, chart, maxChartSize, maxChartSize>>20, p)
			}
		}
		return nil
	}
	return visit(dir, 0)
}
