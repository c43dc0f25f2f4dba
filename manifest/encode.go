package manifest

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encode appends the YAML form of m to buf: keys in byte order, two-space
// indent, sequence items at the indentation of their parent key, strings
// quoted only where a YAML 1.1 or 1.2 reader would read them as something
// else. This is the layout sigs.k8s.io/yaml gives, written directly.
func Encode(buf *bytes.Buffer, m map[string]any) {
	e := Encoder{e: encoder{oneShot: true}}
	e.Encode(buf, m)
}

// Encoder is Encode with scratch space kept between calls, and the key
// sets it wrote (a mapping with a known key set is written without
// sorting); it is not safe for concurrent use.
type Encoder struct {
	e encoder
}

// Encode appends the YAML form of m to buf.
func (x *Encoder) Encode(buf *bytes.Buffer, m map[string]any) {
	// The encoder appends to the buffer's free space and hands it back
	// with one Write (in place when it fits): appends inline, a
	// Buffer's methods do not.
	x.e.out.b, x.e.depth = buf.AvailableBuffer(), 0
	x.e.buf = &x.e.out
	x.e.mapping(m, 0, "", x.e.orders[""])
	buf.Write(x.e.out.b)
	x.e.out.b, x.e.buf = nil, nil
}

// appender is the encoder's output: a byte slice with the writing
// methods of bytes.Buffer that the encoder uses, each small enough to
// inline.
type appender struct{ b []byte }

func (a *appender) WriteString(s string) { a.b = append(a.b, s...) }
func (a *appender) writeByte(c byte)     { a.b = append(a.b, c) }
func (a *appender) WriteRune(r rune)     { a.b = utf8.AppendRune(a.b, r) }
func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// EncodeObject returns the YAML of one object, in a slice of its size (a
// large render holds no half-empty buffers), encoded with a pooled
// Encoder: objects of the shapes encoded before are written without
// sorting their keys.
func EncodeObject(o *Object) []byte {
	var out []byte
	WithEncoded(o.Map, func(y []byte) { out = bytes.Clone(y) })
	return out
}

// WithEncoded calls use with the YAML of m, encoded with a pooled Encoder
// into pooled space that use must not keep (EncodeObject keeps a copy).
func WithEncoded(m map[string]any, use func(yaml []byte)) {
	s := scratches.Get().(*scratch)
	s.buf.Reset()
	s.enc.Encode(&s.buf, m)
	use(s.buf.Bytes())
	scratches.Put(s)
}

