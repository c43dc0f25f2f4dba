// Command hostile renders testdata/bad-charts/hostile with one attack as
// the CLI would, prints the error and its peak memory (VmHWM) and exits at
// once, with whatever still runs in the background. TestHostileMemory
// builds it without the race detector.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/helm"
	"github.com/wavesmith/wavesmith/manifest"
)

func main() {
	root := flag.String("root", "", "the repository root")
	attack := flag.String("attack", "none", "the value of attack")
	timeout := flag.Duration("timeout", time.Minute, "the deadline")
	flag.Parse()
	spec := manifest.New(map[string]any{
		"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component",
		"metadata": map[string]any{"name": "rel", "namespace": "apps"},
		"spec": map[string]any{
			"source": map[string]any{"chart": map[string]any{"path": "bad-charts/hostile"}},
			"values": map[string]any{"attack": *attack},
		},
	})
	spec.Source.File = filepath.Join(*root, "testdata", "components.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	_, err := helm.Generator{}.Generate(ctx, spec, generators.Options{Root: *root})
	fmt.Println(err)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			fmt.Println(strings.Join(strings.Fields(l), " "))
		}
	}
	os.Exit(0)
}
