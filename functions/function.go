package functions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/config"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/internal/parallel"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// Processor is the KRM function: it renders every spec in the
// ResourceList, keeps the items the user wrote as they are (adding only
// the inventory and digest annotations to specs), replaces the children a
// previous run added (those its specs' inventories list), and appends the
// new children with their own path and index.
type Processor struct {
	// Base options: the generators, the root and how the engine keeps its
	// inputs; without Above, also the settings the functionConfig
	// overrides.
	Options render.Options
	// Above are the door's configuration layers that win over the
	// functionConfig (fn's flags), highest first, as config.Merge takes
	// them: flags > functionConfig > defaults.
	Above []config.Layer
	// Below are the door's layers that the functionConfig wins over
	// (Argo CD's description of the cluster), highest first; used with
	// Above.
	Below []config.Layer
}

// Run reads a ResourceList from r and writes the result to w. The error
// is non-nil when any result has severity error. above are the layers
// that win over the functionConfig (Processor.Above): the door passes its
// flag layer.
func Run(ctx context.Context, r io.Reader, w io.Writer, base render.Options, above ...config.Layer) error {
	return (&Processor{Options: base, Above: above}).Run(ctx, r, w)
}

// Run reads a ResourceList from r and writes the result to w, as the
// package's Run.
func (p *Processor) Run(ctx context.Context, r io.Reader, w io.Writer) error {
	in, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return fmt.Errorf("reading standard input: %w", err)
	}
	if len(in) > MaxInput {
		return budgetResult(w, fmt.Errorf("%w: standard input holds more than %d bytes (the function's budget for one ResourceList)", fsroot.ErrTooLarge, MaxInput))
	}
	if n := nodeBound(in); n > MaxNodes {
		return budgetResult(w, fmt.Errorf("%w: the ResourceList holds up to %d YAML nodes, more than the function's budget of %d (about %d small objects): split the package, or render it with wavesmith render", ErrOverBudget, n, MaxNodes, MaxItems))
	}
	// Most of what a render allocates is garbage soon: a soft limit
	// makes the collector return it before the heap doubles. The
	// budgets keep what stays alive under it. A process that set a limit
	// of its own keeps it (GOMEMLIMIT, or the wavesmith binary's memory
	// policy, which collects only near its limit: raising that limit to
	// this one let a kustomization that explodes grow the heap to it
	// before any collection, and hit a 2 GiB address-space limit).
	if os.Getenv("GOMEMLIMIT") == "" && debug.SetMemoryLimit(-1) == math.MaxInt64 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit))
	}
	// kyaml's reader takes a document of another kind as a plain stream
	// of objects, which kpt and kustomize could not read back: the kind
	// is checked once the input is read (one parse), and nothing is
	// written then. What does not parse is the reader's error, which
	// names the line.
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(in), KeepReaderAnnotations: true}
	in = nil // the reader holds it; parsed, it can go
	items, err := rw.Read()
	if err != nil {
		return fmt.Errorf("failed to read ResourceList input: %w", err)
	}
	if rw.WrappingKind != kio.ResourceListKind ||
		rw.WrappingAPIVersion != kio.ResourceListAPIVersion && rw.WrappingAPIVersion != "config.kubernetes.io/v1alpha1" {
		return fmt.Errorf("%w: a KRM function reads one ResourceList (config.kubernetes.io/v1) on standard input, as kpt and kustomize send it; to render files, use wavesmith render", ErrNotResourceList)
	}
	// What kyaml's framework.Execute does around a processor, but the
	// writing: the rendered children are written as render encoded them
	// (writeList), never parsed into kyaml's nodes (at 10,000 Kaotos
	// that took 23-35 s and 3 GB).
	rl := &framework.ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
	annos, err := kio.PreprocessResourcesForInternalAnnotationMigration(rl.Items)
	if err != nil {
		return err
	}
	var children [][]byte
	var failed error
	if len(rl.Items) > MaxItems {
		rl.Results = append(rl.Results, &framework.Result{Severity: framework.Error, Message: fmt.Sprintf("%v: %d items, more than the function's budget of %d: split the package, or render it with wavesmith render", ErrOverBudget, len(rl.Items), MaxItems)})
		rl.Items = nil // written back, they would only say the same again
		failed = rl.Results
	} else {
		places, err := childAnnotations(annos)
		if err != nil {
			return err
		}
		children, failed = p.process(ctx, rl, places)
	}
	// The internal and legacy path, index and id annotations of the
	// items kept, each set from the other where the run changed one.
	if err := kio.ReconcileInternalAnnotations(rl.Items, annos); err != nil {
		return err
	}
	if err := writeList(w, rw, rl, children); err != nil {
		return err
	}
	return failed
}

