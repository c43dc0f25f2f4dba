package tmplsandbox

import (
	"context"
	"fmt"
	"sync/atomic"
	"text/template"
	"text/template/parse"

	"github.com/wavesmith/wavesmith/generators"
)

// ErrBudget is the one error of a rendering over a limit or past its
// deadline; it is generators.ErrBudget, so errors.Is finds it from either
// generator.
var ErrBudget = generators.ErrBudget

// Limits bound one rendering: a chart's templates (the Helm probe's
// rehearsal) or a templated kustomization folder. A template that hits
// one fails with ErrBudget. Legitimate templates stay far below them.
type Limits struct {
	// Steps bounds the work: a range iteration is a step, the start of a
	// template (template, include, tpl) EnterWeight steps, a function
	// call FuncWeight steps.
	Steps int64
	// Value bounds one value a function, include or tpl returns, in
	// bytes (list elements count 8, map entries 16).
	Value int64
	// Work bounds what all function calls return together, and what the
	// lists and maps they make keep: what templates can accumulate in
	// variables.
	Work int64
	// Output bounds what one template file writes, TotalOutput what all
	// files of the rendering write.
	Output, TotalOutput int64
	// Nesting bounds how deep templates nest (template, include, tpl);
	// TplNesting how deep tpl calls nest (each holds a copy of the
	// templates).
	Nesting, TplNesting int
	// Width bounds printf widths and precisions.
	Width int
	// Cost bounds what key generations and password hashes cost
	// together (funcCost: about tenths of a second of a core).
	Cost int
}

// Default are the limits of every rendering: both generators use them.
var Default = Limits{
	Steps:       10_000_000,
	Value:       8 << 20,
	Work:        256 << 20,
	Output:      16 << 20,
	TotalOutput: 32 << 20,
	Nesting:     1000,
	TplNesting:  100,
	Width:       1 << 16,
	Cost:        50,
}

const (
	// EnterWeight is what the start of a template costs in steps,
	// FuncWeight what a function call costs.
	EnterWeight = 5
	FuncWeight  = 10
)

// markKind is what an instrumentation mark counts.
type markKind int

const (
	markStep  markKind = iota // a range iteration
	markEnter                 // the start of a template (a call, include, tpl)
	markLeave                 // its end
)

// mark is a text node Instrument adds: executing it writes its one-byte
// text, which a Writer recognises by its address (no template text
// shares it), counts and drops. Writing is the cheapest thing a template
// does, so a step costs little.
type mark struct {
	kind  markKind
	where string // file:line of the range or template
}

// Budget accounts one rendering. Its templates run on one goroutine;
// only Running may be called from others.
type Budget struct {
	lim      Limits
	ctx      context.Context
	running  atomic.Pointer[string]
	steps    int64
	work     int64
	output   int64
	cost     int
	nesting  int
	tplDepth int
	err      error // the first limit hit; every later step fails with it
	where    string
	// instrumented holds the trees that carry marks; marks the marks by
	// the address of their text.
	instrumented map[*parse.Tree]bool
	marks        map[*byte]*mark
	// Called, when set, is told every call of a Nondeterministic
	// function (after it returned).
	Called func(name string)
}

// New returns the budget of one rendering within lim that ends, with
// ErrBudget wrapping the context's error, when ctx ends.
func New(ctx context.Context, lim Limits) *Budget {
	return &Budget{lim: lim, ctx: ctx, instrumented: map[*parse.Tree]bool{}, marks: map[*byte]*mark{}}
}

// Limits returns the budget's limits.
func (b *Budget) Limits() Limits { return b.lim }

// SetRunning names the template running now ("" for none); Running
// returns it, from any goroutine.
func (b *Budget) SetRunning(name string) {
	if name == "" {
		b.running.Store(nil)
		return
	}
	b.running.Store(&name)
}

// Running returns the template SetRunning named.
func (b *Budget) Running() string {
	if s := b.running.Load(); s != nil {
		return *s
	}
	return ""
}

// Err returns the first limit hit, nil when none was.
func (b *Budget) Err() error { return b.err }

// Where returns the file:line:column of the range or template whose mark
// hit the limit, "" when no mark did.
func (b *Budget) Where() string { return b.where }

func (b *Budget) fail(format string, args ...any) error {
	if b.err == nil {
		b.err = fmt.Errorf("%w: "+format, append([]any{ErrBudget}, args...)...)
	}
	return b.err
}

// step counts n steps and checks the context.
func (b *Budget) step(n int64) error {
	if b.err != nil {
		return b.err
	}
	b.steps += n
	if b.steps > b.lim.Steps {
		return b.fail("more than %d steps (loop iterations, template and function calls)", b.lim.Steps)
	}
	if b.ctx != nil {
		select {
		case <-b.ctx.Done():
			if b.err == nil {
				b.err = fmt.Errorf("%w: %w", ErrBudget, context.Cause(b.ctx))
			}
			return b.err
		default:
		}
	}
	return nil
}

// spend counts a value of n bytes that what returned.
func (b *Budget) spend(what string, n int64) error {
	if n > b.lim.Value {
		return b.fail("%s returned %d bytes, over the limit of %d for one value", what, n, b.lim.Value)
	}
	return b.hold(n)
}

// hold counts n bytes kept against Work.
func (b *Budget) hold(n int64) error {
	b.work += n
	if b.work > b.lim.Work {
		return b.fail("the functions returned and kept more than %d bytes in all", b.lim.Work)
	}
	return nil
}

