package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/internal/parallel"
	"github.com/wavesmith/wavesmith/kindscope"
	"github.com/wavesmith/wavesmith/manifest"
)

// Role tells how an object came into the output.
type Role int

// Roles.
const (
	// PassThrough objects are input objects of kinds without a generator.
	PassThrough Role = iota
	// Spec objects are the rendered copies of specs (Kaoto, Component).
	Spec
	// Child objects were generated from a spec.
	Child
)

// Item is one object of the output.
type Item struct {
	Object *manifest.Object
	Role   Role
	// Spec is the index in Result.Specs of the spec the item belongs to
	// (its own index for a Spec item), -1 for pass-through objects.
	Spec int
	// Wave is the resolved apply-order.
	Wave int
	// YAML is the encoded object, without document separators.
	YAML []byte
	// Written lists, for a spec, the annotations the engine wrote on it
	// (its inventory and digest; with Options.KeepInputs also the wave
	// annotations of the dialects when its wave moved): what the KRM
	// function copies onto the item the user wrote.
	Written []string
	// Key is the object's identity, fixed once generated; Ref adds its
	// apiVersion.
	Key manifest.Key
	Ref *manifest.Ref
	// defines is the "group/Kind" a CustomResourceDefinition defines.
	defines string
	rank    int
	lc      lifecycle
	owner   string
	// idx is a child's place among its spec's children as generated (and
	// recorded: Outputs).
	idx int
	// own is the object's own apply-order, read once: an input's by
	// checkInput, a child's after Generate (its generator's offset made
	// absolute, or its annotation), which the wave plan shifts.
	own order
	// checked is what the spec's generator's Check decoded (Checker),
	// handed to its Generate.
	checked any
}

// Result is the rendered object set.
type Result struct {
	// Items in output order: wave, kind, group, namespace, name.
	Items []*Item
	// Specs are the spec items, in input order.
	Specs    []*Item
	Warnings []manifest.Warning
	// Took is, per spec, how long generating, decorating and encoding its
	// children took (for -v; never part of any output).
	Took []time.Duration
	// deps are, per spec, the indices of the specs it depends on.
	deps [][]int
}

// localConfig marks objects that are not cluster resources (kustomize and
// kpt semantics): they are read but never emitted.
const localConfig = "config.kubernetes.io/local-config"