// The function's budget for one ResourceList: with it, a run of objects
// that render as themselves stays under 1 GiB of memory whatever it is
// sent (measured with small ConfigMaps, the costliest objects per byte:
// 30,000 take 680 MB at most). Specs grow: 30,000 Kaotos become 105,000
// items, 1.6 GB at most under the wavesmith binary's memory policy.
const (
	// MaxInput bounds the bytes read from standard input (the files of a
	// whole kpt package, which wavesmith reads one by one elsewhere, up to
	// fsroot.MaxFileSize each).
	MaxInput = 64 << 20
	// MaxItems bounds the items of the ResourceList.
	MaxItems = 30_000
	// MaxNodes bounds the YAML nodes of the ResourceList, counted before
	// parsing it (nodeBound): every node costs some hundred bytes parsed,
	// converted and rendered, whatever its size.
	MaxNodes = 1_000_000
	// memoryLimit is the soft limit of the Go heap during a run.
	memoryLimit = 640 << 20
)

// ErrOverBudget: the ResourceList is larger than the function's budget.
var ErrOverBudget = errors.New("the ResourceList is over the function's budget")

// nodeBound returns an upper bound of the YAML nodes in b without parsing
// it: every node is a document's root, a mapping key (before a ':' or
// after a '?'), a mapping value (after a ':'), or a sequence entry (after
// a '-', a '[' or a ','); flow mapping keys without value follow a '{' or
// a ','. Those characters inside scalars only raise the bound.
func nodeBound(b []byte) int {
	var n int
	for _, c := range b {
		switch c {
		case ':', '?':
			n += 2
		case '-', ',', '[', '{':
			n++
		}
	}
	return n + 1 + bytes.Count(b, []byte("\n---"))
}