// EnterTpl counts the start of a tpl call, refusing one nested deeper
// than TplNesting; LeaveTpl its end.
func (b *Budget) EnterTpl() error {
	if err := b.step(0); err != nil {
		return err
	}
	if b.tplDepth >= b.lim.TplNesting {
		return b.fail("tpl calls nest more than %d deep (does a value call tpl on itself?)", b.lim.TplNesting)
	}
	b.tplDepth++
	return nil
}

// LeaveTpl ends a tpl call EnterTpl counted.
func (b *Budget) LeaveTpl() { b.tplDepth-- }

// Nested sets fm's include and tpl for the templates of set: each renders
// into a bounded buffer (Value); tpl counts its nesting (EnterTpl) and
// instruments the template it parses. clean, when not nil, is applied to
// what they return (a kustomization's templates drop "<no value>").
func (b *Budget) Nested(fm template.FuncMap, set *template.Template, clean func([]byte) []byte) {
	result := func(w *Writer) string {
		if clean != nil {
			return string(clean(w.Bytes()))
		}
		return string(w.Bytes())
	}
	fm["include"] = func(name string, data any) (string, error) {
		w := b.Value()
		if err := set.ExecuteTemplate(w, name, data); err != nil {
			return "", err
		}
		return result(w), nil
	}
	fm["tpl"] = func(text string, data any) (string, error) {
		if err := b.EnterTpl(); err != nil {
			return "", err
		}
		defer b.LeaveTpl()
		t, err := set.Clone()
		if err != nil {
			return "", err
		}
		if t, err = t.New("<tpl>").Parse(text); err != nil {
			return "", err
		}
		b.Instrument(t)
		w := b.Value()
		if err := t.Execute(w, data); err != nil {
			return "", err
		}
		return result(w), nil
	}
}

// Writer collects what a template writes within a limit; it counts and
// drops Instrument's marks.
type Writer struct {
	b     *Budget
	what  string
	buf   []byte
	max   int64
	total bool
}

// File returns a writer for one template file: within Output, and
// counted against TotalOutput.
func (b *Budget) File() *Writer {
	return &Writer{b: b, what: "a template file's", max: b.lim.Output, total: true}
}

// Value returns a writer for an include or a tpl: within Value.
func (b *Budget) Value() *Writer {
	return &Writer{b: b, what: "an include's or tpl's", max: b.lim.Value}
}

// Bytes returns what was written.
func (w *Writer) Bytes() []byte { return w.buf }

func (w *Writer) Write(p []byte) (int, error) {
	if len(p) == 1 {
		if m := w.b.marks[&p[0]]; m != nil {
			if err := w.b.count(m); err != nil {
				return 0, err
			}
			return 1, nil
		}
	}
	if err := w.b.step(0); err != nil {
		return 0, err
	}
	if int64(len(w.buf)+len(p)) > w.max {
		return 0, w.b.fail("%s output of more than %d bytes", w.what, w.max)
	}
	if w.total {
		w.b.output += int64(len(p))
		if w.b.output > w.b.lim.TotalOutput {
			return 0, w.b.fail("templates' output of more than %d bytes in all", w.b.lim.TotalOutput)
		}
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// count executes a mark.
func (b *Budget) count(m *mark) error {
	if b.err != nil {
		return b.err
	}
	var err error
	switch m.kind {
	case markLeave:
		b.nesting--
		return nil
	case markEnter:
		if b.nesting >= b.lim.Nesting {
			err = b.fail("templates nested more than %d deep (template, include, tpl)", b.lim.Nesting)
			break
		}
		b.nesting++
		err = b.step(EnterWeight)
	default:
		err = b.step(1)
	}
	if err != nil && b.where == "" {
		b.where = m.where
	}
	return err
}

// Instrument adds marks to every template of set that has none yet: at
// its start and end, and at the start of every range body, so that
// loops and recursion count steps and see the context end. Call it after
// parsing, and again on a tpl's clone.
func (b *Budget) Instrument(set *template.Template) {
	for _, t := range set.Templates() {
		if t.Tree == nil || t.Tree.Root == nil || b.instrumented[t.Tree] {
			continue
		}
		b.instrumented[t.Tree] = true
		root := t.Tree.Root
		b.instrumentList(t.Tree, root)
		// A template has no early return: every call that does not fail
		// runs to the end of its root list, so enter and leave pair up.
		root.Nodes = append([]parse.Node{b.mark(t.Tree, markEnter, root)}, root.Nodes...)
		root.Nodes = append(root.Nodes, b.mark(t.Tree, markLeave, root))
	}
}

func (b *Budget) instrumentList(tree *parse.Tree, l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.RangeNode:
			if n.List == nil {
				n.List = &parse.ListNode{NodeType: parse.NodeList, Pos: n.Pos}
			}
			b.instrumentList(tree, n.List)
			b.instrumentList(tree, n.ElseList)
			n.List.Nodes = append([]parse.Node{b.mark(tree, markStep, n)}, n.List.Nodes...)
		case *parse.IfNode:
			b.instrumentList(tree, n.List)
			b.instrumentList(tree, n.ElseList)
		case *parse.WithNode:
			b.instrumentList(tree, n.List)
			b.instrumentList(tree, n.ElseList)
		case *parse.ListNode:
			b.instrumentList(tree, n)
		}
	}
}

// mark makes a mark text node for node of tree.
func (b *Budget) mark(tree *parse.Tree, kind markKind, node parse.Node) *parse.TextNode {
	text := []byte{0}
	loc, _ := tree.ErrorContext(node)
	b.marks[&text[0]] = &mark{kind: kind, where: loc}
	return &parse.TextNode{NodeType: parse.NodeText, Pos: node.Position(), Text: text}
}
