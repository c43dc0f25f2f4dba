package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/argocdplugin"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// flagName is the flag of a configuration field (its JSON path in a
// RenderConfig spec), from config.Settings; "" for none.
func flagName(path string) string {
	if path == "output" {
		return "output"
	}
	if s := config.Lookup(path); s != nil {
		return s.Flag
	}
	return ""
}

// renderFlags are the settings every rendering command shares. The flags
// of the settings themselves (config.Settings) hold their values in the
// command's flag set: flagLayer reads those given.
type renderFlags struct {
	root, configFile string
	quiet            bool
	verbose          bool
	// noProject: the command reads no project file unless --config names one.
	noProject bool
}

func (f *renderFlags) bind(c *cobra.Command) {
	bindSettings(c, config.Flags, !f.noProject)
	fs := c.Flags()
	rootHelp := "folder nothing is read outside of, through symlinks neither: inputs, the project file, the tree record, api-resources, chart and kustomization sources, values files (default: under Argo CD the checkout, the current folder less env ARGOCD_APP_SOURCE_PATH; else the git repository enclosing the first PATH (without PATH: the current folder; for check: DIR), else that folder)"
	configHelp := "a RenderConfig file to read settings from (default: the project file " + config.ProjectFile + ", found from the current folder up to the root, when no PATH is given)"
	if f.noProject {
		rootHelp = "folder nothing is read outside of, through symlinks neither: --config, api-resources, chart and kustomization sources, values files (default: the git repository enclosing the current folder, else that folder)"
		configHelp = "a RenderConfig file to read settings from, under the flags (no project file is read)"
	}
	fs.StringVar(&f.root, "root", "", rootHelp)
	fs.StringVar(&f.configFile, "config", "", configHelp)
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print warnings")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "list the project file read (or not), the files read and what each spec produced, with timings")
}

// bindSettings binds a flag for each setting of config.Settings that
// comes through door, its help made from the table; argocd: the help
// names the setting's Argo CD parameter, if any (not for fn, which Argo
// CD never runs).
func bindSettings(c *cobra.Command, door config.Door, argocd bool) {
	for i := range config.Settings {
		s := &config.Settings[i]
		if !s.Takes(door) {
			continue
		}
		help := s.Describe()
		if argocd && s.Takes(config.ArgoCD) {
			help += argocdHelp(s.Param)
		}
		fl := c.Flags().VarPF(&settingValue{s: s}, s.Flag, s.Short, help)
		if s.Type == config.Section {
			fl.NoOptDefVal = "true"
		}
		switch {
		case s.Type == config.List && len(s.Values) > 0:
			complete(c, s.Flag, append([]string{strings.Join(s.Values[:len(s.Values)-1], ",")}, s.Values...)...)
		case len(s.Values) > 0:
			complete(c, s.Flag, s.Values...)
		}
	}
}

// settingValue is the flag of a setting: its value as given, checked
// (an integer, a boolean) when the flag is parsed.
type settingValue struct {
	s *config.Setting
	v string
}

func (v *settingValue) String() string { return v.v }
func (v *settingValue) Type() string {
	if v.s.Type == config.List {
		return "strings"
	}
	return string(v.s.Type)
}
func (v *settingValue) Set(s string) error {
	if err := v.s.Set(&v1alpha1.RenderConfigSpec{}, s); err != nil {
		return err
	}
	v.v = s
	return nil
}

// complete offers values of an enum flag to shell completion.
func complete(c *cobra.Command, flag string, values ...string) {
	_ = c.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
}

// argocdHelp is the part of a flag's help that names its Argo CD sources.
func argocdHelp(param string) string {
	return fmt.Sprintf(" (Argo CD: parameter %q, else env %s)", param, argocdplugin.EnvVar(param))
}

// flagLayer is the configuration the flags given on the command line set:
// every setting of config.Settings whose flag c has and was given.
func flagLayer(c *cobra.Command) config.Layer {
	l := config.Layer{Name: "flags", FieldName: func(path string) string {
		if n := flagName(path); n != "" {
			return "--" + n
		}
		return ""
	}}
	for i := range config.Settings {
		s := &config.Settings[i]
		if fl := c.Flags().Lookup(s.Flag); fl != nil && fl.Changed {
			_ = s.Set(&l.Spec, fl.Value.String()) // checked when parsed (settingValue.Set)
		}
	}
	return l
}

