package helm

import (
	"errors"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"github.com/mitchellh/copystructure"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/wavesmith/wavesmith/generators/component"
)

// Helm's template engine offers no way to replace its functions or to
// stop it, so a hostile chart (repeat 300000000, until 2000000000, nested
// range) would run it out of memory or time. Before Helm renders a chart,
// the probe rehearses the same templates with the same values, functions
// and scoping on text/template, with every function wrapped: a call that
// would return more than the limits allow, or that runs after the
// deadline, fails before it allocates, and so does a template writing
// too much. Only a chart that passes is given to Helm, whose run then does
// the same, bounded work. The wrappers also note which templates called
// functions whose result changes on every render (randAlphaNum, genCA,
// now, ...): for those templates the probe is a rehearsal, whose output
// (with the clock moved, see rehearsalClock) is compared with Helm's.

// limits bound one chart's templates.
type limits struct {
	// value is what one function call or include may return, in bytes
	// (list and map entries count 8 and 16).
	value int64
	// output is what all templates of the chart may write together.
	output int64
	// work is what all function calls may return together: it bounds
	// what templates can accumulate in variables.
	work int64
}

var defaultLimits = limits{value: 16 << 20, output: 32 << 20, work: 256 << 20}

// budgetError is a probe failure; it matches ErrBudget.
type budgetError struct{ msg string }

func (e *budgetError) Error() string        { return e.msg }
func (e *budgetError) Is(target error) bool { return target == ErrBudget }

func overBudget(format string, args ...any) *budgetError {
	return &budgetError{msg: fmt.Sprintf(format, args...)}
}

// rehearsalClock is the probe's clock: the time shifted by a year, a
// month, a day, an hour, a minute, a second, a millisecond, a microsecond
// and a nanosecond (and so by 2 to 6 weekdays), so that a template whose
// output depends on the time, at any of these granularities, writes
// something else in the probe than in Helm's run a moment later. A
// template calling now only to check a duration writes the same.
func rehearsalClock() time.Time { return rehearsalShift(time.Now()) }

func rehearsalShift(t time.Time) time.Time {
	return t.AddDate(1, 1, 1).Add(time.Hour + time.Minute + time.Second + time.Millisecond + time.Microsecond + time.Nanosecond)
}

// rehearsalAgo is sprig's ago on the probe's clock.
func rehearsalAgo(date any) string {
	now := rehearsalClock()
	t := now
	switch d := date.(type) {
	case time.Time:
		t = d
	case int64:
		t = time.Unix(d, 0)
	case int:
		t = time.Unix(int64(d), 0)
	}
	return now.Sub(t).Round(time.Second).String()
}

// nondeterministic are the functions whose result changes from one
// render to the next.
var nondeterministic = map[string]bool{
	"randAlphaNum": true, "randAlpha": true, "randNumeric": true, "randAscii": true, "randBytes": true,
	"randInt": true, "shuffle": true, "uuidv4": true, "now": true, "ago": true,
	"genPrivateKey": true, "genCA": true, "genCAWithKey": true, "genSelfSignedCert": true,
	"genSelfSignedCertWithKey": true, "genSignedCert": true, "genSignedCertWithKey": true,
	"encryptAES": true, "bcrypt": true, "htpasswd": true,
}

// serializing functions print or copy their arguments whole: a small
// structure sharing its parts can print to a huge text, so their
// arguments are measured before the call.
var serializing = map[string]bool{
	"toYaml": true, "toYamlPretty": true, "toJson": true, "toPrettyJson": true, "toRawJson": true,
	"mustToJson": true, "mustToPrettyJson": true, "mustToRawJson": true, "toToml": true,
	"toString": true, "toStrings": true, "print": true, "printf": true, "println": true,
	"quote": true, "squote": true, "cat": true, "join": true, "deepCopy": true, "mustDeepCopy": true,
}

// storing functions keep their arguments in the list or map they return:
// the strings they keep count again, so that a growing list of, say,
// .Files.Get results (which no wrapper sees made) counts what it holds.
var storing = map[string]bool{
	"list": true, "tuple": true, "dict": true, "append": true, "push": true, "mustAppend": true,
	"mustPush": true, "prepend": true, "mustPrepend": true, "set": true, "concat": true,
	"merge": true, "mergeOverwrite": true, "mustMerge": true, "mustMergeOverwrite": true,
}

// probe is one rehearsal.
type probe struct {
	lim     limits
	stopped atomic.Bool
	work    int64
	output  int64
	// cost is what expensive calls (component.FuncCost) cost so far.
	cost    int
	running atomic.Pointer[string]
	// tplDepth is how deep tpl calls nest now.
	tplDepth int
	// calls maps a template to the nondeterministic functions it called
	// (itself or through include and tpl).
	calls map[string]map[string]bool
	// out holds what the templates that made nondeterministic calls
	// wrote, to compare with what Helm's run writes; with keep, what all
	// templates wrote (tests compare it with Helm's).
	keep bool
	out  map[string]string
}

func newProbe(lim limits) *probe {
	return &probe{lim: lim, calls: map[string]map[string]bool{}, out: map[string]string{}}
}

