package functions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/config"
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
