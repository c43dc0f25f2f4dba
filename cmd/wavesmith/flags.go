package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/argocdcmp"
	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
	"github.com/wavesmith/wavesmith/tree"
)

// flagFields maps each configuration field (its JSON path in a
// RenderConfig spec) to the flag that sets it.
var flagFields = map[string]string{
	"platform": "platform", "namespace": "namespace", "dialects": "dialects", "kubeVersion": "kube-version",
	"apiVersions": "api-versions", "apiResources": "api-resources", "partOf": "part-of", "wave": "wave", "timeout": "timeout", "output": "output",
	"policies.adoption": "adoption-policy", "policies.update": "update-policy",
	"policies.delete": "delete-policy", "policies.reconcile": "reconcile-policy",
	"treePath": "tree-path", "flux": "flux",
	"flux.name": "flux-name", "flux.namespace": "flux-namespace", "flux.source": "flux-source",
	"flux.interval": "flux-interval", "flux.timeout": "flux-timeout",
	"argocd": "argocd", "argocd.repo": "argocd-repo", "argocd.revision": "argocd-revision", "argocd.name": "argocd-name",
	"argocd.namespace": "argocd-namespace", "argocd.project": "argocd-project",
	"argocd.destinationNamespace": "argocd-dest-namespace",
}

// renderFlags are the settings every rendering command shares.
type renderFlags struct {
	platform, namespace, dialects, kubeVersion, apiVersions, root, partOf string
	apiResources                                                          string
	wave                                                                  int
	adoption, update, delete, reconcile, timeout, configFile              string
	quiet                                                                 bool
	verbose                                                               bool
	// noProject: the command reads no project file unless --config names one.
	noProject bool
}

func (f *renderFlags) bind(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.platform, "platform", "", "kubernetes (Ingress) or openshift (Route); default: openshift when --api-versions lists route.openshift.io/v1, else kubernetes"+argocdHelp("platform"))
	fs.StringVarP(&f.namespace, "namespace", "n", "", "namespace of specs that have none (default: env ARGOCD_APP_NAMESPACE, else \"default\")")
	fs.StringVar(&f.dialects, "dialects", "argocd,flux", "engines whose annotations are written: argocd, flux, or none"+argocdHelp("dialects"))
	fs.StringVar(&f.kubeVersion, "kube-version", "", "Kubernetes version offered to charts and templates (default: env KUBE_VERSION, else the version of the Kubernetes libraries wavesmith is built with; see 'wavesmith version')")
	fs.StringVar(&f.apiVersions, "api-versions", "", "comma-separated API versions of the target cluster (default: env KUBE_API_VERSIONS)")
	fs.StringVar(&f.apiResources, "api-resources", "", "a file holding the output of 'kubectl api-resources' for the target cluster: which kinds are cluster-scoped, for custom resources whose CRD is not in the render (the built-in kinds of Kubernetes and the CRDs among the inputs are known)")
	fs.StringVar(&f.root, "root", "", "folder nothing is read outside of, through symlinks neither: inputs, the project file, the tree record, api-resources, chart and kustomization sources, values files (default: under Argo CD the checkout, the current folder less env ARGOCD_APP_SOURCE_PATH; else the git repository enclosing the first PATH (without PATH: the current folder; for check: DIR), else that folder)")
	fs.StringVar(&f.partOf, "part-of", "", "app.kubernetes.io/part-of for objects without one (default: the owning spec's name)")
	fs.IntVar(&f.wave, "wave", 0, "default apply-order (wave) of objects, -32768..32767"+argocdHelp("wave"))
	fs.StringVar(&f.adoption, "adoption-policy", "", "default adoption-policy: never, if-unowned, always"+argocdHelp("adoption-policy"))
	fs.StringVar(&f.update, "update-policy", "", "default update-policy: replace, ssa-merge, ssa-override, recreate"+argocdHelp("update-policy"))
	fs.StringVar(&f.delete, "delete-policy", "", "default delete-policy: delete, orphan, orphan-on-apply, orphan-on-delete"+argocdHelp("delete-policy"))
	fs.StringVar(&f.reconcile, "reconcile-policy", "", "default reconcile-policy: on-object-change, on-object-or-component-change, once"+argocdHelp("reconcile-policy"))
	fs.StringVar(&f.timeout, "timeout", "", fmt.Sprintf("time a render may take, templates included (default %s)", config.DefaultTimeout)+argocdHelp("timeout"))
	fs.StringVar(&f.configFile, "config", "", "a RenderConfig file to read settings from (default: "+config.ProjectFile+" in the current folder when no PATH is given)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print warnings")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "list the files read and what each spec produced, with timings")
	complete(c, "platform", "kubernetes", "openshift")
	complete(c, "dialects", "argocd,flux", "argocd", "flux", "none")
	complete(c, "adoption-policy", "never", "if-unowned", "always")
	complete(c, "update-policy", "replace", "ssa-merge", "ssa-override", "recreate")
	complete(c, "delete-policy", "delete", "orphan", "orphan-on-apply", "orphan-on-delete")
	complete(c, "reconcile-policy", "on-object-change", "on-object-or-component-change", "once")
}