// budgetResult writes a ResourceList holding only an error result (kpt
// and kustomize show its message) and returns err.
func budgetResult(w io.Writer, err error) error {
	rl := map[string]any{"apiVersion": kio.ResourceListAPIVersion, "kind": kio.ResourceListKind, "items": []any{},
		"results": []any{map[string]any{"severity": "error", "message": err.Error()}}}
	b, merr := yaml.Marshal(rl)
	if merr != nil {
		return errors.Join(err, merr)
	}
	if _, werr := w.Write(b); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// writeList writes the ResourceList as kyaml's framework writes it (the
// wrapping kind, the items, the functionConfig and the results, through
// kyaml's encoder), with the children after the items kept: each as
// render encoded it, under its dash.
func writeList(w io.Writer, rw *kio.ByteReadWriter, rl *framework.ResourceList, children [][]byte) error {
	var b bytes.Buffer
	head := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		yamlString("apiVersion"), yamlString(rw.WrappingAPIVersion),
		yamlString("kind"), yamlString(rw.WrappingKind),
	}}
	if err := encodeNode(&b, head); err != nil {
		return err
	}
	if len(rl.Items)+len(children) == 0 {
		b.WriteString("items: []\n")
	} else {
		b.WriteString("items:\n")
		// Each item kept as a sequence of one: what yaml.v3 writes for
		// the whole sequence, item by item (TestWriteListAsKyaml), but
		// its emitter keeps every event of a document to its end: at
		// 10,000 Kaotos one sequence grew that queue to tens of MB, 12%
		// of the run's CPU.
		one := &yaml.Node{Kind: yaml.SequenceNode, Content: make([]*yaml.Node, 1)}
		for _, n := range rl.Items {
			// As kyaml's writer does: no empty annotations.
			if err := yaml.ClearEmptyAnnotations(n); err != nil {
				return err
			}
			one.Content[0] = n.YNode()
			if err := encodeNode(&b, one); err != nil {
				return err
			}
		}
		// Room for the children at once, not by doubling (a copy and
		// fresh memory each time): each as encoded, with "- " or two
		// spaces before each line (lines of 16 bytes or more).
		n := 0
		for _, c := range children {
			n += len(c) + len(c)/8 + 2
		}
		b.Grow(n + 1<<10)
		for _, c := range children {
			appendItem(&b, c)
		}
	}
	tail := &yaml.Node{Kind: yaml.MappingNode}
	if rw.FunctionConfig != nil {
		tail.Content = append(tail.Content, yamlString("functionConfig"), rw.FunctionConfig.YNode())
	}
	if len(rl.Results) > 0 {
		// As kyaml's framework writes them.
		y, err := yaml.Marshal(rl.Results)
		if err != nil {
			return err
		}
		results, err := yaml.Parse(string(y))
		if err != nil {
			return err
		}
		tail.Content = append(tail.Content, yamlString("results"), results.YNode())
	}
	if len(tail.Content) > 0 {
		if err := encodeNode(&b, tail); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// place is an annotation that places an item in a file of the package:
// its path, or its index in the file.
type place struct {
	key  string
	path bool
}

// placeAnnotations are the item's path and index, in kpt's internal form
// and the legacy one, which kustomize and older kpt still read.
var placeAnnotations = []place{
	{kioutil.PathAnnotation, true}, {kioutil.IndexAnnotation, false},
	//lint:ignore SA1019 kustomize and older kpt still set and read the legacy path and index annotations
	{kioutil.LegacyPathAnnotation, true}, {kioutil.LegacyIndexAnnotation, false},
}

// value is the annotation's value for an item in the file path, the
// first and only one there.
func (p place) value(path string) string {
	if p.path {
		return path
	}
	return "0"
}

// childAnnotations returns the placeAnnotations a new child carries: the
// forms the input's items use (annos, as read before the run), which kyaml
// decides for every item it writes (kio.ReconcileInternalAnnotations; both
// forms when no item has either). Asked of kyaml itself, on an item that
// carries all of them.
func childAnnotations(annos map[string]map[string]string) ([]place, error) {
	probe, err := yaml.Parse("metadata:\n  name: probe\n")
	if err != nil {
		return nil, err
	}
	for _, p := range placeAnnotations {
		if err := probe.PipeE(yaml.SetAnnotation(p.key, p.value("probe.yaml"))); err != nil {
			return nil, err
		}
	}
	if err := kio.ReconcileInternalAnnotations([]*yaml.RNode{probe}, annos); err != nil {
		return nil, err
	}
	kept := probe.GetAnnotations()
	var places []place
	for _, p := range placeAnnotations {
		if _, ok := kept[p.key]; ok {
			places = append(places, p)
		}
	}
	return places, nil
}

// yamlString is a plain scalar node.
func yamlString(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// encodeNode appends n as one YAML document, with kyaml's encoder (its
// indentation, sequences compact), without a document marker.
func encodeNode(b *bytes.Buffer, n *yaml.Node) error {
	e := yaml.NewEncoder(b)
	if err := e.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}); err != nil {
		return err
	}
	return e.Close()
}

// appendItem appends the object y (block YAML, each line ended) as one
// item of a compact sequence at column 0: "- " before its first line,
// two spaces before every other non-empty line.
func appendItem(b *bytes.Buffer, y []byte) {
	b.WriteString("- ")
	for first := true; len(y) > 0; first = false {
		line := y
		if i := bytes.IndexByte(y, '\n'); i >= 0 {
			line = y[:i+1]
		}
		y = y[len(line):]
		if !first && len(line) > 1 {
			b.WriteString("  ")
		}
		b.Write(line)
	}
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteByte('\n')
	}
}

// ErrNotResourceList: the function's input is not a ResourceList.
var ErrNotResourceList = errors.New("the input is not a ResourceList")

// Process implements the function on one ResourceList, for a caller
// that runs it inside kyaml's framework: the new children are appended to
// rl.Items as nodes. Run writes them without making nodes of them.
func (p *Processor) Process(ctx context.Context, rl *framework.ResourceList) error {
	children, err := p.process(ctx, rl, placeAnnotations)
	for _, b := range children {
		n, perr := yaml.Parse(string(b))
		if perr != nil {
			return fmt.Errorf("re-reading a rendered object: %w", perr)
		}
		rl.Items = append(rl.Items, n)
	}
	return err
}

