package plan

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxExpandedNodes is the most YAML values (scalars, mappings, sequences and mapping entries)
// a plan file may hold once every alias (*name) is replaced by what its anchor (&name) holds.
// A real plan has a few hundred; nine nested aliases of nine make a 371-byte file expand to
// 9^9 values (an "alias bomb"), which the decoder would build before any check could run.
const MaxExpandedNodes = 100_000

// expandedNodes counts the values of a parsed YAML stream with every alias expanded, stopping
// as soon as the count passes limit (so a bomb costs its own size, never its expansion). An
// anchor's size is remembered when it is defined, so each alias costs one lookup.
type expandedNodes struct {
	anchors  map[string]int
	n, limit int
	// worst is the alias that contributed the most values, named in the error.
	worst     string
	worstSize int
}

// add counts node and everything below it; it returns the node's expanded size (capped at
// limit+1).
func (c *expandedNodes) add(node ast.Node) int {
	if node == nil || c.n > c.limit {
		return 0
	}
	start := c.n
	switch n := node.(type) {
	case *ast.DocumentNode:
		c.add(n.Body)
	case *ast.MappingNode:
		c.n++
		for _, v := range n.Values {
			c.add(v)
		}
	case *ast.MappingValueNode:
		c.n++
		c.add(n.Key)
		c.add(n.Value)
	case *ast.MappingKeyNode:
		c.add(n.Value)
	case *ast.SequenceNode:
		c.n++
		for _, v := range n.Values {
			c.add(v)
		}
	case *ast.TagNode:
		c.add(n.Value)
	case *ast.AnchorNode:
		size := c.add(n.Value)
		if n.Name != nil {
			c.anchors[n.Name.GetToken().Value] = size
		}
	case *ast.AliasNode:
		name := ""
		if n.Value != nil {
			name = n.Value.GetToken().Value
		}
		size := max(c.anchors[name], 1) // an unknown alias is the decoder's error to report
		c.n = min(c.n+size, c.limit+1)
		if size > c.worstSize {
			c.worst, c.worstSize = name, size
		}
	default: // a scalar, a merge key, a comment
		c.n++
	}
	return c.n - start
}

// checkAliases refuses YAML whose aliases would expand past MaxExpandedNodes values. Text that
// does not parse passes: the decoder reports it with its line.
func checkAliases(b []byte) error {
	f, err := parser.ParseBytes(b, 0)
	if err != nil {
		return nil
	}
	c := &expandedNodes{anchors: map[string]int{}, limit: MaxExpandedNodes}
	for _, d := range f.Docs {
		c.add(d)
	}
	switch {
	case c.n <= c.limit:
		return nil
	case c.worst == "":
		return fmt.Errorf("plan file is invalid: it holds more than %d values, which no plan needs: a plan names its settings, use cases and scenarios; put prompts in a dataset or trace file", MaxExpandedNodes)
	}
	return fmt.Errorf("plan file is invalid: its aliases expand it to more than %d values (the largest alias, *%s, to at least %d), which no plan needs: write the values out or nest fewer aliases",
		MaxExpandedNodes, c.worst, c.worstSize)
}
