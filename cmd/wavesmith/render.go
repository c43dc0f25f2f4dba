package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/functions"
	"github.com/wavesmith/wavesmith/internal/argocdplugin"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/internal/textdiff"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

const exitCodesHelp = `

Exit codes: 0 success; 1 bad input (nothing is written, nothing is printed
on standard output); 2 a usage error (an unknown flag, a bad setting).`

const checkExitCodesHelp = `

Exit codes: 0 DIR is up to date; 1 DIR is stale (the diff is on standard
output), or bad input; 2 a usage error (an unknown flag, a bad setting).`

func newRenderCommand() *cobra.Command {
	var f renderFlags
	var t treeFlags
	var out, format string
	c := &cobra.Command{
		Use:   "render [PATH|-]...",
		Short: "Render specs into a YAML stream or a GitOps tree",
		Long: `Render reads Kaoto and Component specs and any other Kubernetes objects from
files, folders (recursively: *.yaml, *.yml, *.json; a .wavesmithignore in a
folder lists, in gitignore syntax, what to leave out) or standard input
("-"), and writes every object with the recommended labels and the wave and
policy annotations of Argo CD and Flux. Without PATH it reads the project
file ` + config.ProjectFile + ` (inputs, output and every setting) of the
current folder or of the nearest folder above it, up to the root, as git
finds .git; else it reads the current folder (never / nor the home folder:
name them to render them).

Without -o, or with -o -, it writes one YAML stream on standard output (or,
with --format json, one JSON v1 List): what an Argo CD config management
plugin must print. With -o DIR it writes a GitOps tree: a folder per spec
(<namespace>/<kind>-<name>/), _objects/ for the rest, each with a
kustomization.yaml, and ` + outtree.RecordFile + `, the record of how the tree was
rendered (check reuses it; it also marks DIR as output, never input). The
tree is written only where it changed: each changed file replaced whole,
files that no longer belong removed, the others untouched; a failed render
leaves the old tree, a killed one the old tree, the new one, or a tree check
refuses until the next render finishes it. The last tree rendered into each
folder is kept in a cache (WAVESMITH_CACHE_DIR, default the user cache
folder; "off" for none), reused only when every input, setting and file the
specs read is unchanged.

With --flux the tree also holds _flux/: one Flux Kustomization per wave
(_flux/wave-<n>.yaml, applying _flux/wave-<n>/), chained with dependsOn, wait
and prune, for a Flux Kustomization to apply. Objects that move to another
wave leave a handoff stub in their old wave, so that Flux does not prune
them before the new wave adopts them; render reads the previous tree at DIR
to find them.

With --argocd the tree also holds _argocd/: an Argo CD Application for the
tree, or, when Components depend on each other, an app of apps whose child
Applications (one per spec folder) are ordered by sync waves. Both need the
tree's path inside the repository: by default DIR relative to its git
repository, else --tree-path.

Settings come from, highest first: flags; Argo CD's parameters
(ARGOCD_APP_PARAMETERS), then its env entries (ARGOCD_ENV_*); the project
file; Argo CD's description of the cluster (ARGOCD_APP_NAMESPACE,
KUBE_VERSION, KUBE_API_VERSIONS); defaults.

Bad input is reported as "file:line: Kind/namespace/name: field: message"
and nothing is written. An input without objects is an error: an empty
render would make a pruning GitOps engine delete everything.` + exitCodesHelp,
		Example: `  # Render the specs of a folder to standard output
  wavesmith render deploy/

  # Render for OpenShift (Routes instead of Ingresses) into a tree
  wavesmith render deploy/ --platform openshift -o rendered/

  # Put everything in wave 1 unless an object or spec says otherwise
  wavesmith render deploy/ --wave 1 --update-policy ssa-merge

  # A tree for Flux: Kustomizations per wave reading GitRepository flux-system
  wavesmith render deploy/ -o rendered/ --flux --flux-source GitRepository/flux-system

  # Argo CD Applications reading the committed tree
  wavesmith render deploy/ -o rendered/ --argocd --argocd-repo https://git.example.com/platform.git

  # The stream as JSON, for jq
  wavesmith render deploy/ --format json | jq '.items[].metadata.name'

  # From standard input
  cat kaoto.yaml | wavesmith render -`,
		RunE: func(c *cobra.Command, args []string) error {
			usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
			if c.Flags().Changed("output") && out == "" {
				return usage(errors.New("-o is empty (an unset shell variable?): give a folder, or - for standard output"))
			}
			s, err := f.setup(c, args, &t, nil)
			if err != nil {
				return err
			}
			defer s.close()
			if err := t.check(c, s); err != nil {
				return err
			}
			plugin := argocdplugin.Active(os.Getenv)
			if c.Flags().Changed("output") {
				s.merged.Spec.Output = out
			} else if o := s.merged.Spec.Output; o != "" && o != "-" {
				s.outputFromFile = true
			}
			out := s.merged.Spec.Output
			if plugin && out != "" && out != "-" {
				name := "-o"
				if s.outputFromFile {
					name = s.merged.Name("output")
				}
				return usage(fmt.Errorf("%s: under Argo CD (%s is set) objects always go to standard output: no output folder", name, argocdplugin.EnvAppName))
			}
			if err := checkFormat(c, format, out); err != nil {
				return err
			}
			if (out == "" || out == "-") && (s.merged.Spec.Flux != nil || s.merged.Spec.ArgoCD != nil) {
				return usage(fmt.Errorf("--flux and --argocd write a tree: give -o DIR"))
			}
			if out == "" || out == "-" {
				res, err := f.render(c, s)
				if err != nil {
					return err
				}
				if plugin && len(res.Items) == 0 {
					return fmt.Errorf("%w: the render holds no object; under Argo CD an empty render would prune every object of the application", errEmptyRender)
				}
				f.printWarnings(c, res)
				return writeStream(c, res, format)
			}
			// The tree's lock is held from before the previous tree is
			// read (Flux handoffs, the stat record) until the new one is
			// written: another render's update is waited for, never half
			// seen. A render killed while it updated DIR in place left
			// its journal there: Hold finishes it, so that the previous
			// tree is the one that render wrote, and removes what killed
			// renders left beside DIR.
			held, err := outtree.Hold(c.Context(), outputAnchor(s, out), out, f.waiting(c, out))
			if err != nil {
				return err
			}
			t, err := f.renderTree(c, s, out, lockHeld)
			if err == nil {
				f.printCached(c, t)
				err = writeTree(c, held, t)
			}
			if rerr := held.Release(); err == nil && rerr != nil {
				err = fmt.Errorf("%w: %s was written, but: %w", outtree.ErrCleanup, out, rerr)
			}
			if err == nil && !f.quiet {
				fmt.Fprintf(c.ErrOrStderr(), "wrote %s: %d objects from %d specs in %d files\n", out, t.objects, t.specs, t.count)
			}
			return err
		},
	}
	f.bind(c)
	t.bind(c)
	c.Flags().StringVarP(&out, "output", "o", "-", "\"-\" for a stream on standard output, or a folder for a GitOps tree")
	c.Flags().StringVar(&format, "format", "yaml", "format of the stream: yaml (multi-document) or json (a v1 List)")
	complete(c, "format", "yaml", "json")
	return c
}

