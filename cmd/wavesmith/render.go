package main

import (
	"bufio"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/functions"
	"github.com/wavesmith/wavesmith/tree"
)

func newRenderCommand() *cobra.Command {
	var f renderFlags
	var t treeFlags
	var out string
	c := &cobra.Command{
		Use:   "render [PATH|-]...",
		Short: "Render specs into a YAML stream or a GitOps tree",
		Long: `Render reads Kaoto and Component specs and any other Kubernetes objects from
files, folders (recursively: *.yaml, *.yml, *.json) or standard input ("-"),
and writes every object with the recommended labels and the wave and policy
annotations of Argo CD and Flux.

Without -o, or with -o -, it writes one YAML stream on standard output: what
an Argo CD config management plugin must print. With -o DIR it writes a
GitOps tree: a folder per spec (<namespace>/<kind>-<name>/), _objects/ for
the rest, each with a kustomization.yaml. The tree is written aside and
swapped in whole: a failed render leaves the old tree untouched, and files
that no longer belong disappear.

With --flux the tree also holds flux/: one Flux Kustomization per wave
(flux/wave-<n>.yaml, applying flux/wave-<n>/), chained with dependsOn, wait
and prune, for a Flux Kustomization to apply. Objects that move to another
wave leave a handoff stub in their old wave, so that Flux does not prune
them before the new wave adopts them; render reads the previous tree at DIR
to find them.

With --argocd the tree also holds argocd/: an Argo CD Application for the
tree, or, when Components depend on each other, an app of apps whose child
Applications (one per spec folder) are ordered by sync waves. Both need the
tree's path inside the repository: by default DIR relative to its git
repository, else --tree-path.

Bad input is reported as "file:line: Kind/namespace/name: field: message"
and nothing is written. An input without objects is an error: an empty
render would make a pruning GitOps engine delete everything.`,
		Example: `  # Render the specs of a folder to standard output
  wavesmith render deploy/

  # Render for OpenShift (Routes instead of Ingresses) into a tree for Flux
  wavesmith render deploy/ --platform openshift -o rendered/

  # Put everything in wave 1 unless an object or spec says otherwise
  wavesmith render deploy/ --wave 1 --update-policy ssa-merge

  # A tree for Flux: Kustomizations per wave reading GitRepository flux-system
  wavesmith render deploy/ -o rendered/ --flux --flux-source GitRepository/flux-system

  # Argo CD Applications reading the committed tree
  wavesmith render deploy/ -o rendered/ --argocd --argocd-repo https://git.example.com/platform.git

  # From standard input
  cat kaoto.yaml | wavesmith render -`,
		RunE: func(c *cobra.Command, args []string) error {
			res, err := f.render(c, args)
			if err != nil {
				return err
			}
			f.printWarnings(c, res)
			if out == "" || out == "-" {
				if t.flux {
					return usageError{cmd: c.CommandPath(), err: fmt.Errorf("--flux writes a tree: give -o DIR")}
				}
				w := bufio.NewWriterSize(c.OutOrStdout(), 1<<20)
				if err := res.WriteStream(w); err != nil {
					return err
				}
				return w.Flush()
			}
			files, err := t.files(c, res, out)
			if err != nil {
				return err
			}
			if err := tree.Write(out, files); err != nil {
				return err
			}
			fmt.Fprintf(c.ErrOrStderr(), "wrote %s: %d objects from %d specs in %d files\n", out, len(res.Items), len(res.Specs), len(files))
			return nil
		},
	}
	f.bind(c)
	t.bind(c)
	c.Flags().StringVarP(&out, "output", "o", "-", "\"-\" for a YAML stream on standard output, or a folder for a GitOps tree")
	return c
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
unified diff on standard output when they are not: the CI render step.`,
		Example: `  # In CI, after the tree was committed by 'wavesmith render deploy/ -o rendered/'
  wavesmith check deploy/ -o rendered/`,
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" || out == "-" {
				return usageError{cmd: c.CommandPath(), err: fmt.Errorf("-o DIR is required: the tree to compare with")}
			}
			res, err := f.render(c, args)
			if err != nil {
				return err
			}
			f.printWarnings(c, res)
			got, err := tree.Read(out)
			if err != nil {
				return fmt.Errorf("reading %s: %w", out, err)
			}
			want, err := t.files(c, res, out)
			if err != nil {
				return err
			}
			diff := tree.Diff(want, got)
			if diff == "" {
				return nil
			}
			fmt.Fprint(c.OutOrStdout(), diff)
			fmt.Fprintf(c.ErrOrStderr(), "%s is stale: re-render with 'wavesmith render ... -o %s' and commit the result\n", out, out)
			return silentError{code: exitError}
		},
	}
	f.bind(c)
	t.bind(c)
	c.Flags().StringVarP(&out, "output", "o", "", "the tree to compare with (required)")
	return c
}

func newFnCommand() *cobra.Command {
	var f renderFlags
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

The functionConfig is a wavesmith.io/v1alpha1 RenderConfig, or a ConfigMap
with the keys platform, namespace, wave, adoptionPolicy, updatePolicy,
deletePolicy, reconcilePolicy, dialects, kubeVersion and apiVersions.`,
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
			opts, err := f.options(c)
			if err != nil {
				return err
			}
			if err := functions.Run(c.Context(), c.InOrStdin(), c.OutOrStdout(), opts); err != nil {
				fmt.Fprintf(c.ErrOrStderr(), "%v\n", err)
				return silentError{code: exitError}
			}
			return nil
		},
	}
	f.bind(c)
	return c
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
			res, err := f.render(c, args)
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
	return c
}
