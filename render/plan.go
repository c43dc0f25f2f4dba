package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// ErrDependency: a spec dependency is missing, cyclic or out of order.
var ErrDependency = fmt.Errorf("spec dependency")

// wavePlan holds every wave rule of wavesmith; nothing else decides or
// adjusts a wave:
//
//   - a spec's objects default to its base wave: the wave the spec sets
//     (generators.Waver, else its own wavesmith.io/apply-order), else the
//     render default; generators place objects relative to it
//     (generators.Result.Offsets), never at absolute waves;
//   - a spec that depends on others comes after them: its objects are
//     shifted whole (the purge orders its generator placed too), so that the earliest (hooks and CRDs included) lands
//     one wave after the latest object of the specs it depends on; a wave
//     the spec sets must be late enough for that, else it is an error;
//   - a spec itself lands in the wave of its last object, never earlier:
//     engines wait for a spec's health, which waits for its children, so a
//     spec placed before a child would block its own wave forever;
//   - waves stay in -32768..32767: a dependency chain that pushes a spec
//     past the last wave is an error at the spec's dependsOn entry (the
//     other values are checked where they are resolved).
//
// Specs render level by level of their dependencies, so that a dependent's
// wave can follow what its dependencies rendered. The plan is written on
// the Result (Result.Plan), which delivery packages read.
type wavePlan struct {
	specs []*Item
	def   int
	deps  [][]int // spec index -> the spec indices it depends on
	// depFields are the fields naming each of deps (spec.dependsOn[0]).
	depFields [][]string
	levels    [][]int // spec indices; level k depends only on levels < k
	// set is the wave a spec sets, with the field that sets it.
	set []*setWave
	// wave is the wave of each spec itself, once its children rendered.
	wave []int
}

type setWave struct {
	wave  int
	field string
}

// newWavePlan reads the specs' dependencies (a name is required; a missing
// dependency and a cycle are errors naming them) and groups the specs in
// levels.
func newWavePlan(specs []*Item, reg generators.Registry, def int) (*wavePlan, error) {
	n := len(specs)
	p := &wavePlan{specs: specs, def: def, deps: make([][]int, n), depFields: make([][]string, n),
		set: make([]*setWave, n), wave: make([]int, n)}
	byKey := make(map[manifest.Key]int, n)
	for i, it := range specs {
		byKey[it.Object.Key()] = i
	}
	var errs []error
	for i, it := range specs {
		o := it.Object
		g, _ := reg.Lookup(o)
		if w, ok := g.(generators.Waver); ok {
			if v, field, ok := w.Wave(o); ok {
				p.set[i] = &setWave{v, field}
			}
		}
		if p.set[i] == nil && it.own.set {
			p.set[i] = &setWave{it.own.n, annotationPath(inventory.ApplyOrder)}
		}
		d, ok := g.(generators.Dependent)
		if !ok {
			continue
		}
		for _, dep := range d.DependsOn(o) {
			if dep.Name == "" {
				errs = append(errs, o.FieldError(dep.Field+".name", fmt.Errorf("%w: a name is required", ErrDependency)))
				continue
			}
			ns := dep.Namespace
			if ns == "" {
				ns = o.Namespace()
			}
			k, ok := byKey[manifest.Key{Group: dep.Group, Kind: dep.Kind, Namespace: ns, Name: dep.Name}]
			if !ok {
				errs = append(errs, o.FieldError(dep.Field, fmt.Errorf("%w: %s not found among the inputs", ErrDependency, manifest.Quote(dep.Kind+" "+ns+"/"+dep.Name))))
				continue
			}
			p.deps[i] = append(p.deps[i], k)
			p.depFields[i] = append(p.depFields[i], dep.Field)
		}
	}
	if len(errs) > 0 {
		return nil, manifest.Join(errs) // every dependency error at once
	}
	return p, p.levelize()
}

// name names spec i in messages: "Kind namespace/name", quoted when it
// holds control characters (manifest.Quote).
func (p *wavePlan) name(i int) string {
	k := p.specs[i].Object.Key()
	return manifest.Quote(k.Kind + " " + k.Namespace + "/" + k.Name)
}

// levelize groups the specs in levels and refuses cycles.
func (p *wavePlan) levelize() error {
	specs := p.specs
	level := make([]int, len(specs))
	state := make([]int, len(specs)) // 1 visiting, 2 done
	name := p.name
	var visit func(i int, path []int) error
	visit = func(i int, path []int) error {
		switch state[i] {
		case 2:
			return nil
		case 1:
			var names []string
			for j := len(path) - 1; j >= 0; j-- {
				names = append([]string{name(path[j])}, names...)
				if path[j] == i {
					break
				}
			}
			names = append(names, name(i))
			return specs[path[len(path)-1]].Object.FieldError("spec.dependsOn", fmt.Errorf("%w: cycle %s", ErrDependency, strings.Join(names, " -> ")))
		}
		state[i] = 1
		for _, d := range p.deps[i] {
			if err := visit(d, append(path, i)); err != nil {
				return err
			}
			level[i] = max(level[i], level[d]+1)
		}
		state[i] = 2
		return nil
	}
	for i := range specs {
		if err := visit(i, nil); err != nil {
			return err
		}
		for len(p.levels) <= level[i] {
			p.levels = append(p.levels, nil)
		}
		p.levels[level[i]] = append(p.levels[level[i]], i)
	}
	return nil
}