// scratch is an Encoder with its buffer, reused across objects.
type scratch struct {
	buf bytes.Buffer
	enc Encoder
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

type encoder struct {
	buf    *appender
	out    appender
	orders map[string]*orders // by the key a mapping is written under
	// oneShot: an encoder used once remembers no key sets.
	oneShot bool
	// entries holds one reusable entry slice per nesting depth.
	entries [][]entry
	depth   int
}

// entry is a key of a mapping and its value, read in one pass over the
// map: sorting entries rather than keys spares a lookup per key.
type entry struct {
	k string
	v any
}

const (
	keyPlain uint8 = 1 + iota
	keyQuoted
)

const spaces = "                                                                "

func (e *encoder) indent(n int) {
	for n > len(spaces) {
		e.buf.WriteString(spaces)
		n -= len(spaces)
	}
	e.buf.WriteString(spaces[:n])
}

// mapping writes the entries of m; the first entry is written at the
// current position (the caller wrote its indentation), the others at
// indent. under is the key the mapping is the value (or an item) of, o
// the key sets remembered under it (nil when none).
func (e *encoder) mapping(m map[string]any, indent int, under string, o *orders) {
	if len(m) == 0 {
		e.buf.WriteString("{}\n")
		return
	}
	if o != nil && e.knownOrder(m, indent, o) {
		return
	}
	if e.depth == len(e.entries) {
		e.entries = append(e.entries, make([]entry, 0, 16))
	}
	entries := sortedEntriesInto(e.entries[e.depth][:0], m)
	e.remember(under, entries)
	e.entries[e.depth] = entries
	e.depth++
	for i, en := range entries {
		if i > 0 {
			e.indent(indent)
		}
		if isPlainSafe(en.k) {
			e.buf.WriteString(en.k)
		} else {
			e.quoted(en.k)
		}
		e.buf.writeByte(':')
		var child *orders
		switch en.v.(type) {
		case map[string]any, []any:
			child = e.orders[en.k]
		}
		e.valueAfterKey(en.k, en.v, indent, child)
	}
	clear(entries) // keep no value alive through the scratch space
	e.depth--
}

// orders are the key sets last written under a key, sorted, a few per
// key: a render writes the same shapes again and again, and a mapping
// whose keys are exactly a known set is written in that set's order
// with a lookup per key, without iterating over the map and sorting.
// Eight: a Kaoto alone writes six shapes under "spec" (its own, with and
// without ingress, and its children's: Service, Ingress, Deployment,
// pod), which four sets, replaced in turn, missed every time.
type orders struct {
	sets [8][]knownKey
	next int // the set a new one replaces
}

// knownKey is a key of a remembered set and how it is written.
type knownKey struct {
	k    string
	form uint8 // keyPlain or keyQuoted
	// child is e.orders[k] once it exists: a value under k that is a
	// mapping or a sequence finds its key sets without a lookup.
	child *orders
}

// knownOrder writes m in the order of one of the key sets of o when m's
// keys are exactly that set (as many keys, each of them present: keys
// are distinct), and reports whether it did. Each key is looked up as it
// is written; a key missing from m takes back what was written of m (the
// encoder only appends) and tries the next set.
func (e *encoder) knownOrder(m map[string]any, indent int, o *orders) bool {
	start := len(e.buf.b)
sets:
	for _, set := range o.sets {
		if len(set) != len(m) {
			continue
		}
		for i := range set {
			kk := &set[i]
			v, ok := m[kk.k]
			if !ok {
				e.buf.b = e.buf.b[:start]
				continue sets
			}
			if i > 0 {
				e.indent(indent)
			}
			if kk.form == keyPlain {
				e.buf.WriteString(kk.k)
			} else {
				e.quoted(kk.k)
			}
			e.buf.writeByte(':')
			var child *orders
			switch v.(type) {
			case map[string]any, []any:
				if kk.child == nil {
					kk.child = e.orders[kk.k]
				}
				child = kk.child
			}
			e.valueAfterKey(kk.k, v, indent, child)
		}
		return true
	}
	return false
}

// remember records the keys of entries, sorted, as a set under the key
// under.
func (e *encoder) remember(under string, entries []entry) {
	if e.oneShot {
		return
	}
	if e.orders == nil {
		e.orders = map[string]*orders{}
	}
	o := e.orders[under]
	if o == nil {
		if len(e.orders) >= maxOrderKeys {
			return // a render of many shapes: no more memory for them
		}
		o = &orders{}
		e.orders[under] = o
	}
	set := make([]knownKey, len(entries))
	for i, en := range entries {
		set[i] = knownKey{k: en.k, form: keyQuoted}
		if isPlainSafe(en.k) {
			set[i].form = keyPlain
		}
	}
	o.sets[o.next] = set
	o.next = (o.next + 1) % len(o.sets)
}

// maxOrderKeys bounds the keys an Encoder remembers key sets under.
const maxOrderKeys = 256

// sortedEntriesInto appends the entries of m to s in key order.
func sortedEntriesInto(s []entry, m map[string]any) []entry {
	for k, v := range m {
		s = append(s, entry{k: k, v: v})
	}
	if len(s) <= 12 {
		for i := 1; i < len(s); i++ {
			for j := i; j > 0 && s[j].k < s[j-1].k; j-- {
				s[j], s[j-1] = s[j-1], s[j]
			}
		}
		return s
	}
	slices.SortFunc(s, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	return s
}

// valueAfterKey writes the value of a mapping entry whose key is written;
// o holds the key sets remembered under key.
func (e *encoder) valueAfterKey(key string, v any, indent int, o *orders) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			e.buf.WriteString(" {}\n")
			return
		}
		e.buf.writeByte('\n')
		e.indent(indent + 2)
		e.mapping(t, indent+2, key, o)
	case []any:
		if len(t) == 0 {
			e.buf.WriteString(" []\n")
			return
		}
		e.buf.writeByte('\n')
		e.sequence(t, indent, key, o, false)
	default:
		e.buf.writeByte(' ')
		e.scalar(v, indent)
	}
}

// sequence writes the items of s, each on a line of its own at indent,
// but the first when onDash: a nested sequence starts on the line of the
// dash that holds it.
func (e *encoder) sequence(s []any, indent int, key string, o *orders, onDash bool) {
	for i, v := range s {
		if i > 0 || !onDash {
			e.indent(indent)
		}
		e.buf.WriteString("- ")
		switch t := v.(type) {
		case map[string]any:
			e.mapping(t, indent+2, key, o)
			if o == nil {
				o = e.orders[key] // the first item may have made them
			}
		case []any:
			if len(t) == 0 {
				e.buf.WriteString("[]\n")
				continue
			}
			e.sequence(t, indent+2, key, o, true)
		default:
			e.scalar(v, indent+2)
		}
	}
}

