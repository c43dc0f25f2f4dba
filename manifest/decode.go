package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Decoding budgets, per file: absolute, so that padding a file (with
// comments, say) cannot raise them, and shared by all documents of the
// file, so that many small alias bombs in one file cannot each take a
// whole budget.
const (
	// MaxNodes bounds the values built from one file, aliases expanded.
	MaxNodes = 2_000_000
	// MaxAliasNodes bounds the values built through aliases in one file:
	// ordinary files reuse an anchor a few times; a billion-laughs
	// document needs millions.
	MaxAliasNodes = 100_000
	// MaxDecodedSize bounds the bytes of keys and scalars built from one
	// file (64 MiB, four times the largest file wavesmith reads).
	MaxDecodedSize = 64 << 20
	// MaxRenderDecodedSize bounds the bytes of keys and scalars built from
	// all the files of one render that share a Budget.
	MaxRenderDecodedSize = 512 << 20
)

// Budget bounds what decoding the files of one render may build in
// total (MaxRenderDecodedSize); each file also has its own budgets.
// A Budget is safe for concurrent use.
type Budget struct {
	left atomic.Int64
}

// NewBudget returns a budget of size decoded bytes.
func NewBudget(size int64) *Budget {
	b := &Budget{}
	b.left.Store(size)
	return b
}

// Decode decodes like the function Decode and charges what it built to
// b; a file that exhausts b is ErrTooComplex.
func (b *Budget) Decode(file string, data []byte) ([]*Object, error) {
	return decode(file, data, b)
}

// Decode reads every document of a YAML or JSON stream. Empty documents are
// skipped. A document of kind List (v1) or ResourceList
// (config.kubernetes.io) is replaced by its items. file names the input in
// errors. Decoding stays within the per-file budgets (MaxNodes,
// MaxAliasNodes, MaxDecodedSize): beyond them it stops with ErrTooComplex
// at the line where the budget ran out.
func Decode(file string, data []byte) ([]*Object, error) {
	return decode(file, data, nil)
}

func decode(file string, data []byte, budget *Budget) ([]*Object, error) {
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:invalidUTF8Offset(data)], []byte("\n"))
		return nil, &Error{File: file, Line: line, Err: fmt.Errorf("%w: invalid byte sequence", ErrEncoding)}
	}
	data = bytes.TrimPrefix(data, bom)
	if bytes.IndexByte(data, '\r') >= 0 {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	if bytes.Contains(data, bom) {
		data = trimDocumentBOMs(data)
	}
	if out, ok := decodeSimple(file, data, budget); ok {
		return out, nil
	}
	return decodeFull(file, data, budget)
}

// decodeFull decodes normalized data (UTF-8, no byte order mark, no
// carriage return) with yaml.v3.
func decodeFull(file string, data []byte, budget *Budget) ([]*Object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*Object
	// One converter for the whole file: its budgets are the file's.
	c := converter{file: file, nodes: MaxNodes, aliasNodes: MaxAliasNodes, size: MaxDecodedSize}
	defer func() {
		if budget != nil {
			budget.left.Add(-int64(MaxDecodedSize - c.size))
		}
	}()
	for index := 0; ; index++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Error{File: file, Line: yamlErrorLine(err), Err: fmt.Errorf("%w: %s", ErrSyntax, yamlErrorText(err))}
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue
		}
		if err := checkAnchors(file, root, map[*yaml.Node]bool{}); err != nil {
			return nil, err
		}
		c.pos = map[string]int{}
		v, err := c.value(root, "")
		if err != nil {
			return nil, err
		}
		if budget != nil {
			if left := budget.left.Load() - int64(MaxDecodedSize-c.size); left < 0 {
				return nil, &Error{File: file, Line: root.Line, Err: fmt.Errorf("%w: the files of this render decode to more than %d bytes", ErrTooComplex, MaxRenderDecodedSize)}
			}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &Error{File: file, Line: root.Line, Err: fmt.Errorf("%w: document %d is a %s, not a mapping", ErrNotObject, index, nodeKind(root))}
		}
		obj := &Object{Map: m, Source: Source{File: file, Index: index, Line: root.Line}, pos: c.pos, yaml11: c.fixes}
		items, err := expandList(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// bom is the UTF-8 byte order mark, U+FEFF.
var bom = []byte("\xef\xbb\xbf")

// trimDocumentBOMs removes a byte order mark that starts a document: the
// line after a "---" separator. kubectl splits a stream at separator lines
// and decodes each document as a stream of its own, whose reader drops a
// leading mark; here the whole file is one stream, so the mark would
// become part of the first key ("\ufeffapiVersion"). Marks anywhere else
// are left to the YAML parser, as kubectl leaves them.
func trimDocumentBOMs(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		out = append(out, line...)
		data = data[len(line):]
		if isSeparator(line) {
			data = bytes.TrimPrefix(data, bom)
		}
	}
	return out
}