// process renders rl: the items the user wrote stay in rl.Items (specs
// with their annotations written), problems go to rl.Results (and the
// error), and the new children are returned, encoded, each with its path
// and index annotations: those of places (placeAnnotations or fewer).
func (p *Processor) process(ctx context.Context, rl *framework.ResourceList, places []place) ([][]byte, error) {
	opts, err := p.options(rl.FunctionConfig)
	if err != nil {
		for _, e := range flatten(err) {
			r := &framework.Result{Severity: framework.Error, Message: "functionConfig: " + e.Error()}
			var me *manifest.Error
			if errors.As(e, &me) {
				// At its line in the functionConfig, the field path
				// included: the functionConfig is no item of the list.
				r = errorResult(&manifest.Error{File: me.File, Field: me.Field, Err: me.Err})
				r.Message = fmt.Sprintf("functionConfig line %d: %s", me.Line, r.Message)
				if me.File == "functionConfig" {
					r.File = nil
				}
			}
			rl.Results = append(rl.Results, r)
		}
		return nil, rl.Results
	}
	opts.KeepInputs = true
	// Children are encoded again, with their path and index: from their
	// maps, none taken from records.
	opts.DiscardObjects, opts.Outputs = false, nil
	if spec := specConfig(rl.FunctionConfig, opts); spec != nil {
		// kustomize generator mode: the functionConfig is the spec itself,
		// and may also be among the items, marked as local configuration.
		items := rl.Items[:0]
		for _, it := range rl.Items {
			if itemKey(it) != itemKey(spec) || it.GetAnnotations()["config.kubernetes.io/local-config"] != "true" {
				items = append(items, it)
			}
		}
		rl.Items = append(items, spec)
	}

	previous := previousChildren(rl.Items)
	base, err := packageBase(rl.Items, opts.Generators)
	if err != nil {
		rl.Results = append(rl.Results, &framework.Result{Severity: framework.Error, Message: err.Error()})
		return nil, rl.Results
	}
	var kept []*yaml.RNode
	var objs []*manifest.Object
	for _, item := range rl.Items {
		if previous[itemKey(item)] {
			continue
		}
		if err := forgetWritten(item); err != nil {
			rl.Results = append(rl.Results, errorResult(err))
			continue
		}
		kept = append(kept, item)
		obj, err := toObject(item)
		if err != nil {
			rl.Results = append(rl.Results, errorResult(err))
			continue
		}
		if obj.Source.File != "" && base != "" {
			obj.Source.File = filepath.Join(base, obj.Source.File)
		}
		objs = append(objs, obj)
	}
	failed := len(rl.Results) > 0
	objs, err = load.WithoutSources(objs, opts.Generators, opts.Root)
	if failed {
		// The items read fine are checked too (render.Check, as the CLI
		// checks the files that decoded): one run reports every error.
		if cerr := render.Check(objs, opts); cerr != nil {
			err = manifest.JoinSorted([]error{err, cerr})
		}
		for _, e := range flatten(err) {
			if e != nil {
				rl.Results = append(rl.Results, errorResult(e))
			}
		}
		return nil, rl.Results
	}
	var res *render.Result
	if err == nil {
		res, err = render.Render(ctx, objs, opts)
	}
	if err != nil {
		for _, e := range flatten(err) {
			rl.Results = append(rl.Results, errorResult(e))
		}
		return nil, rl.Results
	}
	for _, w := range res.Warnings {
		rl.Results = append(rl.Results, warningResult(w))
	}

	// Specs keep what the user wrote; only the annotations the function
	// owns change (setWritten).
	specs := map[manifest.Key]*render.Item{}
	for _, s := range res.Specs {
		specs[s.Object.Key()] = s
	}
	for _, item := range kept {
		sitem, ok := specs[itemKey(item)]
		if !ok {
			continue
		}
		if err := setWritten(item, sitem); err != nil {
			return nil, err
		}
	}
	// The children, each in the file the tree layout gives it (kpt
	// writes it there), encoded again with those annotations.
	paths := res.Paths()
	var idx []int
	for i, it := range res.Items {
		if it.Role == render.Child {
			idx = append(idx, i)
		}
	}
	children := make([][]byte, len(idx))
	parallel.Do(len(idx), func(j int) {
		i := idx[j]
		o := res.Items[i].Object
		for _, p := range places {
			o.SetAnnotation(p.key, p.value(paths[i]))
		}
		children[j] = manifest.EncodeObject(o)
	})
	rl.Items = kept
	if len(rl.Results) > 0 && rl.Results.ExitCode() != 0 {
		return children, rl.Results
	}
	return children, nil
}

