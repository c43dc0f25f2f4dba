package kustomize

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"unicode/utf8"

	"github.com/wavesmith/wavesmith/generators/component"
)

// Limits of one rendering of a templated folder. A template that hits one
// fails with ErrBudget naming the template; so does a context that ends
// (the --timeout deadline). Legitimate kustomization templates stay far
// below them.
var (
	// maxSteps bounds the work: a range iteration is a step, a template
	// call (template, include, tpl) enterWeight steps, a function call
	// funcWeight steps. That is a few seconds of work at most. Calls that
	// generate keys or hash passwords count besides by their cost, within
	// component.MaxFuncCost.
	maxSteps int64 = 10_000_000
)

const (
	enterWeight = 5
	funcWeight  = 10
	// maxList bounds the lists that until, untilStep and seq make.
	maxList = 1_000_000
	// maxValue bounds one value a function returns: the bytes of a
	// string, the elements of a list or map.
	maxValue = 8 << 20
	// maxProduced bounds the bytes all function results of a rendering
	// allocate together (a list counts 16 bytes an element).
	maxProduced = 256 << 20
	// maxOutput bounds the output of one template file, maxTotalOutput
	// the output of all.
	maxOutput      = 16 << 20
	maxTotalOutput = 64 << 20
	// maxNesting bounds the nesting of templates (template, include,
	// tpl).
	maxNesting = 1000
	// maxWidth bounds printf widths and precisions.
	maxWidth = 1 << 16
)

// markKind is what an instrumentation mark counts.
type markKind int

const (
	markStep  markKind = iota // a range iteration
	markEnter                 // the start of a template (a call, include, tpl)
	markLeave                 // its end
)

// mark is a text node the instrumentation adds: executing it writes its
// one-byte text, which the limitedWriter recognises by its address (no
// template text shares it), counts and drops. Writing is the cheapest
// thing a template does, so a step costs little.
type mark struct {
	kind  markKind
	where string // file:line of the range or template
}

// budget accounts one rendering. Templates run on one goroutine.
type budget struct {
	ctx      context.Context
	steps    int64
	cost     int // of expensive calls, component.FuncCost
	produced int64
	output   int64
	nesting  int
	err      error // the first limit hit; every later step fails with it
	// where is the file:line of the mark that hit it, if a mark did.
	where string
	// instrumented holds the trees that carry marks; marks the marks by
	// the address of their text.
	instrumented map[*parse.Tree]bool
	marks        map[*byte]*mark
}

func newBudget(ctx context.Context) *budget {
	return &budget{ctx: ctx, instrumented: map[*parse.Tree]bool{}, marks: map[*byte]*mark{}}
}

func (b *budget) fail(format string, args ...any) error {
	if b.err == nil {
		b.err = fmt.Errorf("%w: "+format, append([]any{ErrBudget}, args...)...)
	}
	return b.err
}

// step counts n steps and checks the context.
func (b *budget) step(n int64) error {
	if b.err != nil {
		return b.err
	}
	b.steps += n
	if b.steps > maxSteps {
		return b.fail("more than %d steps (loop iterations, template and function calls)", maxSteps)
	}
	select {
	case <-b.ctx.Done():
		if b.err == nil {
			b.err = fmt.Errorf("%w: %w", ErrBudget, b.ctx.Err())
		}
		return b.err
	default:
	}
	return nil
}

// produce counts the size of a function's result.
func (b *budget) produce(v reflect.Value) error {
	n, size := sizeOf(v)
	if n > maxValue {
		return b.fail("a value of %d %s (at most %d)", n, unit(v), maxValue)
	}
	b.produced += size
	if b.produced > maxProduced {
		return b.fail("the functions returned more than %d bytes in all", maxProduced)
	}
	return nil
}

// sizeOf returns the length of v (bytes, elements) and what it costs.
func sizeOf(v reflect.Value) (n, size int64) {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			return 0, 0
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return 0, 0
	}
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len()), int64(v.Len())
	case reflect.Slice, reflect.Array:
		return int64(v.Len()), int64(v.Len()) * int64(v.Type().Elem().Size())
	case reflect.Map:
		return int64(v.Len()), int64(v.Len()) * 48
	}
	return 0, 0
}

func unit(v reflect.Value) string {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		v = v.Elem()
	}
	if v.IsValid() && v.Kind() == reflect.String {
		return "bytes"
	}
	return "elements"
}

// limitedWriter appends to a buffer and fails beyond max bytes, counting
// them against the budget's total output too when total is set.
type limitedWriter struct {
	b     *budget
	buf   []byte
	max   int
	total bool
}