// setup is what a rendering command works from: the root, the merged
// configuration, the engine options and the inputs.
type setup struct {
	root    *fsroot.Root // every file is read through it
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
	if err := argocdplugin.CheckEnv(os.Environ()); err != nil {
		return nil, usage(err)
	}
	params, env, cluster, err := argocdplugin.Layers(os.Getenv)
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
	if s.root, err = fsroot.OpenRoot(rootDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	layers := []config.Layer{flagLayer(c), params, env}
	var project *config.Layer // the project file found, when read
	switch {
	case f.configFile != "":
		l, err := config.ReadFile(s.root, f.configFile)
		if err != nil {
			return nil, usage(err)
		}
		layers = append(layers, l)
		if f.verbose { // a project file found and not read is said, never silently
			if p, ok, err := config.FindProject(s.root, "."); ok && err == nil && filepath.Clean(p.Name) != filepath.Clean(f.configFile) {
				fmt.Fprintf(c.ErrOrStderr(), "not reading the project file %s: --config %s given\n", p.Name, f.configFile)
			}
		}
	case len(args) > 0:
		if f.verbose && !f.noProject {
			if p, ok, err := config.FindProject(s.root, "."); ok && err == nil {
				fmt.Fprintf(c.ErrOrStderr(), "not reading the project file %s: PATH given (--config %s reads it)\n", p.Name, p.Name)
			}
		}
	case !f.noProject:
		l, ok, err := config.FindProject(s.root, ".")
		switch {
		case err != nil:
			return nil, usage(err)
		case ok:
			if f.verbose {
				fmt.Fprintf(c.ErrOrStderr(), "read the project file %s\n", l.Name)
			}
			if len(l.Spec.Inputs) == 0 && l.Dir != "." { // its folder
				l.Spec.Inputs = []string{"."}
			}
			if l.Dir != "." && argocdplugin.Active(os.Getenv) {
				// The repository's project file, shared with the CLI: its
				// tree settings are for render -o and check, not for the
				// plugin, whose objects go to standard output.
				if dropped := dropTreeSettings(&l.Spec); len(dropped) > 0 {
					fmt.Fprintf(c.ErrOrStderr(), "%s: %s: not used under Argo CD (objects go to standard output)\n", l.Name, strings.Join(dropped, ", "))
				}
			}
			project = &l
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
		noTree := fmt.Errorf("%s does not exist or is not a folder: render the tree first ('wavesmith render PATH... -o %s') and commit it", *check, *check)
		// DIR and its record are looked at through the root when DIR lies
		// in it, else (an -o outside the root, the caller's choice)
		// through DIR itself.
		recRoot := s.root
		if _, err := s.root.Rel(*check); err == nil {
			fi, err := s.root.Stat(*check)
			if errors.Is(err, fsroot.ErrOutsideRoot) {
				return nil, err
			}
			if err != nil || !fi.IsDir() {
				return nil, noTree
			}
		} else {
			if recRoot, err = fsroot.OpenRoot(*check); err != nil {
				return nil, noTree
			}
			defer recRoot.Close()
		}
		rec := filepath.Join(*check, outtree.RecordFile)
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
		if project != nil && argocdplugin.Active(os.Getenv) && project.Dir != "." {
			if s.inputs, err = applicationInputs(project, s.inputs); err != nil {
				return nil, usage(err)
			}
		}
	}
	if len(s.inputs) == 0 {
		if err := wholeFolder(); err != nil && project == nil && f.configFile == "" && !f.noProject {
			return nil, usage(err)
		}
		s.inputs = []string{"."}
	}
	s.opts.Root = rootDir
	return s, nil
}

// applicationInputs are, under Argo CD, the inputs of a project file
// found above the application folder (the current one) that concern the
// application: those inside its folder, and its folder when an input
// holds it. The Application renders its folder, never another's; a
// project file none of whose inputs concerns it is an error, never
// silently ignored.
func applicationInputs(project *config.Layer, inputs []string) ([]string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	outside := func(rel string) bool { return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) }
	var out []string
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		abs, err := filepath.Abs(in)
		if err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(cwd, abs); err == nil && !outside(rel) {
			out = append(out, rel) // in the application folder
		} else if rel, err := filepath.Rel(abs, cwd); err == nil && !outside(rel) {
			out = append(out, ".") // holds the application folder
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: spec.inputs %s: none is the application folder (%s=%s) or lies in it, or holds it: add it to the inputs, or give the application its own project file", project.Name, strings.Join(inputs, ", "), argocdplugin.EnvSourcePath, os.Getenv(argocdplugin.EnvSourcePath))
	}
	return slices.Compact(out), nil
}

// dropTreeSettings clears the settings of spec that only a tree uses
// (output, treePath, flux, argocd) and names those it cleared.
func dropTreeSettings(spec *v1alpha1.RenderConfigSpec) []string {
	var dropped []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"spec.output", spec.Output != "" && spec.Output != "-"}, {"spec.treePath", spec.TreePath != ""}, {"spec.flux", spec.Flux != nil}, {"spec.argocd", spec.ArgoCD != nil}} {
		if f.set {
			dropped = append(dropped, f.name)
		}
	}
	spec.Output, spec.TreePath, spec.Flux, spec.ArgoCD = "", "", nil, nil
	return dropped
}