// Render runs the engine over objs. Objects are modified in place. It
// returns every problem it finds at a stage, not only the first.
//
// Each spec is generated, decorated and encoded in one pass on a worker,
// so a large render never holds all children as maps at once (with
// Options.DiscardObjects it drops them as soon as they are encoded).
func Render(ctx context.Context, objs []*manifest.Object, opts Options) (*Result, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	inputs := rendered(objs)
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: refusing to render nothing (an empty render would make a pruning applier delete everything)", ErrEmptyInput)
	}

	res := &Result{}
	var errs []error
	// Every problem of every input is reported in one run: the checks of
	// the objects as read, each spec's own fields (generators.Checker) and
	// the specs' dependencies, those of specs with other errors included.
	var specs []*Item // every served spec, with errors or not
	srv := newServed(opts.Generators)
	// Each input is checked on its own, on all cores; the results are
	// taken in input order.
	checked := make([]inputChecked, len(inputs))
	parallel.Do(len(inputs), func(i int) {
		checked[i] = checkOne(inputs[i], srv, &opts)
	})
	for _, c := range checked {
		if c.served != nil {
			errs = append(errs, c.served)
			continue
		}
		it := c.item
		if it.Role == Spec {
			specs = append(specs, it)
		}
		if c.inErr != nil || c.specErr != nil {
			errs = append(errs, c.inErr, c.specErr)
			continue
		}
		if it.Role == Spec {
			it.Spec = len(res.Specs)
			delete(it.Object.Map, "status")
			res.Specs = append(res.Specs, it)
		}
		res.Items = append(res.Items, it)
	}
	if err := sortedJoin(errs); err != nil {
		if _, perr := newWavePlan(specs, opts.Generators, opts.wave.n); perr != nil {
			err = sortedJoin([]error{err, perr})
		}
		return nil, err
	}

	// Scope: what the user declared wins over the CRDs among the inputs,
	// which win over the built-in kinds.
	table := kindscope.Builtin().Clone()
	table.LearnCRDs(inputs)
	table.Merge(opts.Scope)
	opts.Scope = table

	plan, err := newWavePlan(res.Specs, opts.Generators, opts.wave.n)
	if err != nil {
		return nil, err
	}
	res.deps = plan.deps
	reuse := newReuse(opts.Reuse, opts.Outputs, &opts)
	defer reuse.close()
	// Children: generated, decorated and encoded per spec, on all cores,
	// level by level of the specs' dependencies.
	outs := make([]specOutput, len(res.Specs))
	res.Took = make([]time.Duration, len(res.Specs))
	var done atomic.Int64
	for _, level := range plan.levels {
		parallel.Do(len(level), func(j int) {
			i := level[j]
			defer func() {
				if opts.Progress != nil {
					opts.Progress(int(done.Add(1)), len(res.Specs))
				}
			}()
			for _, d := range plan.deps[i] {
				if outs[d].err != nil {
					return // its dependency's error is reported
				}
			}
			start := time.Now()
			outs[i] = renderSpec(ctx, res.Specs[i], plan, &opts, reuse)
			res.Took[i] = time.Since(start)
		})
	}
	inputItems := res.Items
	errs = errs[:0]
	for _, out := range outs {
		errs = append(errs, out.err)
		res.Warnings = append(res.Warnings, out.warnings...)
		res.Items = append(res.Items, out.children...)
	}
	if err := sortedJoin(errs); err != nil {
		return nil, err
	}

	// The objects of the input: pass-through objects and specs. A spec
	// lands in the wave the plan gives it.
	warns := make([][]manifest.Warning, len(inputItems))
	itemErrs := make([]error, len(inputItems))
	parallel.Do(len(inputItems), func(i int) {
		it := inputItems[i]
		var out *specOutput
		wave := -1
		if it.Role == Spec {
			out, wave = &outs[it.Spec], plan.wave[it.Spec]
		}
		warns[i], itemErrs[i] = decorateInput(it, out, wave, &opts)
	})
	if err := sortedJoin(itemErrs); err != nil {
		return nil, err
	}
	for _, w := range warns {
		res.Warnings = append(res.Warnings, w...)
	}
	res.Warnings = append(res.Warnings, defaultWarnings(&opts)...)

	if err := validateSet(res); err != nil {
		return nil, err
	}
	markManagedInstances(res, opts.Generators)
	sortItems(res.Items)
	parallel.Do(len(inputItems), func(i int) {
		if it := inputItems[i]; it.Role == PassThrough {
			it.YAML = manifest.EncodeObject(it.Object)
		}
	})
	writeInventories(res, outs, &opts)
	if reuse != nil && reuse.outputs != nil {
		// The records of the specs rendered.
		for i := range outs {
			if outs[i].keep {
				reuse.outputs.keep(outs[i].outKey, &outs[i])
			}
		}
	}
	return res, nil
}

// Check runs the checks of the objects as read that Render runs first
// (served kinds and versions, metadata, wavesmith.io annotations, each
// spec's own fields: generators.Checker) and returns every error, sorted.
// It renders nothing: a door calls it on the objects of the files that
// were read fine when others were not, so that one run reports both.
//
// Each object is checked as Render checks it (checkOne: a spec with its
// namespace set, so that its errors name it as Render's do), and may be
// changed as Render changes it.
func Check(objs []*manifest.Object, opts Options) error {
	opts, err := opts.normalize()
	if err != nil {
		return err
	}
	var errs []error
	srv := newServed(opts.Generators)
	for _, o := range rendered(objs) {
		c := checkOne(o, srv, &opts)
		errs = append(errs, c.served, c.inErr, c.specErr)
	}
	return sortedJoin(errs)
}

// rendered is objs but those marked local config (the kustomize and kpt
// annotation), which are never rendered.
func rendered(objs []*manifest.Object) []*manifest.Object {
	var in []*manifest.Object
	for _, o := range objs {
		if v, _ := o.Annotation(localConfig); v == "true" {
			continue
		}
		in = append(in, o)
	}
	return in
}

// inputChecked is what checkOne found of an input: an error when its
// group is wavesmith's but its kind or version is not served (nothing
// else checked), else its item (a spec or passed through) and the errors
// of its own fields.
type inputChecked struct {
	served, inErr, specErr error
	item                   *Item
}