// scalar writes a scalar and the line end.
func (e *encoder) scalar(v any, indent int) {
	switch t := v.(type) {
	case nil:
		e.buf.WriteString("null\n")
	case string:
		e.string(t, indent)
		e.buf.writeByte('\n')
	case bool:
		if t {
			e.buf.WriteString("true\n")
		} else {
			e.buf.WriteString("false\n")
		}
	case int64:
		e.buf.b = append(strconv.AppendInt(e.buf.b, t, 10), '\n')
	case int:
		e.buf.b = append(strconv.AppendInt(e.buf.b, int64(t), 10), '\n')
	case int32:
		e.buf.b = append(strconv.AppendInt(e.buf.b, int64(t), 10), '\n')
	case float64:
		e.buf.WriteString(formatFloat(t))
		e.buf.writeByte('\n')
	default:
		// Not a JSON value: a programming error in a generator.
		panic(fmt.Sprintf("manifest: cannot encode %T", v))
	}
}

func formatFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		panic("manifest: cannot encode a non-finite float")
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// string writes s as a plain, literal-block or double-quoted scalar.
func (e *encoder) string(s string, indent int) {
	switch {
	case isPlainSafe(s):
		e.buf.WriteString(s)
	case literalSafe(s):
		e.literal(s, indent)
	default:
		e.quoted(s)
	}
}

// literal writes a multi-line string as a block scalar: "|" keeps one final
// newline, "|-" strips it, "|+" keeps several.
func (e *encoder) literal(s string, indent int) {
	body := strings.TrimRight(s, "\n")
	trailing := len(s) - len(body)
	switch trailing {
	case 0:
		e.buf.WriteString("|-")
	case 1:
		e.buf.WriteString("|")
	default:
		e.buf.WriteString("|+")
	}
	for l := range strings.SplitSeq(body, "\n") {
		e.buf.writeByte('\n')
		if l != "" {
			e.indent(indent + 2)
			e.buf.WriteString(l)
		}
	}
	for i := 1; i < trailing; i++ {
		e.buf.writeByte('\n')
	}
	// The caller writes the final line end.
}

// literalSafe reports whether a block scalar represents s exactly.
func literalSafe(s string) bool {
	if !strings.Contains(s, "\n") || strings.TrimRight(s, "\n") == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[0] == '\n' {
		return false // would need an indentation indicator
	}
	for _, r := range s {
		if r == '\n' {
			continue
		}
		if !isPrintable(r) || r == '\r' || r == '\t' || r == 0xFEFF {
			return false
		}
	}
	// Trailing spaces on a line are kept by a block scalar, but a line of
	// only spaces before a more-indented line is not: be strict.
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimRight(l, " ") != l {
			return false
		}
	}
	return true
}

func isPrintable(r rune) bool {
	return r == '\t' || (r >= 0x20 && r <= 0x7E) || r == 0x85 || (r >= 0xA0 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD && r != 0xFEFF) || (r >= 0x10000 && r <= 0x10FFFF)
}