// stop makes the next function call or write fail.
func (p *probe) stop() { p.stopped.Store(true) }

// template returns the template being rehearsed, "" when none.
func (p *probe) template() string {
	if s := p.running.Load(); s != nil {
		return *s
	}
	return ""
}

func (p *probe) check() {
	if p.stopped.Load() {
		panic(overBudget("stopped at the deadline"))
	}
}

// spend counts n bytes returned by what; a single value over the limit or
// the total over the work budget fails.
func (p *probe) spend(what string, n int64) {
	if n > p.lim.value {
		panic(overBudget("%s returned %d bytes, over the limit of %d for one value", what, n, p.lim.value))
	}
	p.work += n
	if p.work > p.lim.work {
		panic(overBudget("the chart's functions returned and kept more than %d bytes in all", p.lim.work))
	}
}

// hold counts n bytes a function keeps from its arguments.
func (p *probe) hold(n int64) {
	p.work += n
	if p.work > p.lim.work {
		panic(overBudget("the chart's functions returned and kept more than %d bytes in all", p.lim.work))
	}
}

// renderable is a template with the data it runs with.
type renderable struct {
	text     string
	data     map[string]any
	basePath string
}

// run rehearses the templates of chrt (with dependencies processed) with
// vals (from chartutil.ToRenderValues). It returns nil when the probe
// finds nothing over budget, also when a template fails otherwise: Helm
// reports those failures itself.
func (p *probe) run(chrt *chart.Chart, vals chartutil.Values) error {
	cp, err := copystructure.Copy(map[string]any(vals))
	if err != nil {
		return nil // Helm renders without the probe's protection
	}
	tpls := map[string]renderable{}
	collect(chrt, tpls, cp.(map[string]any))
	keys := make([]string, 0, len(tpls))
	for k := range tpls {
		keys = append(keys, k)
	}
	// Helm's parse order: deeper paths first, then reverse byte order, so
	// that a parent's defines replace its subcharts'.
	sort.Slice(keys, func(i, j int) bool {
		ci, cj := strings.Count(keys[i], "/"), strings.Count(keys[j], "/")
		if ci != cj {
			return ci > cj
		}
		return keys[i] > keys[j]
	})
	t := template.New("gotpl").Option("missingkey=zero")
	t.Funcs(p.funcs(t, map[string]int{}))
	for _, k := range keys {
		if _, err := t.New(k).Parse(tpls[k].text); err != nil {
			return nil
		}
	}
	for _, k := range keys {
		if strings.HasPrefix(path.Base(k), "_") {
			continue
		}
		r := tpls[k]
		r.data["Template"] = chartutil.Values{"Name": k, "BasePath": r.basePath}
		name := k
		p.running.Store(&name)
		w := &budgetWriter{p: p, what: "a template", limit: p.lim.output, total: &p.output, keep: true}
		if err := t.ExecuteTemplate(w, k, r.data); err != nil {
			if !errors.Is(err, ErrBudget) {
				return nil
			}
			msg := strings.TrimPrefix(err.Error(), "template: ")
			if i := strings.LastIndex(msg, "template: "); i >= 0 {
				// Through includes: the outermost place and the last step.
				outer, _, _ := strings.Cut(msg, ": executing")
				msg = outer + ": ... " + msg[i+len("template: "):]
			}
			if !strings.HasPrefix(msg, k) {
				msg = k + ": " + msg
			}
			return &budgetError{msg: msg}
		}
		if p.keep || len(p.calls[k]) > 0 {
			p.out[k] = strings.ReplaceAll(w.b.String(), "<no value>", "")
		}
	}
	p.running.Store(nil)
	return nil
}

// collect gathers the templates of c and its dependencies with the data
// each runs with, scoped as Helm scopes them: a subchart sees its own
// part of its parent's values; library charts offer only their partials.
func collect(c *chart.Chart, out map[string]renderable, parent map[string]any) map[string]any {
	subcharts := map[string]any{}
	next := map[string]any{
		"Chart": struct {
			chart.Metadata
			IsRoot bool
		}{*c.Metadata, c.IsRoot()},
		"Files":        newFiles(c.Files),
		"Release":      parent["Release"],
		"Capabilities": parent["Capabilities"],
		"Values":       make(chartutil.Values),
		"Subcharts":    subcharts,
	}
	if c.IsRoot() {
		next["Values"] = parent["Values"]
	} else if vs, err := chartutil.Values(parent).Table("Values." + c.Name()); err == nil {
		next["Values"] = vs
	}
	for _, child := range c.Dependencies() {
		subcharts[child.Name()] = collect(child, out, next)
	}
	library := strings.EqualFold(c.Metadata.Type, "library")
	for _, t := range c.Templates {
		if t == nil || (library && !strings.HasPrefix(path.Base(t.Name), "_")) {
			continue
		}
		out[path.Join(c.ChartFullPath(), t.Name)] = renderable{text: string(t.Data), data: next, basePath: path.Join(c.ChartFullPath(), "templates")}
	}
	return next
}