// waiting says, unless quiet, that the tree at dir is waited for.
func (f *renderFlags) waiting(c *cobra.Command, dir string) func(holder string) {
	return func(holder string) {
		if !f.quiet {
			fmt.Fprintf(c.ErrOrStderr(), "waiting for %s: %s holds it (Ctrl-C stops the wait)\n", dir, holder)
		}
	}
}

// writeTree writes the tree t under the lock held (unless the tree on
// disk holds it already) and stores it in the tree cache.
func writeTree(c *cobra.Command, held *outtree.Held, t *tree) error {
	if t.intact {
		t.store(t.known.Index)
		return held.Leftovers()
	}
	ix, err := outtree.WriteHeld(c.Context(), held, t.files, t.known)
	if err != nil {
		return err
	}
	t.store(ix)
	return nil
}

// checkFormat refuses a stream format the tree does not take, and -o used
// as kubectl's output format.
func checkFormat(c *cobra.Command, format, out string) error {
	usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
	switch format {
	case "yaml", "json":
	default:
		return usage(fmt.Errorf("--format %q: want yaml or json", format))
	}
	if out != "" && out != "-" {
		if err := config.CheckOutput(out); err != nil {
			return usage(fmt.Errorf("-o: %w", err))
		}
		if format != "yaml" {
			return usage(fmt.Errorf("--format %s is for the stream; a tree is YAML files", format))
		}
	}
	return nil
}

