package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"

	yaml "go.yaml.in/yaml/v3"

	"github.com/wavesmith/wavesmith/manifest"
)

// kustomize parses a YAML file into nodes, then replaces every alias with
// a copy of what its anchor holds (kyaml's DeAnchor), each copy
// expanded too: a billion-laughs file of a few hundred bytes becomes
// billions of nodes, and an alias inside its own anchor recurses until
// the stack overflows. yamlBudget measures that expansion on the parsed
// nodes (counting each anchor's size once, without copying anything)
// and refuses, before kustomize reads the file, what exceeds the
// decoding budgets of manifest.Decode.

// docSeparator is where kustomize splits a file into documents
// (kio.ByteReader): a line starting with "---".
var docSeparator = regexp.MustCompile(`\n---.*\n`)

// yamlBudget returns an error wrapping manifest.ErrTooComplex, and the
// line of the alias where the budget ran out, when the aliases of data
// would expand beyond manifest.MaxAliasNodes nodes, the file beyond
// manifest.MaxNodes, or an alias lies inside its own anchor. The budgets
// are the file's, shared by its documents. What does not parse is left
// to kustomize, which reports it.
func yamlBudget(data []byte) (int, error) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	c := &aliasCounter{}
	// Each part as kustomize splits the file, every document of a part
	// (kustomize reads the first): what kustomize expands is counted.
	start, line := 0, 0 // of the part, line the number of lines before it
	for _, sep := range append(docSeparator.FindAllIndex(data, -1), []int{len(data), len(data)}) {
		part := data[start:sep[0]]
		dec := yaml.NewDecoder(bytes.NewReader(part))
		for {
			var doc yaml.Node
			if dec.Decode(&doc) != nil {
				break // the end, or what kustomize reports
			}
			c.expanded = map[*yaml.Node]int64{}
			c.busy = map[*yaml.Node]bool{}
			if err := c.walk(&doc); err != nil {
				return line + c.line, err
			}
		}
		line += bytes.Count(data[start:sep[1]], []byte("\n"))
		start = sep[1]
	}
	return 0, nil
}

// aliasCounter counts the nodes of a file as they are once aliases are
// expanded.
type aliasCounter struct {
	// nodes is what the file holds expanded, aliased what aliases add.
	nodes, aliased int64
	// expanded memoizes the expanded size of the nodes of a document;
	// busy marks those being measured, to find an alias in its anchor.
	expanded map[*yaml.Node]int64
	busy     map[*yaml.Node]bool
	// line is where the budget ran out.
	line int
}

// errAliasCycle: an alias inside the node its anchor names.
var errAliasCycle = errors.New("cycle")

// walk counts n and what it holds, expanding aliases.
func (c *aliasCounter) walk(n *yaml.Node) error {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		size, err := c.size(n.Alias)
		c.line = n.Line
		if err != nil {
			return fmt.Errorf("%w: alias *%s is inside its own anchor", manifest.ErrTooComplex, n.Value)
		}
		c.aliased += size
		c.nodes += size
		switch {
		case c.aliased > manifest.MaxAliasNodes:
			return fmt.Errorf("%w: aliases expand the file beyond %d nodes", manifest.ErrTooComplex, manifest.MaxAliasNodes)
		case c.nodes > manifest.MaxNodes:
			return fmt.Errorf("%w: the file holds more than %d nodes", manifest.ErrTooComplex, manifest.MaxNodes)
		}
		return nil
	}
	c.nodes++
	if c.nodes > manifest.MaxNodes {
		c.line = n.Line
		return fmt.Errorf("%w: the file holds more than %d nodes", manifest.ErrTooComplex, manifest.MaxNodes)
	}
	for _, e := range n.Content {
		if err := c.walk(e); err != nil {
			return err
		}
	}
	return nil
}

// sizeCap keeps sizes far from overflowing: anything above it is over
// every budget.
const sizeCap = 1 << 40

// size is the number of nodes n stands for once aliases are expanded.
func (c *aliasCounter) size(n *yaml.Node) (int64, error) {
	if n == nil {
		return 0, nil
	}
	if s, ok := c.expanded[n]; ok {
		return s, nil
	}
	if c.busy[n] {
		return 0, errAliasCycle
	}
	c.busy[n] = true
	defer delete(c.busy, n)
	var s int64
	if n.Kind == yaml.AliasNode {
		a, err := c.size(n.Alias)
		if err != nil {
			return 0, err
		}
		s = a
	} else {
		s = 1
		for _, e := range n.Content {
			a, err := c.size(e)
			if err != nil {
				return 0, err
			}
			s = min(s+a, sizeCap)
		}
	}
	c.expanded[n] = s
	return s, nil
}