// funcs returns Helm's template functions, wrapped.
func (p *probe) funcs(t *template.Template, included map[string]int) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	for k, v := range helmFuncs() {
		f[k] = v
	}
	// The clock of the rehearsal (see rehearsalClock).
	f["now"], f["ago"] = rehearsalClock, rehearsalAgo
	// text/template's own printers, so that they are measured too.
	f["print"], f["printf"], f["println"] = fmt.Sprint, fmt.Sprintf, fmt.Sprintln
	for name, fn := range f {
		f[name] = p.wrap(name, fn)
	}
	f["include"] = p.include(t, included)
	f["tpl"] = p.tpl(t, included)
	return f
}

// wrap returns fn with the probe's checks around it.
func (p *probe) wrap(name string, fn any) any {
	v := reflect.ValueOf(fn)
	typ := v.Type()
	guard, nondet, serial, store := guards[name], nondeterministic[name], serializing[name], storing[name]
	return reflect.MakeFunc(typ, func(args []reflect.Value) []reflect.Value {
		p.check()
		if c := component.FuncCost(name, args); c > 0 {
			if p.cost += c; p.cost > component.MaxFuncCost {
				panic(overBudget("%s", component.FuncCostError(name, p.cost)))
			}
		}
		if guard != nil {
			if n := guard(args, p.lim.value); n > p.lim.value {
				panic(overBudget("%s would return about %d bytes, over the limit of %d for one value", name, n, p.lim.value))
			}
		}
		if serial {
			var n int64
			for _, a := range args {
				n += deepSize(a, p.lim.value-n, 0)
			}
			if n > p.lim.value {
				panic(overBudget("%s would print more than %d bytes", name, p.lim.value))
			}
		}
		if store {
			var n int64
			for i, a := range args {
				n += keptSize(a, typ.IsVariadic() && i == len(args)-1)
			}
			p.hold(n)
		}
		var out []reflect.Value
		if typ.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		if nondet {
			p.note(name)
		}
		if len(out) > 0 {
			p.spend(name, shallowSize(out[0]))
		}
		return out
	}).Interface()
}

// note records a nondeterministic call by the running template.
func (p *probe) note(fn string) {
	t := p.template()
	if p.calls[t] == nil {
		p.calls[t] = map[string]bool{}
	}
	p.calls[t][fn] = true
}

// include is Helm's include, writing into a bounded buffer.
func (p *probe) include(t *template.Template, included map[string]int) func(string, any) (string, error) {
	return func(name string, data any) (string, error) {
		p.check()
		if included[name] > recursionMax {
			return "", fmt.Errorf("rendering template has a nested reference name: %s: unable to execute template", name)
		}
		included[name]++
		w := &budgetWriter{p: p, what: "include " + name, limit: p.lim.value, keep: true}
		err := t.ExecuteTemplate(w, name, data)
		included[name]--
		if err == nil {
			p.spend("include "+name, w.n)
		}
		return w.b.String(), err
	}
}

// recursionMax is how deep Helm lets include nest one name.
const recursionMax = 1000

// tplDepthMax is how deep the probe lets tpl calls nest. Helm sets no
// bound: a value that calls tpl on itself recurses until memory runs
// out, each level holding a copy of the chart's templates.
const tplDepthMax = 100

// tpl is Helm's tpl: the text is parsed on a clone of the templates, whose
// include and tpl see the clone.
func (p *probe) tpl(parent *template.Template, included map[string]int) func(string, any) (string, error) {
	return func(text string, vals any) (string, error) {
		p.check()
		if p.tplDepth >= tplDepthMax {
			return "", overBudget("tpl calls nest more than %d deep (does a value call tpl on itself?)", tplDepthMax)
		}
		p.tplDepth++
		defer func() { p.tplDepth-- }()
		t, err := parent.Clone()
		if err != nil {
			return "", err
		}
		t.Option("missingkey=zero")
		t.Funcs(template.FuncMap{"include": p.include(t, included), "tpl": p.tpl(t, included)})
		t, err = t.New(parent.Name()).Parse(text)
		if err != nil {
			return "", err
		}
		w := &budgetWriter{p: p, what: "tpl", limit: p.lim.value, keep: true}
		if err := t.Execute(w, vals); err != nil {
			return "", err
		}
		p.spend("tpl", w.n)
		return strings.ReplaceAll(w.b.String(), "<no value>", ""), nil
	}
}

// budgetWriter counts what a template writes, failing over its limit or
// after the deadline; it keeps the text only when asked.
type budgetWriter struct {
	p     *probe
	what  string
	limit int64
	n     int64
	total *int64 // shared by all templates, nil for include and tpl
	keep  bool
	b     strings.Builder
}

func (w *budgetWriter) Write(b []byte) (int, error) {
	if w.p.stopped.Load() {
		return 0, overBudget("stopped at the deadline")
	}
	w.n += int64(len(b))
	if w.n > w.limit {
		return 0, overBudget("%s writes more than %d bytes", w.what, w.limit)
	}
	if w.total != nil {
		*w.total += int64(len(b))
		if *w.total > w.p.lim.output {
			return 0, overBudget("the chart's templates write more than %d bytes", w.p.lim.output)
		}
	}
	if w.keep {
		w.b.Write(b)
	}
	return len(b), nil
}