// wholeFolder refuses to read the current folder, for want of PATH and
// of a project file, when it is the file system's root or the home
// folder: a whole disk walked by mistake, never a deployment.
func wholeFolder() error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	if filepath.Dir(cwd) == cwd || home != "" && filepath.Clean(home) == cwd {
		return fmt.Errorf("%w: no PATH and no project file (%s), and the current folder %s is the file system's root or the home folder: name what to render (wavesmith render PATH, \".\" to mean this folder)", errWholeFolder, config.ProjectFile, cwd)
	}
	return nil
}

// errWholeFolder: without PATH, the current folder is / or the home folder.
var errWholeFolder = errors.New("refusing to read the whole folder")

// decideRoot is the one rule for the root of a render, decided before
// any file is read: --root; under Argo CD the checkout
// (argocdplugin.Root: the working folder less ARGOCD_APP_SOURCE_PATH, an
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
	root, err := argocdplugin.Root(os.Getenv, cwd)
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
	ctx, cancel := context.WithTimeout(argocdplugin.Charts(c.Context(), os.Getenv), s.timeout)
	defer cancel()
	in, err := s.readInputs(ctx, c)
	if err != nil {
		return nil, err
	}
	_, res, err := f.renderRead(ctx, c, s, in, start, nil)
	return res, err
}

// readInputs reads the command's inputs (load.ReadInputs) and readies the
// heap for a render of their size (largeRender): by their number once
// they are listed, by their bytes as stdin is read and once all are.
func (s *setup) readInputs(ctx context.Context, c *cobra.Command) (*load.Read, error) {
	in, err := load.ReadInputs(ctx, s.opts.Root, s.opts.Generators, s.inputs, &readHint{r: c.InOrStdin()}, func(n int) {
		largeRender(n, 0)
	})
	if err != nil {
		return nil, err
	}
	largeRender(0, in.Size())
	return in, nil
}

// renderRead decodes the files read and renders them, taking the specs
// whose records outputs holds from them (nil: none); it returns the
// objects decoded with the result.
func (f *renderFlags) renderRead(ctx context.Context, c *cobra.Command, s *setup, in *load.Read, start time.Time, outputs *render.Outputs) ([]*manifest.Object, *render.Result, error) {
	objs, err := in.Decode(ctx)
	if err != nil {
		// The files read fine are checked too: one run reports every
		// error of every file.
		if len(objs) > 0 && ctx.Err() == nil {
			if cerr := render.Check(objs, s.opts); cerr != nil {
				err = manifest.JoinSorted([]error{err, cerr})
			}
		}
		return nil, nil, err
	}
	if f.verbose {
		f.listFiles(c, objs, time.Since(start))
	}
	opts := s.opts
	progress := newProgress(c, f.quiet)
	opts.Progress = progress.update
	opts.Reuse = reviewMemo.Load() // nil but in a review
	opts.Outputs = outputs
	res, err := render.Render(ctx, objs, opts)
	progress.done()
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil && err != nil {
		return nil, nil, fmt.Errorf("%w (the render took longer than %s: raise %s, or look for a template that loops)", err, s.timeout, s.merged.Name("timeout"))
	}
	if err != nil {
		return nil, nil, err
	}
	if f.verbose {
		f.listSpecs(c, res, time.Since(start))
	}
	return objs, res, nil
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
	for i := range config.Settings {
		st := &config.Settings[i]
		v := st.Get(&sp)
		switch {
		case v == "":
		case st.Type == config.Section:
			args = append(args, "--"+st.Flag)
		default:
			args = append(args, "--"+st.Flag, quoteArg(v))
		}
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