// isSeparator reports whether line is a document separator as kubectl's
// reader splits on: "---", then only blanks or a comment.
func isSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// checkAnchors refuses an alias whose anchor lies outside the document
// of root: YAML anchors are local to their document (kubectl decodes each
// document alone and says "unknown anchor"), but one decoder reading a
// whole stream keeps the anchors of earlier documents. seen collects the
// anchored nodes of this document in document order, which is the order
// an anchor must precede its aliases in.
func checkAnchors(file string, n *yaml.Node, seen map[*yaml.Node]bool) error {
	if n.Kind == yaml.AliasNode {
		if !seen[n.Alias] {
			return &Error{File: file, Line: n.Line, Err: fmt.Errorf("%w: unknown anchor %q: anchors are local to their document, and this one is defined in an earlier document", ErrSyntax, n.Value)}
		}
		return nil
	}
	if n.Anchor != "" {
		seen[n] = true
	}
	for _, e := range n.Content {
		if err := checkAnchors(file, e, seen); err != nil {
			return err
		}
	}
	return nil
}

// expandList returns the items of a List or ResourceList, or obj itself.
func expandList(obj *Object) ([]*Object, error) {
	kind, av := obj.Kind(), obj.APIVersion()
	isList := kind == "List" && av == "v1"
	isRL := kind == "ResourceList" && strings.HasPrefix(av, "config.kubernetes.io/")
	if !isList && !isRL {
		if err := checkObject(obj); err != nil {
			return nil, err
		}
		return []*Object{obj}, nil
	}
	raw, ok := obj.Map["items"].([]any)
	if !ok && obj.Map["items"] != nil {
		return nil, obj.FieldError("items", fmt.Errorf("%w: the items of a %s must be a list, not %s", ErrNotObject, kind, TypeName(obj.Map["items"])))
	}
	var out []*Object
	for i, it := range raw {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, &Error{File: obj.Source.File, Line: obj.Source.Line, Field: fmt.Sprintf("items[%d]", i), Err: fmt.Errorf("%w: not a mapping", ErrNotObject)}
		}
		item := &Object{Map: m, Source: Source{File: obj.Source.File, Index: i, Line: obj.Line(fmt.Sprintf("items[%d]", i))}, yaml11: obj.fixesBelow(pathElem{key: "items"}, pathElem{index: i, seq: true})}
		if err := checkObject(item); err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}

func checkObject(o *Object) error {
	for _, f := range []string{"apiVersion", "kind"} {
		if s, ok := o.Map[f].(string); !ok || s == "" {
			return &Error{File: o.Source.File, Line: o.Source.Line, Field: f, Err: fmt.Errorf("%w: %s is missing or not a string", ErrNotObject, f)}
		}
	}
	if _, ok := o.Map["metadata"].(map[string]any); !ok && o.Map["metadata"] != nil {
		return o.FieldError("metadata", fmt.Errorf("%w: metadata is not a mapping", ErrInvalid))
	}
	return nil
}

type converter struct {
	file string
	// What the file may still build: nodes, nodes through aliases, bytes
	// of keys and scalars.
	nodes, aliasNodes, size int
	inAlias                 int
	aliasLine               int // of the outermost alias being expanded
	pos                     map[string]int
	depth                   int
	// segs is the path of the node being converted; fixes collects the
	// plain scalars YAML 1.1 reads differently (see yaml11.go).
	segs  []pathElem
	fixes []yaml11Fix
}

const maxDepth = 200