func (e *encoder) quoted(s string) {
	b := e.buf
	b.writeByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\ufffd`)
				continue
			}
			if !isPrintable(r) || r == 0x85 || r == 0x2028 || r == 0x2029 {
				if r <= 0xFFFF {
					fmt.Fprintf(b, `\u%04x`, r)
				} else {
					fmt.Fprintf(b, `\U%08x`, r)
				}
				continue
			}
			b.WriteRune(r)
		}
	}
	b.writeByte('"')
}

// isPlainSafe reports whether s can be written unquoted and be read back as
// the same string by YAML 1.1 and YAML 1.2 readers.
func isPlainSafe(s string) bool {
	return simplePlain(s) || plainSafe(s)
}

// plainSafe is isPlainSafe without its fast path.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	switch s[0] {
	case '-', '?', ':':
		// "-x" is fine, "- x", "-" and "--..." are not.
		if len(s) == 1 || s[1] == ' ' || s[0] == '-' && s[1] == '-' {
			return false
		}
		if s[0] != '-' {
			return false
		}
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7F || c >= 0x80 {
			if c >= 0x80 {
				// Non-ASCII: plain when printable.
				r, size := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError || !isPrintable(r) || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF {
					return false
				}
				i += size - 1
				continue
			}
			return false
		}
		switch c {
		case ':':
			if i == len(s)-1 || s[i+1] == ' ' {
				return false
			}
		case '#':
			if s[i-1] == ' ' {
				return false
			}
		}
	}
	return !resolvesToNonString(s)
}

// simplePlain is the fast path of isPlainSafe: a letter or "/", then
// printable ASCII but spaces, not ending in ":", and not one of YAML's
// boolean or null words. Without a space, neither ": " nor " #" can occur,
// and a string starting so is no number or timestamp: plainSafe takes
// every such string (TestSimplePlainAgrees).
func simplePlain(s string) bool {
	if s == "" {
		return false
	}
	if plainChars[s[0]]&plainFirst == 0 {
		return false
	}
	i := 1
	for ; i+8 <= len(s); i += 8 {
		if !printableWord(uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if plainChars[s[i]]&plainNext == 0 {
			return false
		}
	}
	if s[len(s)-1] == ':' {
		return false
	}
	if len(s) <= 5 {
		switch s[0] | 0x20 {
		case 'y', 'n', 't', 'f', 'o':
			return !resolvesToNonString(s)
		}
	}
	return true
}

// printableWord reports whether each byte of w is printable ASCII but
// the space (0x21 to 0x7e, plainNext), eight at a time: a byte below
// 0x21 borrows into its top bit when 0x21 is taken from it, a byte above
// 0x7e carries into it when 1 is added (or has it already).
func printableWord(w uint64) bool {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	below := (w - ones*0x21) &^ w & tops
	above := (w + ones*(0x7f-0x7e) | w) & tops
	return below|above == 0
}

// yamlWords are the plain scalars YAML 1.1 or 1.2 reads as a bool, a null
// or a special float, in any case.
var yamlWords = [...]string{"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~",
	".inf", "-.inf", "+.inf", ".nan", "=", "<<"}

// yamlWord reports whether strings.ToLower(s) is one of yamlWords,
// without allocating for the short ASCII strings every key and value
// is checked as.
func yamlWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return yamlWordLower(s) // Unicode case mapping may shorten it
		}
	}
	if len(s) == 0 || len(s) > 5 {
		return false // ASCII: as long as it lower-cased
	}
	switch s[0] | 0x20 { // the first byte of a word, in any case (and a few others)
	case 'y', 'n', 't', 'f', 'o', '~', '.', '-', '+', '=', '<':
	default:
		return false
	}
	var lower [5]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	switch string(lower[:len(s)]) { // yamlWords, TestYAMLWord
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null", "~",
		".inf", "-.inf", "+.inf", ".nan", "=", "<<":
		return true
	}
	return false
}

func yamlWordLower(s string) bool {
	l := strings.ToLower(s)
	for _, w := range yamlWords {
		if l == w {
			return true
		}
	}
	return false
}

// plainChars classifies the bytes simplePlain takes: plainFirst first (a
// letter or /), plainNext after (printable ASCII but the space).
var plainChars = func() (t [256]uint8) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = plainNext
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' {
			t[c] |= plainFirst
		}
	}
	return t
}()

const (
	plainFirst = 1 << iota
	plainNext
)

// resolvesToNonString reports whether a plain scalar s would be read as a
// bool, null, number or timestamp by YAML 1.1 or 1.2.
func resolvesToNonString(s string) bool {
	if len(s) > 6 && s[0] != '+' && s[0] != '-' && s[0] != '.' && (s[0] < '0' || s[0] > '9') {
		return false
	}
	if yamlWord(s) {
		return true
	}
	c := s[0]
	if c == '+' || c == '-' || c == '.' {
		if len(s) == 1 {
			return false
		}
		c = s[1]
	}
	if c < '0' || c > '9' {
		if c == '.' { // "-.5", "+.5"
			return true
		}
		return false
	}
	// Starts like a number: quote when it only holds characters that a
	// number, a sexagesimal or a timestamp can hold.
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch >= '0' && ch <= '9', ch == '.', ch == '_', ch == ':', ch == '+', ch == '-',
			ch == 'e', ch == 'E', ch == 'x', ch == 'X', ch == 'o', ch == 'O', ch == 'b', ch == 'B',
			ch >= 'a' && ch <= 'f', ch >= 'A' && ch <= 'F', ch == 't', ch == 'T', ch == 'z', ch == 'Z', ch == ' ':
		default:
			return false
		}
	}
	return true
}
