package tmplsandbox

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"text/template"
	"unicode/utf8"
)

// Guard wraps every function of fm in place. Each call counts
// FuncWeight steps and its cost (funcCost); arguments that would make a
// value over Value are refused before the call (estimates), and so are
// arguments a serializing function would print to more than Value; what
// a storing function keeps and what every function returns count against
// Work. A function without an error result reports a limit by
// panicking, which text/template turns into an error of the call.
func (b *Budget) Guard(fm template.FuncMap) {
	for name, fn := range fm {
		fm[name] = b.wrap(name, fn)
	}
}

func (b *Budget) wrap(name string, fn any) any {
	v := reflect.ValueOf(fn)
	typ := v.Type()
	estimate, check := estimates[name], checks[name]
	nondet, serial, store, merge := nondeterministic[name], serializing[name], storing[name], merging[name]
	return reflect.MakeFunc(typ, func(args []reflect.Value) []reflect.Value {
		if err := b.step(FuncWeight); err != nil {
			panic(err)
		}
		if c := funcCost(name, args); c > 0 {
			if b.cost += c; b.cost > b.lim.Cost {
				panic(b.fail("%s: key generations and password hashes cost %d, more than the %d (about %d s of a core) templates may spend in one rendering", name, b.cost, b.lim.Cost, b.lim.Cost/10))
			}
		}
		if check != nil {
			if err := check(b, args); err != nil {
				panic(b.fail("%s: %v", name, err))
			}
		}
		if estimate != nil {
			if n := estimate(args, b.lim.Value); n > b.lim.Value {
				panic(b.fail("%s would return about %d bytes, over the limit of %d for one value", name, n, b.lim.Value))
			}
		}
		if serial {
			var n int64
			for _, a := range args {
				n += deepSize(a, b.lim.Value-n, 0)
			}
			if n > b.lim.Value {
				panic(b.fail("%s would print more than %d bytes", name, b.lim.Value))
			}
		}
		if store {
			var n int64
			for i, a := range args {
				n += keptSize(a, typ.IsVariadic() && i == len(args)-1)
			}
			if err := b.hold(n); err != nil {
				panic(err)
			}
		}
		var out []reflect.Value
		if typ.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		if merge && len(args) > 0 && cyclic(args[0]) {
			panic(b.fail("%s: the result would contain itself (a cycle)", name))
		}
		if nondet {
			nondetCalls.Add(1)
			if b.Called != nil {
				b.Called(name)
			}
		}
		if len(out) > 0 {
			if err := b.spend(name, shallowSize(out[0])); err != nil {
				panic(err)
			}
		}
		return out
	}).Interface()
}

// nondetCalls counts the calls of Nondeterministic functions that
// templates made in this process.
var nondetCalls atomic.Int64

// NondeterministicCalls returns how many calls of Nondeterministic
// functions templates made in this process so far: a render during which
// it grew may give other output when run again, so a cache of whole
// renders keeps none of those (a cached result must be what a full
// render gives).
func NondeterministicCalls() int64 { return nondetCalls.Load() }

// Nondeterministic reports whether the function name returns something
// else on every call (random values, keys, the clock).
func Nondeterministic(name string) bool { return nondeterministic[name] }

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
	"toYaml": true, "toYamlPretty": true, "mustToYaml": true, "toJson": true, "toPrettyJson": true, "toRawJson": true,
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

// merging functions merge into their first argument; the result is
// checked for a cycle (a map reaching itself), which printing would
// follow forever.
var merging = map[string]bool{"merge": true, "mergeOverwrite": true, "mustMerge": true, "mustMergeOverwrite": true}

// checks refuse arguments that no estimate covers.
var checks = map[string]func(b *Budget, args []reflect.Value) error{
	"set": func(_ *Budget, a []reflect.Value) error {
		if d := a[0].Pointer(); d != 0 && reaches(a[2], d, map[uintptr]bool{}) {
			return fmt.Errorf("the dict would contain itself (a cycle)")
		}
		return nil
	},
	"printf": func(b *Budget, a []reflect.Value) error { return printfWidths(a[0].String(), a[1], b.lim.Width) },
}

// estimates bound, from the arguments, the size of what a function would
// return, for the functions whose result can exceed their inputs by far.
// limit lets an estimate stop early once it is over.
var estimates = map[string]func(args []reflect.Value, limit int64) int64{
	"repeat": func(a []reflect.Value, _ int64) int64 { return mulSat(a[0].Int(), int64(a[1].Len())) },
	"until": func(a []reflect.Value, _ int64) int64 {
		n := a[0].Int()
		if n < 0 {
			return mulSat(steps(0, n, -1), 8)
		}
		return mulSat(steps(0, n, 1), 8)
	},
	"untilStep":    func(a []reflect.Value, _ int64) int64 { return mulSat(steps(a[0].Int(), a[1].Int(), a[2].Int()), 8) },
	"seq":          func(a []reflect.Value, _ int64) int64 { return mulSat(seqLen(a[0]), 24) },
	"indent":       indentSize(0),
	"nindent":      indentSize(1),
	"wrapWith":     func(a []reflect.Value, _ int64) int64 { return mulSat(int64(a[2].Len())+1, int64(a[1].Len())+1) },
	"randAlphaNum": func(a []reflect.Value, _ int64) int64 { return a[0].Int() },
	"randAlpha":    func(a []reflect.Value, _ int64) int64 { return a[0].Int() },
	"randAscii":    func(a []reflect.Value, _ int64) int64 { return a[0].Int() },
	"randNumeric":  func(a []reflect.Value, _ int64) int64 { return a[0].Int() },
	"randBytes":    func(a []reflect.Value, _ int64) int64 { return mulSat(a[0].Int(), 3) },
	"replace": func(a []reflect.Value, _ int64) int64 {
		old, repl, src := a[0].String(), a[1].String(), a[2].String()
		if old == "" {
			return addSat(int64(len(src)), mulSat(int64(utf8.RuneCountInString(src)+1), int64(len(repl))))
		}
		return addSat(int64(len(src)), mulSat(int64(strings.Count(src, old)), int64(max(len(repl)-len(old), 0))))
	},
	"regexReplaceAll":            regexSize(false),
	"mustRegexReplaceAll":        regexSize(false),
	"regexReplaceAllLiteral":     regexSize(true),
	"mustRegexReplaceAllLiteral": regexSize(true),
}