// complete offers values of an enum flag to shell completion.
func complete(c *cobra.Command, flag string, values ...string) {
	_ = c.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
}

// argocdHelp is the part of a flag's help that names its Argo CD sources.
func argocdHelp(param string) string {
	return fmt.Sprintf(" (Argo CD: parameter %q, else env %s)", param, argocdcmp.EnvVar(param))
}

// flagLayer is the configuration the flags given on the command line set.
func flagLayer(c *cobra.Command, f *renderFlags, t *treeFlags) config.Layer {
	l := config.Layer{Name: "flags", FieldName: func(path string) string {
		if n, ok := flagFields[path]; ok {
			return "--" + n
		}
		return ""
	}}
	s := &l.Spec
	changed := func(name string) bool { fl := c.Flags().Lookup(name); return fl != nil && fl.Changed }
	str := func(name string, dst *string, v string) {
		if changed(name) {
			*dst = v
		}
	}
	str("platform", &s.Platform, f.platform)
	str("namespace", &s.Namespace, f.namespace)
	str("kube-version", &s.KubeVersion, f.kubeVersion)
	str("api-resources", &s.APIResources, f.apiResources)
	str("part-of", &s.PartOf, f.partOf)
	str("timeout", &s.Timeout, f.timeout)
	if changed("api-versions") {
		s.APIVersions = config.SplitList(f.apiVersions)
	}
	if changed("dialects") {
		s.Dialects = []string{f.dialects}
	}
	if changed("wave") {
		w := int32(max(min(f.wave, math.MaxInt32), math.MinInt32)) // Options checks the range
		s.Wave = &w
	}
	p := v1alpha1.Policies{}
	str("adoption-policy", &p.Adoption, f.adoption)
	str("update-policy", &p.Update, f.update)
	str("delete-policy", &p.Delete, f.delete)
	str("reconcile-policy", &p.Reconcile, f.reconcile)
	if p != (v1alpha1.Policies{}) {
		s.Policies = &p
	}
	if t != nil {
		t.layer(c, s)
	}
	return l
}

// setup is what a rendering command works from: the root, the merged
// configuration, the engine options and the inputs.
type setup struct {
	root    *tree.Root // every file is read through it
	merged  *config.Merged
	opts    render.Options
	timeout time.Duration
	inputs  []string
	record  bool // whether settings came from a tree's record
	// output is the tree folder (a render's -o or output setting; check's
	// DIR), "" for the stream; outputFromFile: set by a file, not -o.
	output         string
	outputFromFile bool
}

// close releases the root.
func (s *setup) close() {
	if s != nil && s.root != nil {
		s.root.Close()
	}
}