// checkOne checks the input o: served, its metadata and annotations
// (checkInput) and, for a spec, its own fields (generators.Checker), with
// its namespace set as Generate sees it.
func checkOne(o *manifest.Object, srv *served, opts *Options) inputChecked {
	if err := srv.check(o); err != nil {
		return inputChecked{served: err}
	}
	own, inErr := checkInput(o, opts.Engines)
	g, isSpec := opts.Generators.Lookup(o)
	it := &Item{Object: o, Role: PassThrough, Spec: -1, own: own}
	c := inputChecked{inErr: inErr, item: it}
	if isSpec {
		it.Role = Spec
		meta, _ := o.Map["metadata"].(map[string]any)
		if ns := meta["namespace"]; ns == nil || ns == "" { // a wrong type stays, reported
			o.SetNamespace(opts.Namespace)
		}
		// Checked with its namespace set, as Generate sees it: what
		// Check decoded is handed to Generate (one decode a render).
		if ch, ok := g.(generators.Checker); ok {
			it.checked, c.specErr = ch.Check(o)
		}
	}
	return c
}

// checkInput checks an object as read: metadata, the wavesmith.io
// annotations it may carry, and a wave in an engine's vocabulary, taken as
// its apply-order. It returns the object's own apply-order, read once.
// Every problem is reported at once: a bad name does not hide an unknown
// annotation, nor that a bad policy value.
func checkInput(o *manifest.Object, engines []gitops.Dialect) (order, error) {
	var errs manifest.Errors
	metaErr, knownErr, lifecycleErr := checkMetadata(o), checkKnownAnnotations(o), checkLifecycleAnnotations(o)
	own, waveErr := adoptEngineWaves(o, engines, readApplyOrder(o))
	for _, err := range []error{metaErr, knownErr, lifecycleErr, waveErr} {
		if es, ok := err.(manifest.Errors); ok {
			errs = append(errs, es...)
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	return own, manifest.Join(errs)
}

// specOutput is what rendering one spec gives.
type specOutput struct {
	children   []*Item
	warnings   []manifest.Warning
	specLabels map[string]string
	err        error
	// order, digest, inventory and specYAML are what writeInventories
	// gave the spec: its children's places as generated (idx) in output
	// order, its render digest, its inventory annotation and its bytes
	// (Outputs records them; a record taken brings them back).
	order     []int
	digest    [sha256.Size]byte
	inventory string
	specYAML  []byte
	// specWarnings are the warnings writing the spec's labels and
	// annotations gave (decorateInput), which the record keeps: a spec
	// taken from a record is not written.
	specWarnings []manifest.Warning
	// head is the record's first part, made when the spec was generated
	// (encodeHead): its children's bytes are slices of it.
	head []byte
	// recorded: the output comes from a record; outKey, when keep, is
	// the digest it is recorded under once the spec is encoded.
	recorded, keep bool
	outKey         [sha256.Size]byte
}

// renderSpec generates the children of one spec, then decorates and
// encodes each of them.
func renderSpec(ctx context.Context, spec *Item, plan *wavePlan, opts *Options, reuse *reuse) specOutput {
	if err := ctx.Err(); err != nil {
		return specOutput{err: err}
	}
	o := spec.Object
	g, _ := opts.Generators.Lookup(o)
	i := spec.Spec
	gopts := generators.Options{Platform: opts.Platform, KubeVersion: opts.KubeVersion, APIVersions: opts.APIVersions, Root: opts.Root, Scope: opts.Scope, Checked: spec.checked}
	var gen, outKey [sha256.Size]byte
	keyed, kept := false, false
	if reuse != nil {
		var err error
		gen, err = reuse.key(g, o, gopts)
		keyed = err == nil
		if keyed && reuse.outputs != nil {
			outKey, kept = reuse.outputKey(gen, plan, i), true
			if out, wave, ok := reuse.outputs.lookup(outKey, spec); ok {
				spec.checked = nil
				plan.record(i, wave, out.children)
				out.recorded = true
				return out
			}
		}
	}
	r, err := reuse.generate(ctx, g, o, gopts, gen, keyed)
	spec.checked = nil // generated: what Check decoded is needed no more
	if err != nil {
		var me *manifest.Error
		if !errors.As(err, &me) {
			err = &manifest.Error{File: o.Source.File, Line: o.Source.Line, Object: o.Key().String(), Err: err, Ref: o.Ref()}
		}
		return specOutput{err: err}
	}
	out := specOutput{warnings: r.Warnings, specLabels: r.SpecLabels}
	var errs []error
	// The children, with their own waves as numbers: where the generator
	// placed them relative to the spec's base wave, or their own
	// apply-order.
	base := plan.base(i)
	items := make([]*Item, len(r.Objects))
	for j, c := range r.Objects {
		if c.Source.File == "" {
			c.Source = o.Source
		}
		if err := checkKnownAnnotations(c); err != nil {
			errs = append(errs, err)
		}
		own := readApplyOrder(c)
		if off, ok := r.Offsets[c]; ok {
			own = order{n: base + off.Apply, set: true}
		}
		own, err := adoptEngineWaves(c, opts.Engines, own)
		if err != nil {
			errs = append(errs, err)
		}
		items[j] = &Item{Object: c, Role: Child, Spec: i, own: own}
	}
	if err := errors.Join(errs...); err != nil {
		return specOutput{err: err}
	}
	wave, err := plan.place(i, items)
	if err != nil {
		return specOutput{err: err}
	}
	defaults := map[string]string{}
	for _, k := range lifecycleKeys {
		if v, ok := o.Annotation(k); ok && k != inventory.ApplyOrder {
			defaults[k] = v
		}
	}
	for k, v := range r.Defaults {
		if k == inventory.ApplyOrder {
			continue // the plan decides the wave
		}
		nv, err := checkLifecycleValue(k, v)
		if err != nil {
			errs = append(errs, o.FieldError("spec", err))
			continue
		}
		defaults[k] = nv
	}
	digest := &specDigest{spec: o}
	out.children = items[:0]
	for _, it := range items {
		c := it.Object
		if err := checkMetadata(c); err != nil {
			errs = append(errs, err)
			continue
		}
		ws := waves{own: it.own, spec: order{n: wave, set: true}}
		if off, ok := r.Offsets[c]; ok && off.Purge != nil {
			// From the wave the plan placed the spec's objects in, the
			// shift after its dependencies included, as its apply-order.
			purge := wave + *off.Purge
			ws.purge = &purge
		}
		w, err := decorate(it, ws, defaults, o.Name(), nil, digest, true, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.warnings = append(out.warnings, w...)
		it.YAML = manifest.EncodeObject(c)
		if opts.DiscardObjects {
			// The map, and any map reserved for annotations: the
			// generator may reuse both (Release).
			c.Map = nil
			c.ReserveAnnotations(nil)
		}
		out.children = append(out.children, it)
	}
	if r.Release != nil && opts.DiscardObjects && len(errs) == 0 && (reuse == nil || reuse.memo == nil) {
		// Every child is encoded and its map dropped: the generator may
		// reuse the maps (a Memo keeps the result for another render).
		r.Release()
	}
	plan.record(i, wave, out.children)
	out.err = errors.Join(errs...)
	for j, it := range out.children {
		it.idx = j
	}
	if kept && out.err == nil {
		// Recorded once the spec is encoded (Render); the children's
		// bytes are the record's from now on.
		out.keep, out.outKey = true, outKey
		var pieces [][]byte
		out.head, pieces = encodeHead(&out, wave)
		for j, it := range out.children {
			it.YAML = pieces[j]
		}
	}
	return out
}

// specDigest is the digest of a spec's spec and metadata as generated
// from, made when first asked: only a child whose reconcile policy is
// on-object-or-component-change carries it. One spec's children are
// decorated on one goroutine, before the spec itself.
type specDigest struct {
	spec *manifest.Object
	sum  string
}

func (d *specDigest) get() string {
	if d == nil {
		return ""
	}
	if d.sum == "" {
		d.sum = encodedDigest(map[string]any{"spec": d.spec.Map["spec"], "metadata": d.spec.Map["metadata"]})
	}
	return d.sum
}

// childrenDigest is the SHA-256 of the children's bytes in order, each
// followed by "---\n".
func childrenDigest(children []*Item) [sha256.Size]byte {
	h := sha256.New()
	sep := []byte("---\n")
	for _, it := range children {
		h.Write(it.YAML)
		h.Write(sep)
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// decorateInput resolves and, unless the options keep inputs as written,
// writes the labels and annotations of an input object. out is a spec's
// output (nil for pass-through objects) and wave the wave the plan gives
// it: a spec's own apply-order never comes before its last child. With
// KeepInputs, a spec still gets the wave annotations of the dialects when
// its wave moved. A spec whose output comes from a record is not written
// here: its bytes are the record's, and so are the warnings writing it
// gives (out.specWarnings); writeInventories writes it when it must encode
// it after all.
func decorateInput(it *Item, out *specOutput, wave int, opts *Options) ([]manifest.Warning, error) {
	if out == nil {
		return decorate(it, waves{own: it.own}, nil, it.Object.Name(), nil, nil, !opts.KeepInputs, opts)
	}
	w, err := decorate(it, waves{own: it.own}, nil, it.Object.Name(), out.specLabels, nil, false, opts)
	if err != nil {
		return nil, err
	}
	it.lc.ApplyOrder, it.Wave = wave, wave
	if opts.KeepInputs {
		// The object stays as written: where an engine would read another
		// wave from it (Argo CD: its sync-wave, or 0), write the plan's.
		before := maps.Clone(it.Object.Annotations())
		for _, d := range opts.Dialects {
			if own, _, _ := d.Wave(it.Object); own != wave { // none reads as 0
				d.SetWave(it.Object, wave)
			}
		}
		for k, v := range it.Object.Annotations() {
			if old, ok := before[k]; !ok || old != v {
				it.Written = append(it.Written, k)
			}
		}
		sort.Strings(it.Written)
		return w, nil
	}
	if !fromRecord(out, opts) {
		if it.Object.Annotations() == nil {
			// What a spec is given (its waves and policies, their
			// engines' forms, then its inventory and digest) goes into a
			// map of its size, not one grown on the ninth.
			it.Object.ReserveAnnotations(make(map[string]any, specAnnotations))
		}
		out.specWarnings = write(it, out.specLabels, nil, opts)
	}
	return append(w, out.specWarnings...), nil
}

// specAnnotations is the size of the annotations map of a spec written
// without any: ten for a Kaoto with Argo CD's forms, room for more.
const specAnnotations = 14

// fromRecord tells whether the spec of out takes its bytes and its
// warnings from its record, so that decorateInput does not write it
// (KeepInputs writes only what the dialects need, and does it there).
func fromRecord(out *specOutput, opts *Options) bool {
	return out.recorded && !opts.KeepInputs
}

// decorate resolves the item's waves and policies and, when write is set,
// writes labels and annotations. owner names the spec the object belongs
// to (its own name for specs and pass-through objects).
func decorate(it *Item, ws waves, defaults map[string]string, owner string, specLabels map[string]string, specDigest *specDigest, doWrite bool, opts *Options) ([]manifest.Warning, error) {
	o := it.Object
	it.Key = o.Key()
	it.Ref = o.Ref()
	it.rank = kindRank(it.Key.Kind)
	it.defines = definedType(o)
	lc, err := resolve(o, ws, defaults, opts)
	if err != nil {
		return nil, err
	}
	it.lc, it.Wave = lc, lc.ApplyOrder
	it.owner = owner
	if !doWrite {
		return nil, nil
	}
	return write(it, specLabels, specDigest, opts), nil
}

// write writes the labels and annotations of a resolved item.
func write(it *Item, specLabels map[string]string, specDigest *specDigest, opts *Options) []manifest.Warning {
	o := it.Object
	w := stripApplierMarkers(o, opts.markers)
	for k, v := range specLabels {
		if _, ok := o.Labels()[k]; !ok {
			o.SetLabel(k, v)
		}
	}
	addLabels(o, it.owner, opts)
	w = append(w, it.lc.annotate(o, opts, specDigest)...)
	it.lc.Explicit = nil // read by the dialects' Annotate only: not kept for every item
	return w
}

// definedType returns "group/Kind" of the type a CRD defines, or "".
func definedType(o *manifest.Object) string {
	if o.Kind() != "CustomResourceDefinition" || o.Group() != "apiextensions.k8s.io" {
		return ""
	}
	spec, _ := o.Map["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	g, _ := spec["group"].(string)
	kind, _ := names["kind"].(string)
	if kind == "" {
		return ""
	}
	return g + "/" + kind
}

// writeInventories gives each spec its inventory and render digest, which
// depend on its children's bytes in output order, then encodes the spec,
// and leaves in outs what the records keep: the children's output order
// (their places as generated), the digest, the inventory and the spec's
// bytes. A spec whose children come from a record in the order of the
// output takes the record's: the
// same children in the same order give the same inventory and digest, and
// the record's key covers everything else that decides the spec (its
// bytes, the decoration settings, its place in the plan; its wave and
// labels are the record's).
func writeInventories(res *Result, outs []specOutput, opts *Options) {
	children := make([][]*Item, len(res.Specs))
	for _, it := range res.Items { // output order: the digest is stable
		if it.Role == Child {
			children[it.Spec] = append(children[it.Spec], it)
		}
	}
	parallel.Do(len(res.Specs), func(i int) {
		s, out := res.Specs[i], &outs[i]
		order := make([]int, len(children[i]))
		for j, c := range children[i] {
			order[j] = c.idx
		}
		reused := out.recorded && slices.Equal(order, out.order)
		if !reused {
			// The entries are scratch, pooled: Format keeps nothing of them.
			scratch := inventoryEntries.Get().(*[]inventory.Entry)
			entries := slices.Grow((*scratch)[:0], len(children[i]))[:len(children[i])]
			for j, it := range children[i] {
				k := it.Key
				_, version := manifest.SplitAPIVersion(it.Ref.APIVersion)
				entries[j] = inventory.Entry{Group: k.Group, Version: version, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name,
					Hook: it.lc.Hook, PurgeOrder: it.lc.PurgeOrder}
			}
			out.order, out.digest = order, childrenDigest(children[i])
			out.inventory = inventory.Format(entries)
			clear(entries) // no strings held by the pool
			*scratch = entries[:0]
			inventoryEntries.Put(scratch)
		}
		s.Written = append(s.Written, inventory.Inventory, inventory.RenderDigest)
		if reused {
			s.YAML = out.specYAML
			return
		}
		if fromRecord(out, opts) {
			// Not written by decorateInput, and its record's bytes are
			// not these after all (its warnings are the record's, which
			// writing gives again).
			write(s, out.specLabels, nil, opts)
		}
		s.Object.SetAnnotation(inventory.Inventory, out.inventory)
		s.Object.SetAnnotation(inventory.RenderDigest, "sha256:"+hex.EncodeToString(out.digest[:]))
		s.YAML = manifest.EncodeObject(s.Object)
		out.specYAML = s.YAML
	})
}

// inventoryEntries pools writeInventories' scratch entries.
var inventoryEntries = sync.Pool{New: func() any { return new([]inventory.Entry) }}

// encodedDigest is digest of m's YAML, without a copy of it.
func encodedDigest(m map[string]any) string {
	var d string
	manifest.WithEncoded(m, func(y []byte) { d = digest(y) })
	return d
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Stream returns the result as one multi-document YAML stream.
func (r *Result) Stream() []byte {
	n := 0
	for _, it := range r.Items {
		n += len(it.YAML) + 4
	}
	var b bytes.Buffer
	b.Grow(n)
	_ = r.WriteStream(&b)
	return b.Bytes()
}

// WriteStream writes the stream to w without building it in memory.
func (r *Result) WriteStream(w io.Writer) error {
	sep := []byte("---\n")
	for i, it := range r.Items {
		if i > 0 {
			if _, err := w.Write(sep); err != nil {
				return err
			}
		}
		if _, err := w.Write(it.YAML); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSONList writes the result as one JSON v1 List (for jq and other
// JSON tools), items in output order, one per line.
func (r *Result) WriteJSONList(w io.Writer) error {
	if _, err := io.WriteString(w, `{"apiVersion":"v1","kind":"List","items":[`); err != nil {
		return err
	}
	for i, it := range r.Items {
		j, err := yaml.YAMLToJSON(it.YAML)
		if err != nil {
			return fmt.Errorf("%s: %w", manifest.Quote(it.Key.String()), err)
		}
		sep := "\n"
		if i > 0 {
			sep = ",\n"
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		if _, err := w.Write(j); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n]}\n")
	return err
}

// sortedJoin is manifest.JoinSorted: where the engine joins errors for
// reporting.
func sortedJoin(errs []error) error { return manifest.JoinSorted(errs) }