// options merges the functionConfig (a RenderConfig, or a ConfigMap with
// the same keys flattened) with the door's layers. With Above (the door's
// flags), config.Merge takes each field from the first layer that sets it:
// Above, then the functionConfig, then Below, then the defaults. Without
// Above, the functionConfig's fields override the base options.
func (p *Processor) options(fc *yaml.RNode) (render.Options, error) {
	base := p.Options
	if fc == nil || fc.IsNilOrEmpty() || specConfig(fc, base) != nil {
		if p.Above == nil {
			return base, nil
		}
		return p.merged(nil)
	}
	var cfg v1alpha1.RenderConfigSpec
	switch fc.GetKind() {
	case v1alpha1.RenderConfigKind:
		// Read as the project file is (config.Parse): every mistake at
		// once, at its line, with the known fields.
		l, err := config.Parse(functionConfigFile(fc), []byte(fc.MustString()))
		if err != nil {
			return base, err
		}
		cfg = l.Spec
	case "ConfigMap":
		c, err := configFromData(fc.GetDataMap())
		if err != nil {
			return base, fmt.Errorf("ConfigMap %s: %w", fc.GetName(), err)
		}
		cfg = c
	default:
		return base, fmt.Errorf("%w: kind %s: want %s or ConfigMap", render.ErrOptions, fc.GetKind(), v1alpha1.RenderConfigKind)
	}
	layer := config.Layer{Name: fc.GetKind() + " " + fc.GetName(), Spec: cfg}
	if fc.GetKind() == "ConfigMap" {
		layer.FieldName = func(path string) string { return layer.Name + ": data." + configMapKey(path) }
	}
	if err := fnFields(layer); err != nil {
		return base, err
	}
	if p.Above != nil {
		return p.merged(&layer)
	}
	o, _, err := config.Merge(layer).Options(base.Root)
	if err != nil {
		return base, err
	}
	if cfg.Platform == "" && len(cfg.APIVersions) == 0 {
		o.Platform = base.Platform
	}
	if cfg.Dialects == nil {
		o.Dialects = base.Dialects
	}
	if o.Namespace == "" {
		o.Namespace = base.Namespace
	}
	for k, v := range base.Defaults {
		if _, set := o.Defaults[k]; !set {
			o.Defaults[k] = v
		}
	}
	o.Root, o.Generators, o.Engines, o.PartOf = base.Root, base.Generators, base.Engines, base.PartOf
	if o.KubeVersion == "" {
		o.KubeVersion = base.KubeVersion
	}
	return o, nil
}

// merged merges Above and the functionConfig's layer (when not nil),
// keeping from the base options what no layer holds (the generators, the
// GitOps engines, the root, how the engine keeps its inputs and objects).
func (p *Processor) merged(fc *config.Layer) (render.Options, error) {
	layers := append([]config.Layer(nil), p.Above...)
	if fc != nil {
		layers = append(layers, *fc)
	}
	layers = append(layers, p.Below...)
	o, _, err := config.Merge(layers...).Options(p.Options.Root)
	if err != nil {
		return p.Options, err
	}
	b := p.Options
	o.Generators, o.Engines, o.Root, o.KeepInputs, o.DiscardObjects, o.Progress = b.Generators, b.Engines, b.Root, b.KeepInputs, b.DiscardObjects, b.Progress
	return o, nil
}

// ErrNotForFn: a functionConfig sets a field that means nothing to the
// KRM function (its input and output are the ResourceList).
var ErrNotForFn = errors.New("the KRM function does not read this field")

// fnFields refuses the settings of wavesmith render that a KRM function
// cannot honour, naming each as its user wrote it.
func fnFields(l config.Layer) error {
	c := l.Spec
	var errs []error
	for _, f := range []struct {
		path, why string
		set       bool
	}{
		{"inputs", "the function's input is the ResourceList kpt or kustomize sends", len(c.Inputs) > 0},
		{"output", "the function's output is the ResourceList it writes back", c.Output != ""},
		{"treePath", "the function writes no GitOps tree", c.TreePath != ""},
		{"flux", "the function writes no Flux files (wavesmith render -o DIR --flux does)", c.Flux != nil},
		{"argocd", "the function writes no Argo CD Applications (wavesmith render -o DIR --argocd does)", c.ArgoCD != nil},
	} {
		if f.set {
			errs = append(errs, &config.FieldError{Name: l.Name + ": spec." + f.path, Err: fmt.Errorf("%w: %s; remove it from the functionConfig", ErrNotForFn, f.why)})
		}
	}
	return errors.Join(errs...)
}

