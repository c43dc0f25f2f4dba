package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
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
	root.AddCommand(newRenderCommand(), newCheckCommand(), newFnCommand(), newGraphCommand(), newDiscoverCommand(), newVersionCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintln(c.OutOrStdout(), "wavesmith", versionString())
			return nil
		},
	}
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
