package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/generators"
)

// version is set with -ldflags "-X main.version=..." (make build, make
// install and make release do, from hack/version.sh or git describe).
var version = ""

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "wavesmith",
		Short: "Render Kaoto and Component specs into GitOps-ready manifests",
		Long: `wavesmith turns Kaoto and Component specs into fully labelled Kubernetes
manifests with wave and policy annotations that Argo CD and Flux understand.
The output is plain, deterministic YAML: review it, diff it, commit it.

Exit codes of every command: 0 success; 1 bad input (nothing written), a
stale tree (check) or differences (diff); 2 a usage error, and for diff, as
for kubectl diff, any error.

Objects of other kinds pass through, gaining the recommended labels and the
wave and policy annotations.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			err := fmt.Errorf("%w %q", errUnknownCommand, args[0])
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				err = fmt.Errorf("%w: did you mean %s?", err, strings.Join(s, " or "))
			}
			return usageError{cmd: c.CommandPath(), err: err}
		}
		return nil
	}
	root.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	root.SuggestionsMinimumDistance = 2 // "did you mean" for a mistyped command
	root.Version = versionString()      // --version: the version alone; 'wavesmith version' says more
	root.SetVersionTemplate("wavesmith {{.Version}}\n")
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

// errUnknownCommand: the first argument names no command.
var errUnknownCommand = errors.New("unknown command")

func newVersionCommand() *cobra.Command {
	var format, output string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the versions of wavesmith and of the libraries it renders with",
		Long: `Version prints wavesmith's version (from the module's build information, or
-ldflags), the versions of the Helm SDK, kustomize and kyaml, and the
Kubernetes libraries it is built with, and the Kubernetes version charts and
templates see when no --kube-version is given.`,
		Example: `  wavesmith version
  wavesmith version --format json | jq -r .defaultKubeVersion`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
			if c.Flags().Changed("output") { // the deprecated spelling of --format
				if c.Flags().Changed("format") && output != format {
					return usage(fmt.Errorf("--format %q and -o %q disagree: give --format alone", format, output))
				}
				format = output
				fmt.Fprintln(c.ErrOrStderr(), "warning: version -o is deprecated: use --format (as render --format)")
			}
			v := versions()
			switch format {
			case "text":
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
			return usage(fmt.Errorf("--format %q: want text or json", format))
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text or json (as render --format)")
	c.Flags().StringVarP(&output, "output", "o", "", "text or json")
	// Hidden, and said deprecated on stderr by RunE (cobra's MarkDeprecated
	// would print it on standard output, into the JSON).
	_ = c.Flags().MarkHidden("output")
	complete(c, "format", "text", "json")
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
	if bi, ok := debug.ReadBuildInfo(); ok {
		return versionFrom(bi)
	}
	return "dev"
}

// versionFrom reads the version from build information: the module's
// version (go install ...@v1.2.3, or the pseudo-version the go command
// stamps), else a pseudo-version made from the VCS settings
// (v0.0.0-<commit time UTC>-<12 hex of the revision>, +dirty when the
// tree had changes), else "dev" (a build without VCS information:
// -buildvcs=false, or a git worktree, which the go command does not
// stamp; make passes the version with -ldflags instead).
func versionFrom(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	stamp := "00010101000000"
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
		stamp = t.UTC().Format("20060102150405")
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "v0.0.0-" + stamp + "-" + rev
	if modified {
		v += "+dirty"
	}
	return v
}

func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{cmd: c.CommandPath(), err: fmt.Errorf("unexpected argument %q", args[0])}
	}
	return nil
}