// functionConfigFile names the functionConfig in errors: the file kpt
// read it from, else "functionConfig".
func functionConfigFile(fc *yaml.RNode) string {
	if p := fc.GetAnnotations()[kioutil.PathAnnotation]; p != "" {
		return p
	}
	return "functionConfig"
}

// configMapKey is the ConfigMap key of a configuration field
// (config.Settings).
func configMapKey(path string) string {
	if st := config.Lookup(path); st != nil && st.Key != "" {
		return st.Key
	}
	return path
}

// configFromData reads the ConfigMap form: the keys of the settings of
// config.Settings that come through config.ConfigMap (lists
// comma-separated). Every bad key and value is reported, in key order.
func configFromData(data map[string]string) (v1alpha1.RenderConfigSpec, error) {
	var c v1alpha1.RenderConfigSpec
	byKey := map[string]*config.Setting{}
	var known []string
	for i := range config.Settings {
		if st := &config.Settings[i]; st.Takes(config.ConfigMap) {
			byKey[st.Key] = st
			known = append(known, st.Key)
		}
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		st, ok := byKey[k]
		if !ok {
			errs = append(errs, fmt.Errorf("%w: data.%s: unknown key (known: %s)", render.ErrOptions, k, strings.Join(known, ", ")))
			continue
		}
		if err := st.Set(&c, data[k]); err != nil {
			errs = append(errs, fmt.Errorf("%w: data.%s: %v", render.ErrOptions, k, err))
		}
	}
	return c, errors.Join(errs...)
}

// specConfig returns a copy of the functionConfig when it is itself a spec
// (kustomize runs a generator with only its config as input), without the
// annotations that mark it as function configuration.
func specConfig(fc *yaml.RNode, opts render.Options) *yaml.RNode {
	if fc == nil || fc.IsNilOrEmpty() {
		return nil
	}
	g, _ := manifest.SplitAPIVersion(fc.GetApiVersion())
	if _, ok := opts.Generators[g+"/"+fc.GetKind()]; !ok {
		return nil
	}
	spec := fc.Copy()
	for _, a := range []string{"config.kubernetes.io/local-config", "config.kubernetes.io/function", "config.k8s.io/function"} {
		_ = spec.PipeE(yaml.ClearAnnotation(a))
	}
	return spec
}

// previousChildren returns the keys of items that the specs' inventories
// list: a previous run added them, this run replaces them.
func previousChildren(items []*yaml.RNode) map[manifest.Key]bool {
	prev := map[manifest.Key]bool{}
	for _, it := range items {
		v, ok := it.GetAnnotations()[inventory.Inventory]
		if !ok {
			continue
		}
		entries, err := inventory.Parse(v)
		if err != nil {
			continue // rendering will rewrite it
		}
		for _, e := range entries {
			prev[manifest.Key{Group: e.Group, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}] = true
		}
	}
	return prev
}

