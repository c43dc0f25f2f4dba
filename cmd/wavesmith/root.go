package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/generators"
)

// version is set with -ldflags "-X main.version=...".
var version = ""

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "wavesmith",
		Short: "Render Kaoto and Component specs into GitOps-ready manifests",
		Long: `wavesmith turns Kaoto and Component specs into fully labelled Kubernetes
manifests with wave and policy annotations that Argo CD and Flux understand.
The output is plain, deterministic YAML: review it, diff it, commit it.

Exit codes of every command: 0 success; 1 bad input (nothing written), a
stale tree (check) or differences (diff); 2 a usage error.

Objects of other kinds pass through, gaining the recommended labels and the
wave and policy annotations.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError{cmd: c.CommandPath(), err: fmt.Errorf("unknown command %q", args[0])}
		}
		return nil
	}
	root.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{cmd: c.CommandPath(), err: err}
	})
	root.AddCommand(newRenderCommand(), newCheckCommand(), newFnCommand(), newGraphCommand(), newDiffCommand(), newReviewCommand(), newDiscoverCommand(), newVersionCommand())
	root.AddCommand(newFetchCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the versions of wavesmith and of the libraries it renders with",
		Long: `Version prints wavesmith's version (from the module's build information, or
-ldflags), the versions of the Helm SDK, kustomize and kyaml, and the
Kubernetes libraries it is built with, and the Kubernetes version charts and
templates see when no --kube-version is given.`,
		Example: `  wavesmith version
  wavesmith version -o json | jq -r .defaultKubeVersion`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v := versions()
			switch output {
			case "", "text":
				w := c.OutOrStdout()
				fmt.Fprintf(w, "wavesmith %s (%s)\n", v.Wavesmith, v.Go)
				fmt.Fprintf(w, "  helm SDK        %s\n  kustomize api   %s\n  kyaml           %s\n  kubernetes libs %s\n", v.Helm, v.Kustomize, v.KYAML, v.Kubernetes)
				fmt.Fprintf(w, "  default kube version for charts and templates: %s\n", v.DefaultKubeVersion)
				return nil
			case "json":
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			return usageError{cmd: c.CommandPath(), err: fmt.Errorf("-o %q: want text or json", output)}
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	complete(c, "output", "text", "json")
	return c
}

// versionInfo is what 'wavesmith version' reports.
type versionInfo struct {
	Wavesmith          string `json:"wavesmith"`
	Go                 string `json:"go"`
	Helm               string `json:"helm"`
	Kustomize          string `json:"kustomize"`
	KYAML              string `json:"kyaml"`
	Kubernetes         string `json:"kubernetes"`
	DefaultKubeVersion string `json:"defaultKubeVersion"`
}

func versions() versionInfo {
	v := versionInfo{Wavesmith: versionString(), Go: runtime.Version(), DefaultKubeVersion: generators.DefaultKubeVersion()}
	dep := map[string]*string{"helm.sh/helm/v3": &v.Helm, "sigs.k8s.io/kustomize/api": &v.Kustomize,
		"sigs.k8s.io/kustomize/kyaml": &v.KYAML, "k8s.io/client-go": &v.Kubernetes}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if p, ok := dep[m.Path]; ok {
				if m.Replace != nil {
					m = m.Replace
				}
				*p = m.Version
			}
		}
	}
	for _, p := range dep {
		if *p == "" {
			*p = "unknown"
		}
	}
	return v
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{cmd: c.CommandPath(), err: fmt.Errorf("unexpected argument %q", args[0])}
	}
	return nil
}
