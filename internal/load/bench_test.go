//go:build unix

package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/wavesmith/wavesmith/generators/builtin"
)

// benchSpecs writes n Kaoto specs, one file each, across 50 folders (as
// hack/bench lays them out) below a new root, and returns the root.
func benchSpecs(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	for i := range n {
		name, ns := fmt.Sprintf("kaoto-%05d", i), fmt.Sprintf("team-%02d", i%50)
		p := filepath.Join(root, "specs", ns, name+".yaml")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		spec := fmt.Sprintf("apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  image: quay.io/kaotoio/kaoto-app:2.4.0\n", name, ns)
		if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// cpuTime is the process's user and system CPU time, in nanoseconds: a
// loaded machine's wall time says little.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the CPU time per iteration since start.
func reportCPU(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkWalk: listing the inputs of 10,000 spec files (Files: the
// walk alone, no read).
func BenchmarkWalk(b *testing.B) {
	root := benchSpecs(b, 10000)
	b.ReportAllocs()
	start := cpuTime()
	defer reportCPU(b, start)
	for b.Loop() {
		files, err := Files(root, filepath.Join(root, "specs"))
		if err != nil || len(files) != 10000 {
			b.Fatalf("%d files, %v", len(files), err)
		}
	}
}

// BenchmarkReadInputs: listing and reading 10,000 spec files, not
// decoding them.
func BenchmarkReadInputs(b *testing.B) {
	root := benchSpecs(b, 10000)
	reg := builtin.Registry()
	b.ReportAllocs()
	start := cpuTime()
	defer reportCPU(b, start)
	for b.Loop() {
		if _, err := ReadInputs(context.Background(), root, reg, []string{filepath.Join(root, "specs")}, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