// setup decides the root first (decideRoot), then merges the layers of
// configuration, highest precedence first: flags, Argo CD parameters,
// Argo CD env entries, the project file (with no PATH, or --config), a
// tree's record (check), Argo CD's description of the cluster. Every
// file is read through the root, and every path a setting holds must lie
// in it. Mistakes are usage errors naming what the user wrote.
//
// check is nil but for the check command: it points to -o, which setup
// completes from the project file's output, and the record of that tree
// is read. The caller closes the setup.
func (f *renderFlags) setup(c *cobra.Command, args []string, t *treeFlags, check *string) (s *setup, err error) {
	usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
	for _, a := range args {
		if a == "" {
			return nil, usage(errors.New("an empty PATH (an unset shell variable?): name a file or folder, \".\" for the current folder, \"-\" for standard input"))
		}
	}
	for _, name := range []string{"root", "config", "api-resources"} {
		if fl := c.Flags().Lookup(name); fl != nil && fl.Changed && fl.Value.String() == "" {
			return nil, usage(fmt.Errorf("--%s is empty (an unset shell variable?)", name))
		}
	}
	if err := argocdcmp.CheckEnv(os.Environ()); err != nil {
		return nil, usage(err)
	}
	params, env, cluster, err := argocdcmp.Layers(os.Getenv)
	if err != nil {
		return nil, usage(err)
	}
	hint := ""
	if check != nil {
		hint = *check
	}
	rootDir, err := f.decideRoot(args, hint)
	if err != nil {
		return nil, usage(err)
	}
	s = &setup{}
	if s.root, err = tree.OpenRoot(rootDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	layers := []config.Layer{flagLayer(c, f, t), params, env}
	switch {
	case f.configFile != "":
		l, err := config.ReadFile(s.root, f.configFile)
		if err != nil {
			return nil, usage(err)
		}
		layers = append(layers, l)
	case len(args) == 0 && !f.noProject:
		l, ok, err := config.Project(s.root, ".")
		if err != nil {
			return nil, usage(err)
		}
		if ok {
			layers = append(layers, l)
		}
	}
	if check != nil {
		if *check == "" && len(args) == 0 {
			if o := config.Merge(layers...).Spec.Output; o != "" && o != "-" {
				if err := s.root.Confine(o); err != nil {
					return nil, usage(fmt.Errorf("%s: %w", config.Merge(layers...).Name("output"), err))
				}
				*check, s.outputFromFile = o, true
			}
		}
		if *check == "" || *check == "-" {
			return nil, usage(fmt.Errorf("-o DIR is required: the tree to compare with"))
		}
		if fi, err := os.Stat(*check); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s does not exist or is not a folder: render the tree first ('wavesmith render PATH... -o %s') and commit it", *check, *check)
		}
		rec := filepath.Join(*check, tree.RecordFile)
		// The record is read through the root when DIR lies in it, else
		// (an -o outside the root, the caller's choice) through DIR.
		recRoot := s.root
		if _, err := s.root.Rel(*check); err != nil {
			if recRoot, err = tree.OpenRoot(*check); err != nil {
				return nil, err
			}
			defer recRoot.Close()
		}
		if _, err := recRoot.Lstat(rec); err == nil || !errors.Is(err, fs.ErrNotExist) {
			l, err := config.ReadFile(recRoot, rec)
			if err != nil {
				return nil, usage(fmt.Errorf("the record of how %s was rendered: %w", *check, err))
			}
			l.Spec.Output = "" // the tree is DIR, wherever the record says
			layers = append(layers, l)
			s.record = true
		}
		s.output = *check
	}
	layers = append(layers, cluster)
	if len(args) > 0 {
		for i := range layers { // PATHs replace the inputs a file names
			layers[i].Spec.Inputs = nil
		}
	}
	s.merged = config.Merge(layers...)
	s.opts, s.timeout, err = s.merged.OptionsIn(s.root)
	if err != nil {
		return nil, usage(err)
	}
	s.opts.Generators = builtin.Registry()
	s.opts.Engines = engines.Dialects()
	s.opts.DiscardObjects = true // the CLI only needs the encoded objects
	s.inputs = args
	if len(s.inputs) == 0 {
		s.inputs = s.merged.Spec.Inputs
	}
	if len(s.inputs) == 0 {
		s.inputs = []string{"."}
	}
	s.opts.Root = rootDir
	return s, nil
}

