package bricks

import (
	"fmt"
	"strings"

	"github.com/blocks-go/blocks/core"
)

// PathNode is one node of a SelectPath: a brick name or, last, a parameter name
// (Blocks' Path.BrickName and Path.ParameterName).
type PathNode struct {
	Name      string
	Parameter bool
}

// Part is the node as it appears in a path's text: "/name" or ".name".
func (n PathNode) Part() string {
	if n.Parameter {
		return "." + n.Name
	}
	return "/" + n.Name
}

// SelectPath is Blocks' blocks.select.Path: a path in a hierarchy of bricks,
// "/top/child.W".
type SelectPath []PathNode

func (p SelectPath) String() string {
	var b strings.Builder
	for _, n := range p {
		b.WriteString(n.Part())
	}
	return b.String()
}

// ParsePath is Blocks' Path.parse: the text splits at "/" (a brick name
// follows) and "." (a parameter name follows); it must start with one of
// them.
func ParsePath(s string) (SelectPath, error) {
	if s == "" || (s[0] != '/' && s[0] != '.') {
		return nil, fmt.Errorf("Path.parse(%q): a path starts with %q or %q", s, "/", ".")
	}
	var p SelectPath
	start := 0
	for i := 1; i <= len(s); i++ {
		if i == len(s) || s[i] == '/' || s[i] == '.' {
			p = append(p, PathNode{Name: s[start+1 : i], Parameter: s[start] == '.'})
			start = i
		}
	}
	return p, nil
}

// Selector is Blocks' blocks.select.Selector: a selection of bricks.
type Selector struct {
	Bricks []Brick
}

// Select is Blocks' Selector.select: the bricks a path of brick names
// leads to from the selection (a first name matches a selected brick,
// the next ones children), or, when the path ends in a parameter name,
// those bricks' (and their descendants') parameters of that name.
func (s *Selector) Select(p SelectPath) (*Selector, []*core.Variable, error) {
	current := []Brick(nil)
	first := true
	for _, node := range p {
		if node.Parameter {
			params, _, err := (&Selector{Bricks: current}).Parameters(node.Name)
			return nil, params, err
		}
		var next []Brick
		candidates := s.Bricks
		for i := 0; first || i < len(current); i++ {
			if !first {
				candidates = current[i].BaseBrick().Children
			}
			for _, c := range candidates {
				if c.BaseBrick().Name == node.Name && !containsBrick(next, c) {
					next = append(next, c)
				}
			}
			if first {
				break
			}
		}
		current, first = next, false
	}
	if first {
		current = nil
	}
	return &Selector{Bricks: current}, nil, nil
}

func containsBrick(bs []Brick, b Brick) bool {
	for _, x := range bs {
		if x.BaseBrick() == b.BaseBrick() {
			return true
		}
	}
	return false
}

// Parameters is Blocks' Selector.get_parameters: the parameters of the
// selected bricks and their descendants, with their paths
// ("/mlp/linear_0.W"), in depth-first order, a brick's own first; name,
// when not empty, keeps only the parameters of that name. Two parameters
// with one path are an error, as in Blocks.
func (s *Selector) Parameters(name string) ([]*core.Variable, []string, error) {
	var params []*core.Variable
	var paths []string
	seen := map[string]bool{}
	var walk func(b Brick, prefix string) error
	walk = func(b Brick, prefix string) error {
		base := b.BaseBrick()
		here := prefix + "/" + base.Name
		for _, p := range base.Parameters {
			if name != "" && p.Name != name {
				continue
			}
			path := here + "." + p.Name
			if seen[path] {
				return fmt.Errorf("Name collision encountered while retrieving parameters: the '%s' name appears more than once. Make sure that all bricks' children have different names and that user-defined shared variables have unique names", path)
			}
			seen[path] = true
			params = append(params, p)
			paths = append(paths, path)
		}
		for _, c := range base.Children {
			if err := walk(c, here); err != nil {
				return err
			}
		}
		return nil
	}
	for _, b := range s.Bricks {
		if err := walk(b, ""); err != nil {
			return nil, nil, err
		}
	}
	return params, paths, nil
}