func itemKey(n *yaml.RNode) manifest.Key {
	g, _ := manifest.SplitAPIVersion(n.GetApiVersion())
	return manifest.Key{Group: g, Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
}

// packageBase finds the folder the items' paths are relative to. kpt gives
// each item its path inside the package (config.kubernetes.io/path), but
// runs the function in the folder kpt was started in, which may be above
// the package (kpt fn render pkg/): the sources a spec names beside its
// file must be found from the package. It returns "" when the specs' files
// are where their paths say from the current folder, else the one folder
// below it holding a Kptfile and every spec's file (found by name and
// compared by content); anything else is an error saying what to do.
func packageBase(items []*yaml.RNode, reg generators.Registry) (string, error) {
	var paths []string
	var keys []manifest.Key
	for _, it := range items {
		g, _ := manifest.SplitAPIVersion(it.GetApiVersion())
		if _, ok := reg[g+"/"+it.GetKind()]; !ok {
			continue
		}
		a := it.GetAnnotations()
		p := a[kioutil.PathAnnotation]
		if p == "" {
			//lint:ignore SA1019 kustomize and older kpt still set the legacy path annotation
			p = a[kioutil.LegacyPathAnnotation]
		}
		if p != "" && !filepath.IsAbs(p) {
			paths = append(paths, filepath.FromSlash(p))
			keys = append(keys, itemKey(it))
		}
	}
	if len(paths) == 0 {
		return "", nil
	}
	// Every look below goes through the current folder as a root, as the
	// other doors read: the items' paths are the caller's input, and one
	// that leads out (../, a symlink), to a FIFO or to an oversized file
	// is no package file, never read.
	root, err := fsroot.OpenRoot(".")
	if err != nil {
		return "", fmt.Errorf("%w: the current folder: %w", render.ErrOptions, err)
	}
	defer root.Close()
	if holdsAll(root, "", paths, keys) {
		return "", nil
	}
	var found []string
	const maxDepth = 8
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > maxDepth || len(found) > 1 {
			return
		}
		if fi, err := root.Lstat(filepath.Join(dir, "Kptfile")); err == nil && fi.Mode().IsRegular() && holdsAll(root, dir, paths, keys) {
			found = append(found, dir)
		}
		entries, err := root.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				walk(filepath.Join(dir, e.Name()), depth+1)
			}
		}
	}
	walk(".", 0)
	if len(found) == 1 {
		return found[0], nil
	}
	if len(found) == 0 && !anyFile(root, paths) {
		// The items come from no file here (kustomize sends its own
		// paths, a test or a pipe may send any): paths are relative to the
		// current folder, and a source a spec names that is not there is
		// reported by its generator.
		return "", nil
	}
	return "", fmt.Errorf("%w: the specs' files (%s) are not below the current folder, and no single package folder below it holds them: run kpt from the package folder (kpt fn render --allow-exec .), or give the paths from where kpt runs", render.ErrOptions, strings.Join(paths, ", "))
}

