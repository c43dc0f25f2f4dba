package manifest

import (
	"bytes"
	"strings"
)

// decodeSimple is the fast path of decode for the files most specs are:
// one document of block mappings only, each line "key: value" or "key:"
// opening a nested mapping, keys and values plain words that every YAML
// reader takes as the same string (a letter first, or "/" for a value;
// then letters, digits and . _ / - and, in values, ":" inside). Such a
// file decodes to what yaml.v3 and the converter build from it: the same
// maps, the same lines (Object.Line), no YAML 1.1 difference, the same
// budgets charged. Anything else (sequences, quotes, comments, flow
// style, anchors, a null, several documents, a tab, a duplicate key, a
// budget exceeded) returns ok false, and the full decoder reads the file:
// every error and every other form keeps its one implementation.
// TestDecodeSimpleAgrees compares both on every input the tests know.
func decodeSimple(file string, data []byte, budget *Budget) (objs []*Object, ok bool) {
	if !simpleLines(data) {
		return nil, false // before allocating anything: most other files fail here
	}
	// One copy of the file: keys and values are slices of it; the dotted
	// paths of Object.Line are written into one buffer and made one
	// string at the end.
	text := string(data)
	type level struct {
		indent    int
		m         map[string]any
		pathStart int // the mapping's path in paths; empty for the root
		pathEnd   int
	}
	// The fields sized once from the number of lines: a field per line
	// at most.
	lines := bytes.Count(data, []byte{'\n'}) + 1
	var stackBuf [8]level
	stack := stackBuf[:0]
	// The paths are written on the stack first (a spec's few fields fit)
	// and copied once, at their size, into the string they share.
	var pathsBuf [512]byte
	paths := pathsBuf[:0]
	fields := make([]fieldLine, 0, lines)
	nodes, size := 1, 0 // the root mapping
	open := ""          // the key whose nested mapping the next line starts
	var openField fieldLine
	rootLine := 0
	line := 0
	for len(text) > 0 {
		line++
		l := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if len(l) == 0 {
			continue
		}
		indent := 0
		for indent < len(l) && l[indent] == ' ' {
			indent++
		}
		l = l[indent:]
		colon := strings.IndexByte(l, ':')
		if colon <= 0 || !plainKey(l[:colon]) {
			return nil, false
		}
		key := l[:colon]
		rest := l[colon+1:]
		var value string
		if len(rest) > 0 {
			if rest[0] != ' ' || !plainValue(rest[1:]) {
				return nil, false
			}
			value = rest[1:]
		}
		switch {
		case len(stack) == 0:
			if open != "" {
				return nil, false
			}
			rootLine = line
			stack = append(stack, level{indent: indent, m: map[string]any{}})
		case open != "":
			if indent <= stack[len(stack)-1].indent || len(stack) >= 64 {
				return nil, false
			}
			child := map[string]any{}
			stack[len(stack)-1].m[open] = child
			stack = append(stack, level{indent: indent, m: child, pathStart: openField.start, pathEnd: openField.end})
			open = ""
		default:
			for len(stack) > 0 && stack[len(stack)-1].indent > indent {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 || stack[len(stack)-1].indent != indent {
				return nil, false
			}
		}
		top := stack[len(stack)-1]
		if _, dup := top.m[key]; dup {
			return nil, false
		}
		f := fieldLine{start: len(paths), line: line}
		if top.pathEnd > top.pathStart {
			paths = append(paths, paths[top.pathStart:top.pathEnd]...)
			paths = append(paths, '.')
		}
		paths = append(paths, key...)
		f.end = len(paths)
		fields = append(fields, f)
		nodes++
		size += len(key) + len(value)
		if value == "" {
			top.m[key] = nil // a placeholder, so that a duplicate is seen; the nested mapping replaces it
			open, openField = key, f
			continue
		}
		top.m[key] = value
	}
	if len(stack) == 0 || open != "" || nodes > MaxNodes || size > MaxDecodedSize {
		return nil, false
	}
	if budget != nil && budget.left.Load()-int64(size) < 0 {
		return nil, false
	}
	obj := &Object{Map: stack[0].m, Source: Source{File: file, Line: rootLine}}
	all := string(paths)
	if len(fields) <= maxFieldLines {
		// A spec's few fields: a list searched on an error, rather than a
		// map built for every file.
		obj.lines = &fieldLines{paths: all, fields: fields}
	} else {
		obj.pos = make(map[string]int, len(fields))
		for _, f := range fields {
			obj.pos[all[f.start:f.end]] = f.line
		}
	}
	out, err := expandList(obj)
	if err != nil {
		return nil, false
	}
	if budget != nil {
		budget.left.Add(-int64(size))
	}
	return out, true
}

// maxFieldLines is the most fields an object decoded by decodeSimple
// keeps the lines of as a list (Object.lines), searched field by field;
// more go into a map.
const maxFieldLines = 32

// plainKey: a letter, then letters, digits and . _ / -; not a word YAML
// reads as anything but that string.
func plainKey[T string | []byte](k T) bool {
	if !isLetter(k[0]) {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '/' && c != '-' {
			return false
		}
	}
	return len(k) > 5 || !resolvesToNonString(string(k))
}

// plainValue: as plainKey, or "/" first, and ":" inside (never last).
func plainValue[T string | []byte](v T) bool {
	if len(v) == 0 || !isLetter(v[0]) && v[0] != '/' || v[len(v)-1] == ':' {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '/' && c != '-' && c != ':' {
			return false
		}
	}
	return len(v) > 5 || !resolvesToNonString(string(v))
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// simpleLines reports whether every line of data is empty or "key:" or
// "key: value" after spaces, with plain keys and values (plainKey,
// plainValue): decodeSimple's lines, checked without allocating.
func simpleLines(data []byte) bool {
	for len(data) > 0 {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		l = bytes.TrimLeft(l, " ")
		if len(l) == 0 {
			continue
		}
		colon := bytes.IndexByte(l, ':')
		if colon <= 0 || !plainKey(l[:colon]) {
			return false
		}
		if rest := l[colon+1:]; len(rest) > 0 && (rest[0] != ' ' || !plainValue(rest[1:])) {
			return false
		}
	}
	return true
}