// steps is how many values sprig's untilStep(start, stop, step) gives.
func steps(start, stop, step int64) int64 {
	var span, by uint64
	switch {
	case stop < start && step < 0:
		span, by = uint64(start)-uint64(stop), uint64(-step)
	case stop > start && step > 0:
		span, by = uint64(stop)-uint64(start), uint64(step)
	default:
		return 0
	}
	n := (span + by - 1) / by
	if n > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}

// seqLen is how many numbers sprig's seq prints for its arguments.
func seqLen(params reflect.Value) int64 {
	p := make([]int64, params.Len())
	for i := range p {
		p[i] = params.Index(i).Int()
	}
	sign := func(start, end int64) int64 {
		if end < start {
			return -1
		}
		return 1
	}
	switch len(p) {
	case 1:
		inc := sign(1, p[0])
		return steps(1, p[0]+inc, inc)
	case 2:
		inc := sign(p[0], p[1])
		return steps(p[0], p[1]+inc, inc)
	case 3:
		inc := sign(p[0], p[2])
		if inc < 0 && p[1] > 0 {
			return 0
		}
		return steps(p[0], p[2]+inc, p[1])
	}
	return 0
}

func indentSize(extra int64) func([]reflect.Value, int64) int64 {
	return func(a []reflect.Value, _ int64) int64 {
		spaces, s := a[0].Int(), a[1].String()
		return addSat(int64(len(s))+extra, mulSat(spaces, int64(strings.Count(s, "\n")+1)))
	}
}

// regexSize bounds a regexp replacement: every expansion of the
// replacement text, plus, for each $ in it, at most the whole input (the
// matches do not overlap).
func regexSize(literal bool) func([]reflect.Value, int64) int64 {
	return func(a []reflect.Value, limit int64) int64 {
		s, repl := a[1].String(), a[2].String()
		dollars := int64(0)
		if !literal {
			dollars = int64(strings.Count(repl, "$"))
		}
		n := int64(len(s))
		fixed := mulSat(n, 1+dollars)
		if bound := addSat(fixed, mulSat(n+1, int64(len(repl)))); bound <= limit {
			return bound
		}
		re, err := regexp.Compile(a[0].String())
		if err != nil {
			return 0 // the function reports it
		}
		return addSat(fixed, mulSat(int64(len(re.FindAllStringIndex(s, -1))), int64(len(repl))))
	}
}

func mulSat(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// shallowSize is the size of a function's result, not following pointers
// or the entries of lists and maps (they were counted when made).
func shallowSize(v reflect.Value) int64 {
	for v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 8
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return int64(v.Len())
		}
		return 8 * int64(v.Len())
	case reflect.Map:
		return 16 * int64(v.Len())
	}
	return 8
}

// keptSize is what a storing function keeps of an argument: the bytes of
// a string, or of the strings in the list of variadic arguments. Lists and
// maps were counted when they were made.
func keptSize(v reflect.Value, variadic bool) int64 {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch {
	case v.Kind() == reflect.String:
		return int64(v.Len())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		return int64(v.Len())
	case v.Kind() == reflect.Slice && variadic:
		n := int64(0)
		for i := 0; i < v.Len(); i++ {
			n += keptSize(v.Index(i), false)
		}
		return n
	}
	return 0
}

// deepSize measures v with all it holds, shared parts as often as they
// appear (as printing them would), stopping once over budget.
func deepSize(v reflect.Value, budget int64, depth int) int64 {
	if depth > 1000 {
		return budget + 1 // a cycle, or as good as one
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 8
		}
		return deepSize(v.Elem(), budget, depth+1)
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return int64(v.Len())
		}
		n := int64(8)
		for i := 0; i < v.Len() && n <= budget; i++ {
			n += deepSize(v.Index(i), budget-n, depth+1)
		}
		return n
	case reflect.Map:
		n := int64(8)
		for it := v.MapRange(); it.Next() && n <= budget; {
			n += deepSize(it.Key(), budget-n, depth+1)
			n += deepSize(it.Value(), budget-n, depth+1)
		}
		return n
	case reflect.Struct:
		n := int64(8)
		for i := 0; i < v.NumField() && n <= budget; i++ {
			n += deepSize(v.Field(i), budget-n, depth+1)
		}
		return n
	}
	return 8
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

// printfWidths refuses widths and precisions beyond max, given as digits
// or by * from the arguments.
func printfWidths(format string, args reflect.Value, max int) error {
	star := false
	number := func(i int) (int, error) {
		j := i
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			j++
		}
		if j > i {
			if n, err := strconv.Atoi(format[i:j]); err != nil || n > max {
				return j, fmt.Errorf("width or precision %s (at most %d)", format[i:j], max)
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
			if n, ok := intValue(args.Index(i)); ok && (n > int64(max) || n < -int64(max)) {
				return fmt.Errorf("width or precision %d from the arguments (at most %d)", n, max)
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