// anyFile reports whether one of paths is a regular file from the current
// folder, inside it.
func anyFile(root *fsroot.Root, paths []string) bool {
	for _, p := range paths {
		if fi, err := root.CheckFile(p); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// holdsAll reports whether each file dir/paths[i] holds an object named
// like keys[i] (the namespace aside: kpt may have set one), reading
// through root: a path out of it, a file that is not regular or one over
// fsroot.MaxFileSize holds nothing.
func holdsAll(root *fsroot.Root, dir string, paths []string, keys []manifest.Key) bool {
	for i, p := range paths {
		f := filepath.Join(dir, p)
		b, err := root.ReadFile(f)
		if err != nil {
			return false
		}
		objs, err := manifest.Decode(f, b)
		if err != nil {
			return false
		}
		found := false
		for _, o := range objs {
			k := o.Key()
			found = found || k.Group == keys[i].Group && k.Kind == keys[i].Kind && k.Name == keys[i].Name
		}
		if !found {
			return false
		}
	}
	return true
}

// toObject converts an item, naming it by its path and index.
func toObject(n *yaml.RNode) (*manifest.Object, error) {
	a := n.GetAnnotations()
	file := a[kioutil.PathAnnotation]
	if file == "" {
		//lint:ignore SA1019 kustomize and older kpt still set and read the legacy path and index annotations
		file = a[kioutil.LegacyPathAnnotation]
	}
	s, err := n.String()
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Decode(file, []byte(s))
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, &manifest.Error{File: file, Err: fmt.Errorf("%w: item holds %d objects", manifest.ErrNotObject, len(objs))}
	}
	o := objs[0]
	if idx, err := strconv.Atoi(a[kioutil.IndexAnnotation]); err == nil {
		o.Source.Index = idx
	}
	o.Source.Line = 0 // lines are relative to the item, not the file
	return o, nil
}

func flatten(err error) []error {
	var es manifest.Errors
	if errors.As(err, &es) {
		return es
	}
	return []error{err}
}

func errorResult(err error) *framework.Result {
	r := &framework.Result{Severity: framework.Error, Message: err.Error()}
	var me *manifest.Error
	if errors.As(err, &me) {
		r.Message = me.Err.Error()
		setLocation(r, me.File, me.Field, me.Ref)
	}
	return r
}

func warningResult(w manifest.Warning) *framework.Result {
	r := &framework.Result{Severity: framework.Warning, Message: w.Message}
	setLocation(r, w.File, w.Field, w.Ref)
	if r.ResourceRef == nil && w.Object != "" {
		r.Message = w.Object + ": " + r.Message
	}
	return r
}

func setLocation(r *framework.Result, file, field string, ref *manifest.Ref) {
	if file != "" {
		r.File = &framework.File{Path: file}
	}
	if ref != nil && ref.Kind != "" && ref.Name != "" {
		r.ResourceRef = &yaml.ResourceIdentifier{
			TypeMeta: yaml.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
			NameMeta: yaml.NameMeta{Name: ref.Name, Namespace: ref.Namespace},
		}
		if field != "" {
			r.Field = &framework.Field{Path: field}
		}
	} else if field != "" {
		r.Message = strings.TrimSpace(field + ": " + r.Message)
	}
}

// WrittenAnnotation records on a spec item the dialect annotations the
// function wrote there (an engine's wave, when the spec's children land in
// a later wave than the engine would read from the spec as written), as a
// JSON object of annotation to value. The next run removes those that
// still hold the value written before rendering, so that the function
// never reads its own output back as the user's choice: running it on its
// output gives what running it on the package as the user wrote it gives.
// An annotation the user changed since is the user's and stays.
const WrittenAnnotation = "fn.wavesmith.io/written"

// forgetWritten removes from a spec item what a previous run wrote on it
// (WrittenAnnotation) and the user has not changed since. The inventory
// and digest annotations stay in place: rendering rewrites them.
func forgetWritten(item *yaml.RNode) error {
	a := item.GetAnnotations()
	rec, ok := a[WrittenAnnotation]
	if !ok {
		return nil
	}
	var written map[string]string
	if err := json.Unmarshal([]byte(rec), &written); err != nil {
		return &manifest.Error{File: a[kioutil.PathAnnotation], Field: manifest.KeyPath("metadata.annotations", WrittenAnnotation),
			Object: strings.Trim(item.GetKind()+"/"+item.GetNamespace()+"/"+item.GetName(), "/"),
			Ref:    &manifest.Ref{APIVersion: item.GetApiVersion(), Kind: item.GetKind(), Namespace: item.GetNamespace(), Name: item.GetName()},
			Err:    fmt.Errorf("%w: %v (the function writes it; remove it to keep the annotations it lists as your own)", ErrWrittenRecord, err)}
	}
	clear := []string{WrittenAnnotation}
	for k, v := range written {
		if cur, ok := a[k]; ok && cur == v {
			clear = append(clear, k)
		}
	}
	sort.Strings(clear)
	for _, k := range clear {
		if err := item.PipeE(yaml.ClearAnnotation(k)); err != nil {
			return err
		}
	}
	return nil
}

// ErrWrittenRecord: a spec item's WrittenAnnotation does not parse.
var ErrWrittenRecord = errors.New("the record of what the function wrote does not parse")

// setWritten writes on a spec item the annotations the engine wrote on its
// copy of the spec, in a fixed order (the inventory and digest, then the
// dialects' annotations sorted, then their record), so that a run on the
// function's own output lays them out as a run on the user's package does.
func setWritten(item *yaml.RNode, sitem *render.Item) error {
	s := sitem.Object
	owned := []string{inventory.Inventory, inventory.RenderDigest}
	written := map[string]string{}
	for _, a := range sitem.Written {
		if a != inventory.Inventory && a != inventory.RenderDigest {
			owned = append(owned, a)
			written[a], _ = s.Annotation(a)
		}
	}
	for _, a := range owned {
		if v, ok := s.Annotation(a); ok {
			if err := item.PipeE(yaml.SetAnnotation(a, v)); err != nil {
				return fmt.Errorf("set %s on %s: %w", a, s.Key(), err)
			}
		}
	}
	if len(written) == 0 {
		return nil
	}
	rec, err := json.Marshal(written) // keys sorted
	if err != nil {
		return err
	}
	if err := item.PipeE(yaml.SetAnnotation(WrittenAnnotation, string(rec))); err != nil {
		return fmt.Errorf("set %s on %s: %w", WrittenAnnotation, s.Key(), err)
	}
	return nil
}