func (w *limitedWriter) Write(p []byte) (int, error) {
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
	if len(w.buf)+len(p) > w.max {
		return 0, w.b.fail("output of more than %d bytes", w.max)
	}
	if w.total {
		w.b.output += int64(len(p))
		if w.b.output > maxTotalOutput {
			return 0, w.b.fail("templates' output of more than %d bytes in all", maxTotalOutput)
		}
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// guard wraps every function of fm: each call counts steps, arguments that would make a huge value are refused before the
// call, and the result counts against maxValue and maxProduced. A
// function without an error result reports a limit by panicking, which
// text/template turns into an error of the call.
func (b *budget) guard(fm template.FuncMap) {
	for name, fn := range fm {
		v := reflect.ValueOf(fn)
		t := v.Type()
		check := argChecks[name]
		fm[name] = reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
			if err := b.step(funcWeight); err != nil {
				panic(err)
			}
			if c := component.FuncCost(name, args); c > 0 {
				if b.cost += c; b.cost > component.MaxFuncCost {
					panic(b.fail("%s", component.FuncCostError(name, b.cost)))
				}
			}
			if check != nil {
				if err := check(args); err != nil {
					panic(b.fail("%s: %v", name, err))
				}
			}
			var out []reflect.Value
			if t.IsVariadic() {
				out = v.CallSlice(args)
			} else {
				out = v.Call(args)
			}
			if mergeFuncs[name] && cyclic(args[0]) {
				panic(b.fail("%s: the result would contain itself", name))
			}
			if len(out) > 0 {
				if err := b.produce(out[0]); err != nil {
					panic(err)
				}
			}
			return out
		}).Interface()
	}
}

// count executes a mark.
func (b *budget) count(m *mark) error {
	if b.err != nil {
		return b.err
	}
	var err error
	switch m.kind {
	case markLeave:
		b.nesting--
		return nil
	case markEnter:
		if b.nesting >= maxNesting {
			err = b.fail("templates nested more than %d deep (template, include, tpl)", maxNesting)
			break
		}
		b.nesting++
		err = b.step(enterWeight)
	default:
		err = b.step(1)
	}
	if err != nil && b.where == "" {
		b.where = m.where
	}
	return err
}

// mergeFuncs merge into their first argument; the result is checked for
// a cycle (a map reaching itself), which printing would follow forever.
var mergeFuncs = map[string]bool{"merge": true, "mergeOverwrite": true, "mustMerge": true, "mustMergeOverwrite": true}

// argChecks refuse arguments that would make a value beyond the limits
// before the function allocates it.
var argChecks = map[string]func(args []reflect.Value) error{
	"set": func(a []reflect.Value) error {
		if d := a[0].Pointer(); d != 0 && reaches(a[2], d, map[uintptr]bool{}) {
			return errors.New("the dict would contain itself (a cycle)")
		}
		return nil
	},
	"repeat": func(a []reflect.Value) error {
		return product(toInt64(a[0]), int64(len(toStr(a[1]))), maxValue)
	},
	"until": func(a []reflect.Value) error { return listLen(toInt64(a[0]), 0, 1) },
	"untilStep": func(a []reflect.Value) error {
		return listLen(toInt64(a[1]), toInt64(a[0]), toInt64(a[2]))
	},
	"seq": func(a []reflect.Value) error {
		n := a[0].Len()
		ints := make([]int64, n)
		for i := range n {
			ints[i] = toInt64(a[0].Index(i))
		}
		switch n {
		case 1:
			return listLen(ints[0], 0, 1)
		case 2:
			return listLen(ints[1], ints[0], 1)
		case 3:
			return listLen(ints[2], ints[0], ints[1])
		}
		return nil
	},
	"indent":  func(a []reflect.Value) error { return indentSize(toInt64(a[0]), toStr(a[1])) },
	"nindent": func(a []reflect.Value) error { return indentSize(toInt64(a[0]), toStr(a[1])) },
	"replace": func(a []reflect.Value) error {
		return replaceSize(toStr(a[0]), toStr(a[1]), toStr(a[2]))
	},
	"wrapWith": func(a []reflect.Value) error {
		s, with := toStr(a[2]), toStr(a[1])
		return product(int64(len(s))+1, int64(len(with))+1, maxValue)
	},
	"randAlphaNum": countArg, "randAlpha": countArg, "randAscii": countArg, "randNumeric": countArg, "randBytes": countArg,
	"printf": func(a []reflect.Value) error { return printfWidths(toStr(a[0]), a[1]) },
	"regexReplaceAll": func(a []reflect.Value) error {
		return regexReplaceSize(toStr(a[1]), toStr(a[2]))
	},
	"mustRegexReplaceAll": func(a []reflect.Value) error {
		return regexReplaceSize(toStr(a[1]), toStr(a[2]))
	},
	"regexReplaceAllLiteral": func(a []reflect.Value) error {
		return regexReplaceSize(toStr(a[1]), toStr(a[2]))
	},
	"mustRegexReplaceAllLiteral": func(a []reflect.Value) error {
		return regexReplaceSize(toStr(a[1]), toStr(a[2]))
	},
}

// reaches reports whether v is or contains the map at target.
func reaches(v reflect.Value, target uintptr, seen map[uintptr]bool) bool {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map:
		p := v.Pointer()
		if p == target {
			return true
		}
		if seen[p] {
			return false
		}
		seen[p] = true
		for it := v.MapRange(); it.Next(); {
			if reaches(it.Value(), target, seen) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if reaches(v.Index(i), target, seen) {
				return true
			}
		}
	}
	return false
}