// after returns the wave a dependent of the spec's dependencies must start
// at: one after the latest wave they reach (the dependencies themselves
// included), ok false for a spec without dependencies.
func (p *wavePlan) after(i int) (need int, ok bool) {
	need = math.MinInt
	for _, d := range p.deps[i] {
		need = max(need, p.wave[d]+1)
	}
	return need, len(p.deps[i]) > 0
}

// base returns the wave a spec's objects default to before placement: the
// generator places objects relative to it (Helm hooks before or after).
func (p *wavePlan) base(i int) int {
	if p.set[i] != nil {
		return p.set[i].wave
	}
	if need, ok := p.after(i); ok {
		return need
	}
	return p.def
}

// place shifts the objects a spec generated so that the earliest follows
// its dependencies, and returns the default wave of its objects. The
// children's own apply-orders (Item.own: where the generator placed them,
// its offsets from base made absolute, or the object's own) are shifted
// in place. The plan is the only place that moves a wave.
func (p *wavePlan) place(i int, children []*Item) (int, error) {
	base := p.base(i)
	need, ok := p.after(i)
	if !ok {
		return base, nil
	}
	earliest := base
	for _, c := range children {
		if c.own.set {
			earliest = min(earliest, c.own.n)
		}
	}
	if earliest >= need {
		if p.set[i] != nil {
			return base, nil // the spec's own wave: validation names it
		}
		return base, p.checkRange(i, children, base, 0)
	}
	if s := p.set[i]; s != nil {
		return 0, p.specs[i].Object.FieldError(s.field, fmt.Errorf("%w: wave %d puts its earliest object in wave %d, not after its dependencies (at least %d); remove the wave or set it to at least %d",
			ErrDependency, s.wave, earliest, need, s.wave+need-earliest))
	}
	shift := need - earliest
	if err := p.checkRange(i, children, base, shift); err != nil {
		return 0, err
	}
	for _, c := range children {
		if c.own.set {
			c.own.n += shift
		}
	}
	return base + shift, nil
}

// checkRange refuses a dependency chain that pushes spec i's objects
// (shifted by shift) past the last wave, at the dependsOn entry of the
// latest dependency: the waves beyond the range are the plan's, never
// the user's, so an error about them would name a field the user never
// wrote.
func (p *wavePlan) checkRange(i int, children []*Item, base, shift int) error {
	latest := base
	for _, c := range children {
		if c.own.set {
			latest = max(latest, c.own.n)
		}
	}
	if latest+shift <= inventory.MaxOrder {
		return nil
	}
	j := 0
	for k, d := range p.deps[i] {
		if p.wave[d] > p.wave[p.deps[i][j]] {
			j = k
		}
	}
	d := p.deps[i][j]
	return p.specs[i].Object.FieldError(p.depFields[i][j], fmt.Errorf(
		"%w: depending on %s, whose objects reach wave %d, puts this spec's objects up to wave %d, past the last wave %d; start the chain of dependencies in an earlier wave",
		ErrDependency, p.name(d), p.wave[d], latest+shift, inventory.MaxOrder))
}

// record decides the wave of the spec itself once its children have their
// resolved waves: its placed base wave, or its last child's when later.
func (p *wavePlan) record(i, placed int, children []*Item) {
	w := placed
	for _, c := range children {
		w = max(w, c.Wave)
	}
	p.wave[i] = w
}

// Plan returns the wave plan and tree layout of the result, which delivery
// packages (gitops/*) read.
func (r *Result) Plan() *gitops.Plan {
	paths := r.Paths()
	p := &gitops.Plan{Objects: make([]gitops.Object, len(r.Items)), Specs: make([]gitops.Spec, len(r.Specs))}
	for i, it := range r.Specs {
		p.Specs[i] = gitops.Spec{Key: it.Key, APIVersion: it.Ref.APIVersion, Wave: it.Wave, First: it.Wave, Last: it.Wave, DependsOn: r.deps[i]}
	}
	for i, it := range r.Items {
		p.Objects[i] = gitops.Object{Key: it.Key, APIVersion: it.Ref.APIVersion, Wave: it.Wave, Spec: it.Spec, IsSpec: it.Role == Spec, Path: paths[i]}
		if it.Spec < 0 {
			continue
		}
		s := &p.Specs[it.Spec]
		s.First, s.Last = min(s.First, it.Wave), max(s.Last, it.Wave)
		if it.Role == Spec {
			s.Folder = paths[i][:strings.LastIndexByte(paths[i], '/')]
		}
	}
	return p
}