// writeStream writes the stream on standard output.
func writeStream(c *cobra.Command, res *render.Result, format string) error {
	w := bufio.NewWriterSize(c.OutOrStdout(), 1<<20)
	var err error
	if format == "json" {
		err = res.WriteJSONList(w)
	} else {
		err = res.WriteStream(w)
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

func newCheckCommand() *cobra.Command {
	var f renderFlags
	var t treeFlags
	var out string
	c := &cobra.Command{
		Use:   "check [PATH|-]... -o DIR",
		Short: "Fail with a diff when a committed tree is stale",
		Long: `Check renders in memory, exactly as render -o DIR would, and compares the
result with DIR file by file. It exits 0 when they are equal, and 1 with a
unified diff on standard output when they are not: the CI render step.

Check reads how DIR was rendered from its record (` + outtree.RecordFile + `): the
inputs and every setting, Flux and Argo CD ones included; flags given to
check win over it. Without -o, the project file's output is the tree.

Settings come from, highest first: flags; Argo CD's parameters and env
entries (under Argo CD only); the project file (without PATH) or --config;
the record of DIR; Argo CD's description of the cluster; defaults.` + checkExitCodesHelp,
		Example: `  # In CI, after the tree was committed by 'wavesmith render deploy/ -o rendered/ --flux'
  wavesmith check -o rendered/

  # The same, naming inputs and settings explicitly
  wavesmith check deploy/ -o rendered/ --flux`,
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("output") && out == "" {
				return usageError{cmd: c.CommandPath(), err: errors.New("-o is empty (an unset shell variable?): give the tree to compare with")}
			}
			dir := out
			s, err := f.setup(c, args, &t, &dir)
			if err != nil {
				return err
			}
			defer s.close()
			if err := t.check(c, s); err != nil {
				return err
			}
			if !s.record && len(args) == 0 && len(s.merged.Spec.Inputs) == 0 {
				return usageError{cmd: c.CommandPath(), err: fmt.Errorf("%s has no %s: name the inputs (wavesmith check PATH... -o %s)", dir, outtree.RecordFile, dir)}
			}
			// renderTree returns holding the tree's lock: a render
			// updating DIR in the meantime is waited for, never half seen.
			t, err := f.renderTree(c, s, dir, lockHere)
			if err != nil {
				return err
			}
			defer func() { _ = t.release() }()
			f.printCached(c, t)
			if t.intact {
				t.store(t.known.Index)
				return nil
			}
			want := t.files
			got, ix, err := outtree.ReadIndexed(dir, want, t.known)
			if err != nil {
				return fmt.Errorf("reading %s: %w", dir, err)
			}
			t.store(ix)
			diff := textdiff.Diff(want, got)
			if diff == "" {
				return nil
			}
			if _, err := fmt.Fprint(c.OutOrStdout(), diff); err != nil {
				return fmt.Errorf("writing the diff: %w", err)
			}
			fmt.Fprintf(c.ErrOrStderr(), "%s is stale: re-render with '%s' and commit the result\n", dir, commandLine(s, dir))
			return silentError{code: exitError}
		},
	}
	f.bind(c)
	t.bind(c)
	c.Flags().StringVarP(&out, "output", "o", "", "the tree to compare with (default: the project file's output)")
	return c
}

func newFnCommand() *cobra.Command {
	f := renderFlags{noProject: true} // the ResourceList is the input; its functionConfig the configuration
	c := &cobra.Command{
		Use:   "fn",
		Short: "Run as a KRM function (kpt, kustomize): ResourceList in, ResourceList out",
		Long: `Fn implements the KRM Functions Specification. It reads a ResourceList on
standard input, renders every spec among its items and writes the
ResourceList on standard output: the items as they were (specs gain only
their inventory and digest annotations), the children a previous run added
replaced by the new ones, each with its own path and index. Problems are
reported as results with severity, resource, field and file; any error
makes the exit code 1.

The functionConfig is a wavesmith.io/v1alpha1 RenderConfig (its inputs,
output, treePath, flux and argocd are refused: the ResourceList is the
function's input and output), or a ConfigMap with the keys ` + configMapKeys() + `.

Settings come from, highest first: flags; the functionConfig; defaults.
No project file is read (--config reads a RenderConfig, under the flags).

Exit codes: 0 no error result; 1 an error result (the ResourceList on
standard output carries it, with the resource, field and file); 2 a usage
error (an unknown flag, a bad setting).`,
		Example: `  # kpt, imperatively
  kpt fn eval pkg/ --exec "wavesmith fn" -- platform=openshift

  # kpt, in a Kptfile pipeline (kpt fn render --allow-exec)
  pipeline:
    mutators:
    - exec: wavesmith fn

  # kustomize (kustomize build --enable-alpha-plugins --enable-exec)
  metadata:
    annotations:
      config.kubernetes.io/function: |
        exec:
          path: wavesmith
          args: [fn]`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f.noProject = true // the ResourceList is the input; its functionConfig the configuration
			s, err := f.setup(c, nil, nil, nil)
			if err != nil {
				return err
			}
			defer s.close()
			ctx, cancel := context.WithTimeout(c.Context(), s.timeout)
			defer cancel()
			if err := functions.Run(ctx, &readHint{r: c.InOrStdin()}, c.OutOrStdout(), s.opts, flagLayer(c)); err != nil {
				printFnError(c.ErrOrStderr(), err)
				return silentError{code: exitError}
			}
			return nil
		},
	}
	f.bind(c)
	// fn reports through the ResourceList's results: it prints no
	// warnings nor the files it reads.
	_ = c.Flags().MarkHidden("quiet")
	_ = c.Flags().MarkHidden("verbose")
	return c
}