// cyclic reports whether a map reachable from v reaches itself.
func cyclic(v reflect.Value) bool {
	const (
		active = 1
		done   = 2
	)
	state := map[uintptr]int{}
	var visit func(v reflect.Value) bool
	visit = func(v reflect.Value) bool {
		for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
			if v.IsNil() {
				return false
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Map:
			p := v.Pointer()
			switch state[p] {
			case active:
				return true
			case done:
				return false
			}
			state[p] = active
			for it := v.MapRange(); it.Next(); {
				if visit(it.Value()) {
					return true
				}
			}
			state[p] = done
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				if visit(v.Index(i)) {
					return true
				}
			}
		}
		return false
	}
	return visit(v)
}

func countArg(a []reflect.Value) error { return product(toInt64(a[0]), 1, maxValue) }

func product(n, size, max int64) error {
	if n > 0 && size > 0 && n > max/size {
		return fmt.Errorf("would make a value of %d×%d bytes (at most %d)", n, size, max)
	}
	return nil
}

// listLen checks the length of the list from start to stop by step.
func listLen(stop, start, step int64) error {
	if step == 0 {
		return nil
	}
	n := (stop - start) / step
	if n > maxList {
		return fmt.Errorf("would make a list of %d elements (at most %d)", n, maxList)
	}
	return nil
}

func indentSize(spaces int64, s string) error {
	lines := int64(1)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines++
		}
	}
	return product(spaces, lines, maxValue)
}

func replaceSize(old, repl, s string) error {
	if len(repl) <= len(old) {
		return nil
	}
	n := int64(utf8.RuneCountInString(s)) + 1 // matches of ""
	if old != "" {
		n = int64(len(s)/len(old)) + 1
	}
	return product(n, int64(len(repl)), maxValue)
}

// regexReplaceSize bounds a regexp replacement: at most one match per
// byte plus one, each replaced by repl with its expansions (at most the
// whole string each).
func regexReplaceSize(s, repl string) error {
	per := int64(len(repl))
	for i := 0; i < len(repl); i++ {
		if repl[i] == '$' {
			per += int64(len(s))
		}
	}
	return product(int64(len(s))+1, per, maxValue)
}

// printfWidths refuses widths and precisions beyond maxWidth, given as
// digits or by * from the arguments.
func printfWidths(format string, args reflect.Value) error {
	star := false
	number := func(i int) (int, error) {
		j := i
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			j++
		}
		if j > i {
			if n, err := strconv.Atoi(format[i:j]); err != nil || n > maxWidth {
				return j, fmt.Errorf("width or precision %s (at most %d)", format[i:j], maxWidth)
			}
		}
		return j, nil
	}
	// skip passes an argument index [n] and notes a *.
	skip := func(i int) int {
		if i < len(format) && format[i] == '[' {
			if k := strings.IndexByte(format[i:], ']'); k > 0 {
				i += k + 1
			}
		}
		if i < len(format) && format[i] == '*' {
			star = true
			i++
		}
		return i
	}
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		var err error
		if i, err = number(skip(i)); err != nil {
			return err
		}
		if i < len(format) && format[i] == '.' {
			if i, err = number(skip(i + 1)); err != nil {
				return err
			}
		}
		i = skip(i) // an index before the verb; the loop passes the verb
	}
	if star {
		for i := range args.Len() {
			if n, ok := intValue(args.Index(i)); ok && (n > maxWidth || n < -maxWidth) {
				return fmt.Errorf("width or precision %d from the arguments (at most %d)", n, maxWidth)
			}
		}
	}
	return nil
}

func intValue(v reflect.Value) (int64, bool) {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if v.Uint() > 1<<62 {
			return 1 << 62, true
		}
		return int64(v.Uint()), true
	}
	return 0, false
}

// toInt64 reads an integer argument of any type (sprig converts
// interface{} arguments with toInt-like rules; an unknown one counts 0).
func toInt64(v reflect.Value) int64 {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if n, ok := intValue(v); ok {
		return n
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); f < 1<<62 {
			return int64(f)
		}
		return 1 << 62
	case reflect.String:
		n, _ := strconv.ParseInt(v.String(), 10, 64)
		return n
	}
	return 0
}

func toStr(v reflect.Value) string {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.String {
		return v.String()
	}
	if v.IsValid() && v.CanInterface() {
		return fmt.Sprint(v.Interface())
	}
	return ""
}

// instrument adds marks to every template of set that has none yet: at
// its start and end, and at the start of every range body, so that
// loops and recursion count steps and see the context end.
func (b *budget) instrument(set *template.Template) {
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

func (b *budget) instrumentList(tree *parse.Tree, l *parse.ListNode) {
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
func (b *budget) mark(tree *parse.Tree, kind markKind, node parse.Node) *parse.TextNode {
	text := []byte{0}
	loc, _ := tree.ErrorContext(node)
	b.marks[&text[0]] = &mark{kind: kind, where: loc}
	return &parse.TextNode{NodeType: parse.NodeText, Pos: node.Position(), Text: text}
}
