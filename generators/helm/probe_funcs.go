package helm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"path"
	"reflect"
	"regexp"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"
	goyaml "sigs.k8s.io/yaml/goyaml.v3"

	"helm.sh/helm/v3/pkg/chart"
)

// guards estimate, from the arguments, the size of what a function would
// return, for the functions whose result can exceed their inputs by far.
// limit lets an estimate stop early once it is over.
var guards = map[string]func(args []reflect.Value, limit int64) int64{
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

// helmFuncs are the functions Helm's engine adds to sprig's, with the
// behaviour of Helm v3.22.0's (lookup finds nothing and getHostByName
// answers "", as in helm template).
func helmFuncs() template.FuncMap {
	return template.FuncMap{
		"toToml": func(v any) string {
			var b bytes.Buffer
			if err := toml.NewEncoder(&b).Encode(v); err != nil {
				return err.Error()
			}
			return b.String()
		},
		"fromToml": func(s string) map[string]any {
			m := map[string]any{}
			if err := toml.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"toYaml": toYAML,
		"toYamlPretty": func(v any) string {
			var b bytes.Buffer
			enc := goyaml.NewEncoder(&b)
			enc.SetIndent(2)
			if err := enc.Encode(v); err != nil {
				return ""
			}
			return strings.TrimSuffix(b.String(), "\n")
		},
		"fromYaml": func(s string) map[string]any {
			m := map[string]any{}
			if err := yaml.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"fromYamlArray": func(s string) []any {
			a := []any{}
			if err := yaml.Unmarshal([]byte(s), &a); err != nil {
				a = []any{err.Error()}
			}
			return a
		},
		"toJson": func(v any) string {
			b, err := json.Marshal(v)
			if err != nil {
				return ""
			}
			return string(b)
		},
		"fromJson": func(s string) map[string]any {
			m := map[string]any{}
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"fromJsonArray": func(s string) []any {
			a := []any{}
			if err := json.Unmarshal([]byte(s), &a); err != nil {
				a = []any{err.Error()}
			}
			return a
		},
		"required": func(warn string, v any) (any, error) {
			if s, ok := v.(string); v == nil || (ok && s == "") {
				return v, errors.New(warn)
			}
			return v, nil
		},
		"fail":          func(msg string) (string, error) { return "", errors.New(msg) },
		"lookup":        func(string, string, string, string) (map[string]any, error) { return map[string]any{}, nil },
		"getHostByName": func(string) string { return "" },
	}
}

func toYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// files is .Files as Helm offers it.
type files map[string][]byte

func newFiles(from []*chart.File) files {
	f := files{}
	for _, e := range from {
		f[e.Name] = e.Data
	}
	return f
}

// GetBytes returns a file's content, empty when there is none.
func (f files) GetBytes(name string) []byte {
	if v, ok := f[name]; ok {
		return v
	}
	return []byte{}
}

// Get returns a file's content as a string.
func (f files) Get(name string) string { return string(f.GetBytes(name)) }

// Glob returns the files whose names match pattern.
func (f files) Glob(pattern string) files {
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		g, _ = glob.Compile("**")
	}
	out := files{}
	for name, data := range f {
		if g.Match(name) {
			out[name] = data
		}
	}
	return out
}

// AsConfig returns the files as ConfigMap data.
func (f files) AsConfig() string {
	if f == nil {
		return ""
	}
	m := map[string]string{}
	for k, v := range f {
		m[path.Base(k)] = string(v)
	}
	return toYAML(m)
}

// AsSecrets returns the files as Secret data.
func (f files) AsSecrets() string {
	if f == nil {
		return ""
	}
	m := map[string]string{}
	for k, v := range f {
		m[path.Base(k)] = base64.StdEncoding.EncodeToString(v)
	}
	return toYAML(m)
}

// Lines returns a file's lines.
func (f files) Lines(name string) []string {
	if f == nil || len(f[name]) == 0 {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(string(f[name]), "\n"), "\n")
}