// configMapKeys lists the keys of the KRM function's ConfigMap
// (config.Settings).
func configMapKeys() string {
	var keys []string
	for _, s := range config.Settings {
		if s.Takes(config.ConfigMap) {
			keys = append(keys, s.Key)
		}
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}

func newGraphCommand() *cobra.Command {
	var f renderFlags
	var format string
	c := &cobra.Command{
		Use:   "graph [PATH|-]...",
		Short: "Draw specs, waves, objects and dependencies (Mermaid or DOT)",
		Long: `Graph renders like render and prints a picture of the result instead: one box
per wave holding its objects, an edge from each spec to its children, and an
edge from each Component to the Components it depends on.`,
		Example: `  # Mermaid, for a README or a pull request
  wavesmith graph deploy/

  # Graphviz
  wavesmith graph deploy/ --format dot | dot -Tsvg > waves.svg`,
		RunE: func(c *cobra.Command, args []string) error {
			s, err := f.setup(c, args, nil, nil)
			if err != nil {
				return err
			}
			defer s.close()
			res, err := f.render(c, s)
			if err != nil {
				return err
			}
			g, err := res.Graph(format)
			if err != nil {
				return usageError{cmd: c.CommandPath(), err: err}
			}
			_, err = fmt.Fprint(c.OutOrStdout(), g)
			return err
		},
	}
	f.bind(c)
	c.Flags().StringVar(&format, "format", "mermaid", "mermaid or dot")
	complete(c, "format", "mermaid", "dot")
	return c
}

// errEmptyRender: under Argo CD, a render without objects.
var errEmptyRender = errors.New("empty render")

// outputAnchor is the folder a tree written at out, and its parents, may
// not leave through a symlink: the root for an output a file set, or one
// inside the root; else (an -o outside the root, the caller's choice) the
// git repository enclosing it, else its nearest existing parent folder.
func outputAnchor(s *setup, out string) string {
	if _, err := s.root.Rel(out); err == nil || s.outputFromFile {
		return s.root.Dir()
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return ""
	}
	if repo, found := load.FindRepository(filepath.Dir(abs)); found {
		return repo
	}
	d := filepath.Dir(abs) // the nearest folder that exists
	for {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			return d
		}
		d = filepath.Dir(d)
	}
}

// printFnError writes the function's error on stderr, one line per
// result: a line holding control characters (an object name with a
// terminal escape, a file name with a newline) is printed quoted, so that
// no input can forge a line or drive a terminal.
func printFnError(w io.Writer, err error) {
	var results framework.Results
	if !errors.As(err, &results) {
		fmt.Fprintln(w, manifest.Quote(err.Error()))
		return
	}
	for _, r := range results {
		fmt.Fprintln(w, manifest.Quote(r.String()))
	}
}