func (c *converter) value(n *yaml.Node, path string) (any, error) {
	c.nodes--
	if c.inAlias > 0 {
		c.aliasNodes--
	}
	line := n.Line
	if c.inAlias > 0 {
		line = c.aliasLine // where the expansion happens, not the anchor
	}
	switch {
	case c.aliasNodes < 0:
		return nil, &Error{File: c.file, Line: line, Err: fmt.Errorf("%w: aliases expand the file beyond %d nodes", ErrTooComplex, MaxAliasNodes)}
	case c.nodes < 0:
		return nil, &Error{File: c.file, Line: line, Err: fmt.Errorf("%w: the file holds more than %d nodes", ErrTooComplex, MaxNodes)}
	}
	if n.Kind == yaml.ScalarNode {
		if c.size -= len(n.Value); c.size < 0 {
			return nil, &Error{File: c.file, Line: line, Err: fmt.Errorf("%w: the file decodes to more than %d bytes", ErrTooComplex, MaxDecodedSize)}
		}
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxDepth {
		return nil, &Error{File: c.file, Line: n.Line, Err: fmt.Errorf("%w: nested deeper than %d levels", ErrTooComplex, maxDepth)}
	}
	switch n.Kind {
	case yaml.AliasNode:
		// Positions inside an alias point at the anchor; do not record them.
		saved := c.pos
		c.pos = nil
		if c.inAlias == 0 {
			c.aliasLine = n.Line
		}
		c.inAlias++
		v, err := c.value(n.Alias, path)
		c.inAlias--
		c.pos = saved
		return v, err
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		if err := c.mapping(n, path, m); err != nil {
			return nil, err
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, e := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			c.record(p, e.Line)
			c.segs = append(c.segs, pathElem{index: i, seq: true})
			v, err := c.value(e, p)
			c.segs = c.segs[:len(c.segs)-1]
			if err != nil {
				return nil, err
			}
			s[i] = v
		}
		return s, nil
	case yaml.ScalarNode:
		v, err := c.scalar(n)
		if err == nil {
			c.noteScalar(n, v)
		}
		return v, err
	}
	return nil, &Error{File: c.file, Line: n.Line, Err: fmt.Errorf("%w: unexpected %s", ErrSyntax, nodeKind(n))}
}

func (c *converter) record(path string, line int) {
	if c.pos != nil {
		c.pos[path] = line
	}
}

func (c *converter) mapping(n *yaml.Node, path string, m map[string]any) error {
	explicit := map[string]bool{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.Tag == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		if kn.Kind != yaml.ScalarNode {
			return &Error{File: c.file, Line: kn.Line, Field: path, Err: fmt.Errorf("%w: mapping keys must be scalars", ErrSyntax)}
		}
		key := kn.Value
		if c.size -= len(key); c.size < 0 {
			return &Error{File: c.file, Line: kn.Line, Err: fmt.Errorf("%w: the file decodes to more than %d bytes", ErrTooComplex, MaxDecodedSize)}
		}
		if explicit[key] {
			return &Error{File: c.file, Line: kn.Line, Field: join(path, key), Err: fmt.Errorf("%w: duplicate key %q", ErrSyntax, key)}
		}
		explicit[key] = true
		c.record(join(path, key), kn.Line)
		c.noteKey(kn)
		c.segs = append(c.segs, pathElem{key: key})
		v, err := c.value(vn, join(path, key))
		c.segs = c.segs[:len(c.segs)-1]
		if err != nil {
			return err
		}
		m[key] = v
	}
	// "<<" merge keys: explicit keys win, earlier merges win over later.
	for _, mn := range merges {
		sources := []*yaml.Node{mn}
		if mn.Kind == yaml.SequenceNode {
			sources = mn.Content
		}
		for _, s := range sources {
			mark := len(c.fixes)
			v, err := c.value(s, "")
			if err != nil {
				return err
			}
			sm, ok := v.(map[string]any)
			if !ok {
				return &Error{File: c.file, Line: s.Line, Field: path, Err: fmt.Errorf("%w: merge value is not a mapping", ErrSyntax)}
			}
			taken := map[string]bool{}
			for k, e := range sm {
				if _, has := m[k]; !has {
					m[k] = e
					taken[k] = true
				}
			}
			c.keepMergedFixes(mark, taken)
		}
	}
	return nil
}

func (c *converter) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &Error{File: c.file, Line: n.Line, Err: fmt.Errorf("%w: %v", ErrSyntax, err)}
		}
		return b, nil
	case "!!int":
		if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return i, nil
		}
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err == nil {
			return f, nil
		}
		return n.Value, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, &Error{File: c.file, Line: n.Line, Err: fmt.Errorf("%w: %v", ErrSyntax, err)}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, &Error{File: c.file, Line: n.Line, Err: fmt.Errorf("%w: %s is not a JSON number", ErrInvalid, n.Value)}
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 && !strings.ContainsAny(n.Value, ".eE") {
			return int64(f), nil
		}
		return f, nil
	}
	// !!str, !!timestamp, !!binary and custom tags keep their text.
	return n.Value, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// yamlErrorLine extracts the line from a yaml.v3 error ("yaml: line 3: ...").
func yamlErrorLine(err error) int {
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			return n
		}
	}
	return 0
}

func yamlErrorText(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(s, "line "); i == 0 {
		if j := strings.Index(s, ": "); j >= 0 {
			return s[j+2:]
		}
	}
	return s
}