// decideRoot is the one rule for the root of a render, decided before
// any file is read: --root; under Argo CD the checkout
// (argocdcmp.Root: the working folder less ARGOCD_APP_SOURCE_PATH, an
// error when they disagree); else the git repository enclosing the first
// PATH (without PATH: check's DIR, else the current folder), else that
// folder itself. --config, the project file, the tree record and the
// inputs they name never move it: they are read inside it.
func (f *renderFlags) decideRoot(args []string, hint string) (string, error) {
	if f.root != "" {
		return f.root, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := argocdcmp.Root(os.Getenv, cwd)
	if err != nil || root != "" {
		return root, err
	}
	var first []string
	for _, a := range args {
		if a != "-" {
			first = []string{a}
			break
		}
	}
	if first == nil && hint != "" && hint != "-" {
		first = []string{hint}
	}
	return load.DefaultRoot(first, cwd), nil
}

// render loads the inputs and renders them within the timeout.
func (f *renderFlags) render(c *cobra.Command, s *setup) (*render.Result, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(c.Context(), s.timeout)
	defer cancel()
	objs, err := load.Inputs(ctx, s.opts.Root, s.opts.Generators, s.inputs, c.InOrStdin())
	if err != nil {
		return nil, err
	}
	if f.verbose {
		f.listFiles(c, objs, time.Since(start))
	}
	opts := s.opts
	progress := newProgress(c, f.quiet)
	opts.Progress = progress.update
	res, err := render.Render(ctx, objs, opts)
	progress.done()
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil && err != nil {
		return nil, fmt.Errorf("%w (the render took longer than %s: raise %s, or look for a template that loops)", err, s.timeout, s.merged.Name("timeout"))
	}
	if err != nil {
		return nil, err
	}
	if f.verbose {
		f.listSpecs(c, res, time.Since(start))
	}
	return res, nil
}

func (f *renderFlags) listFiles(c *cobra.Command, objs []*manifest.Object, took time.Duration) {
	count := map[string]int{}
	var files []string
	for _, o := range objs {
		if count[o.Source.File] == 0 {
			files = append(files, o.Source.File)
		}
		count[o.Source.File]++
	}
	sort.Strings(files)
	for _, file := range files {
		fmt.Fprintf(c.ErrOrStderr(), "read %s: %d objects\n", file, count[file])
	}
	fmt.Fprintf(c.ErrOrStderr(), "read %d files in %s\n", len(files), took.Round(time.Millisecond))
}

func (f *renderFlags) listSpecs(c *cobra.Command, res *render.Result, took time.Duration) {
	children := make([]int, len(res.Specs))
	for _, it := range res.Items {
		if it.Role == render.Child {
			children[it.Spec]++
		}
	}
	for i, s := range res.Specs {
		fmt.Fprintf(c.ErrOrStderr(), "rendered %s: %d objects, wave %d, in %s\n", s.Key, children[i], s.Wave, res.Took[i].Round(time.Millisecond))
	}
	fmt.Fprintf(c.ErrOrStderr(), "rendered %d objects from %d specs in %s\n", len(res.Items), len(res.Specs), took.Round(time.Millisecond))
}

func (f *renderFlags) printWarnings(c *cobra.Command, res *render.Result) {
	if f.quiet {
		return
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(c.ErrOrStderr(), "warning: %s\n", w.String())
	}
}

// deliveryError names, in delivery option errors (gitops.OptionError), the
// setting as the user wrote it; they become usage errors.
func deliveryError(c *cobra.Command, m *config.Merged, err error) error {
	var errs []error
	var joined interface{ Unwrap() []error }
	if _, one := err.(*gitops.OptionError); !one && errors.As(err, &joined) {
		errs = joined.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []error
	usage := false
	for _, e := range errs {
		var oe *gitops.OptionError
		if errors.As(e, &oe) {
			usage = true
			out = append(out, fmt.Errorf("%s: %w", m.Name(oe.Field), oe.Err))
			continue
		}
		out = append(out, e)
	}
	if usage {
		return usageError{cmd: c.CommandPath(), err: errors.Join(out...)}
	}
	return err
}

// commandLine is the command that re-renders what s renders into out,
// relative to the current folder: the inputs and every setting that is not
// a default, as flags.
func commandLine(s *setup, out string) string {
	args := []string{"wavesmith", "render"}
	args = append(args, s.inputs...)
	if out != "" && out != "-" {
		args = append(args, "-o", out)
	}
	sp := s.merged.Spec
	flag := func(path, v string) {
		if v != "" {
			args = append(args, "--"+flagFields[path], quoteArg(v))
		}
	}
	flag("platform", sp.Platform)
	flag("namespace", sp.Namespace)
	if sp.Dialects != nil {
		flag("dialects", strings.Join(sp.Dialects, ","))
	}
	flag("kubeVersion", sp.KubeVersion)
	flag("apiVersions", strings.Join(sp.APIVersions, ","))
	flag("apiResources", sp.APIResources)
	flag("partOf", sp.PartOf)
	if sp.Wave != nil {
		flag("wave", strconv.Itoa(int(*sp.Wave)))
	}
	if p := sp.Policies; p != nil {
		flag("policies.adoption", p.Adoption)
		flag("policies.update", p.Update)
		flag("policies.delete", p.Delete)
		flag("policies.reconcile", p.Reconcile)
	}
	flag("timeout", sp.Timeout)
	flag("treePath", sp.TreePath)
	if x := sp.Flux; x != nil {
		args = append(args, "--flux")
		flag("flux.name", x.Name)
		flag("flux.namespace", x.Namespace)
		flag("flux.source", x.Source)
		flag("flux.interval", x.Interval)
		flag("flux.timeout", x.Timeout)
	}
	if x := sp.ArgoCD; x != nil {
		args = append(args, "--argocd")
		flag("argocd.repo", x.Repo)
		flag("argocd.revision", x.Revision)
		flag("argocd.name", x.Name)
		flag("argocd.namespace", x.Namespace)
		flag("argocd.project", x.Project)
		flag("argocd.destinationNamespace", x.DestinationNamespace)
	}
	return strings.Join(args, " ")
}

func quoteArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// changedWithPrefix reports whether a flag starting with prefix was given.
func changedWithPrefix(c *cobra.Command, prefix string) bool {
	found := false
	c.Flags().Visit(func(fl *pflag.Flag) {
		found = found || strings.HasPrefix(fl.Name, prefix)
	})
	return found
}
