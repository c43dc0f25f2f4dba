package helm

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/mitchellh/copystructure"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
)

// Helm's template engine offers no way to replace its functions or to
// stop it, so a hostile chart (repeat 300000000, until 2000000000, nested
// range) would run it out of memory or time. Before Helm renders a chart,
// the probe rehearses the same templates with the same values, functions
// and scoping on text/template, in the template sandbox (tmplsandbox, the
// one kustomize's templating uses too): a call that would return more
// than the limits allow, or that runs after the deadline, fails before it
// allocates, and so do a template writing too much, loops and recursion
// over the step and nesting limits. Only a chart that passes is given to
// Helm, whose run then does the same, bounded work. The sandbox also
// tells which templates called
// functions whose result changes on every render (randAlphaNum, genCA,
// now, ...): for those templates the probe is a rehearsal, whose output
// (with the clock moved, see rehearsalClock) is compared with Helm's.

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

// probe is one rehearsal within the template sandbox's limits.
type probe struct {
	b *tmplsandbox.Budget
	// calls maps a template to the nondeterministic functions it called
	// (itself or through include and tpl).
	calls map[string]map[string]bool
	// out holds what the templates that made nondeterministic calls
	// wrote, to compare with what Helm's run writes; with keep, what all
	// templates wrote (tests compare it with Helm's).
	keep bool
	out  map[string]string
}

// newProbe returns a rehearsal within tmplsandbox.Default that stops,
// with ErrBudget, when ctx ends.
func newProbe(ctx context.Context) *probe {
	p := &probe{b: tmplsandbox.New(ctx, tmplsandbox.Default), calls: map[string]map[string]bool{}, out: map[string]string{}}
	p.b.Called = p.note
	return p
}

// template returns the template being rehearsed, "" when none (from any
// goroutine).
func (p *probe) template() string { return p.b.Running() }

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
	p.b.Instrument(t)
	defer p.b.SetRunning("")
	for _, k := range keys {
		if strings.HasPrefix(path.Base(k), "_") {
			continue
		}
		r := tpls[k]
		r.data["Template"] = chartutil.Values{"Name": k, "BasePath": r.basePath}
		p.b.SetRunning(k)
		w := p.b.File()
		if err := t.ExecuteTemplate(w, k, r.data); err != nil {
			if !errors.Is(err, ErrBudget) || p.b.Err() == nil {
				return nil
			}
			return p.failure(k, err)
		}
		if p.keep || len(p.calls[k]) > 0 {
			p.out[k] = strings.ReplaceAll(string(w.Bytes()), "<no value>", "")
		}
	}
	return nil
}

// failure is the sandbox's first limit hit, located at the range or
// template that hit it, else at the innermost template text/template's
// error names, and naming the template k being rendered when that is
// another.
func (p *probe) failure(k string, err error) error {
	where := p.b.Where()
	if where == "" {
		msg := err.Error()
		if i := strings.LastIndex(msg, "template: "); i >= 0 {
			where, _, _ = strings.Cut(msg[i+len("template: "):], ": ")
		}
	}
	if where == "" {
		where = k
	}
	if !strings.HasPrefix(where, k+":") && where != k {
		where += " (rendering " + k + ")"
	}
	return fmt.Errorf("%s: %w", where, p.b.Err())
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

// funcs returns Helm's template functions (the sandbox's with Helm's
// required, fail, lookup and getHostByName, and the rehearsal's clock),
// guarded by the sandbox.
func (p *probe) funcs(t *template.Template, included map[string]int) template.FuncMap {
	f := tmplsandbox.Funcs()
	for k, v := range helmFuncs() {
		f[k] = v
	}
	// The clock of the rehearsal (see rehearsalClock).
	f["now"], f["ago"] = rehearsalClock, rehearsalAgo
	f["include"] = p.include(t, included)
	f["tpl"] = p.tpl(t, included)
	p.b.Guard(f)
	return f
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
		if included[name] > recursionMax {
			return "", fmt.Errorf("rendering template has a nested reference name: %s: unable to execute template", name)
		}
		included[name]++
		w := p.b.Value()
		err := t.ExecuteTemplate(w, name, data)
		included[name]--
		return string(w.Bytes()), err
	}
}

// recursionMax is how deep Helm lets include nest one name.
const recursionMax = 1000

// tpl is Helm's tpl: the text is parsed on a clone of the templates, whose
// include and tpl see the clone. The sandbox bounds how deep tpl calls
// nest (Helm sets no bound: a value that calls tpl on itself recurses
// until memory runs out, each level holding a copy of the chart's
// templates).
func (p *probe) tpl(parent *template.Template, included map[string]int) func(string, any) (string, error) {
	return func(text string, vals any) (string, error) {
		if err := p.b.EnterTpl(); err != nil {
			return "", err
		}
		defer p.b.LeaveTpl()
		t, err := parent.Clone()
		if err != nil {
			return "", err
		}
		t.Option("missingkey=zero")
		fm := template.FuncMap{"include": p.include(t, included), "tpl": p.tpl(t, included)}
		p.b.Guard(fm)
		t.Funcs(fm)
		t, err = t.New(parent.Name()).Parse(text)
		if err != nil {
			return "", err
		}
		p.b.Instrument(t)
		w := p.b.Value()
		if err := t.Execute(w, vals); err != nil {
			return "", err
		}
		return strings.ReplaceAll(string(w.Bytes()), "<no value>", ""), nil
	}
}
