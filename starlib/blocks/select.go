package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.select: Blocks' selection of bricks and parameters by path.
//
//	Path(nodes)                 a path: a tuple of Path.BrickName and (last) Path.ParameterName nodes;
//	                            str(path) is "/top/child.W"; paths compare and hash by their nodes, and add (+)
//	Path.parse(string)          the path of "/top/child.W"
//	Path.BrickName(name), Path.ParameterName(name)    nodes (each compares as its name, as Blocks' str subclasses)
//	Selector(bricks)            a selection of bricks (a brick or a list); .bricks
//	    select(path)            the Selector of the bricks the path (a Path or its text) leads to, or, for a path
//	                            ending in a parameter name, the list of those parameters
//	    get_parameters(parameter_name=None)   dict of "/top/child.W" paths to the parameters of the selected
//	                            bricks and their descendants (only those named parameter_name when given);
//	                            two parameters with one path are an error
func selectModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.select", Members: starlark.StringDict{
		"Path":     pathClass{},
		"Selector": starlib.NewBuiltin("Selector", newSelector),
	}})
	return
}

// pathNode is Path.BrickName or Path.ParameterName.
type pathNode struct{ n bricks.PathNode }

func (p pathNode) String() string { return p.n.Name }
func (p pathNode) Type() string {
	if p.n.Parameter {
		return "ParameterName"
	}
	return "BrickName"
}
func (p pathNode) Freeze()               {}
func (p pathNode) Truth() starlark.Bool  { return p.n.Name != "" }
func (p pathNode) Hash() (uint32, error) { return starlark.String(p.n.Name).Hash() }

// CompareSameType compares the names (Blocks' nodes are str subclasses).
func (p pathNode) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return starlark.Compare(op, starlark.String(p.n.Name), starlark.String(y.(pathNode).n.Name))
}

// AttrNames lists part.
func (p pathNode) AttrNames() []string { return []string{"part"} }

// Attr returns part, the node as it appears in a path ("/name", ".name").
func (p pathNode) Attr(name string) (starlark.Value, error) {
	if name != "part" {
		return nil, nil
	}
	return starlib.NewBuiltin("part", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
			return nil, err
		}
		return starlark.String(p.n.Part()), nil
	}), nil
}

// pathValue is a blocks.select.Path.
type pathValue struct{ p bricks.SelectPath }

func (p pathValue) String() string        { return p.p.String() }
func (p pathValue) Type() string          { return "Path" }
func (p pathValue) Freeze()               {}
func (p pathValue) Truth() starlark.Bool  { return true }
func (p pathValue) Hash() (uint32, error) { return p.nodes().Hash() }

func (p pathValue) nodes() starlark.Tuple {
	t := make(starlark.Tuple, len(p.p))
	for i, n := range p.p {
		t[i] = pathNode{n}
	}
	return t
}

// CompareSameType compares the nodes.
func (p pathValue) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	switch op {
	case syntax.EQL, syntax.NEQ:
		eq, err := starlark.EqualDepth(p.nodes(), y.(pathValue).nodes(), depth)
		return eq == (op == syntax.EQL), err
	}
	return false, fmt.Errorf("paths are not ordered")
}

// Binary implements path + path.
func (p pathValue) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	q, ok := y.(pathValue)
	if op != syntax.PLUS || !ok {
		return nil, nil
	}
	if side == starlark.Right {
		p, q = q, p
	}
	return pathValue{append(append(bricks.SelectPath(nil), p.p...), q.p...)}, nil
}

// AttrNames lists nodes.
func (p pathValue) AttrNames() []string { return []string{"nodes"} }

// Attr returns nodes, a tuple.
func (p pathValue) Attr(name string) (starlark.Value, error) {
	if name == "nodes" {
		return p.nodes(), nil
	}
	return nil, nil
}

// pathClass is blocks.select.Path: callable with the nodes, and holding
// parse, BrickName and ParameterName.
type pathClass struct{}

func (pathClass) String() string        { return "<class 'Path'>" }
func (pathClass) Type() string          { return "type" }
func (pathClass) Freeze()               {}
func (pathClass) Truth() starlark.Bool  { return true }
func (pathClass) Hash() (uint32, error) { return starlark.String("blocks.select.Path").Hash() }
func (pathClass) Name() string          { return "Path" }

// CallInternal is Path(nodes).
func (pathClass) CallInternal(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var nodes starlark.Value
	if err := starlark.UnpackArgs("Path", args, kwargs, "nodes", &nodes); err != nil {
		return nil, err
	}
	seq, ok := nodes.(starlark.Indexable)
	if _, isStr := nodes.(starlark.String); !ok || isStr {
		return nil, fmt.Errorf("Path: nodes must be a list or tuple of Path.BrickName and Path.ParameterName, got %s", nodes.Type())
	}
	var p bricks.SelectPath
	for i := 0; i < seq.Len(); i++ {
		n, ok := seq.Index(i).(pathNode)
		if !ok {
			return nil, fmt.Errorf("Path: node %d must be a Path.BrickName or Path.ParameterName, got %s", i, seq.Index(i).Type())
		}
		p = append(p, n.n)
	}
	return pathValue{p}, nil
}

// AttrNames lists the class attributes.
func (pathClass) AttrNames() []string {
	return []string{"BrickName", "ParameterName", "parameter_separator", "parse", "separator"}
}

// Attr returns a class attribute.
func (pathClass) Attr(name string) (starlark.Value, error) {
	node := func(param bool) starlark.Value {
		cls := "BrickName"
		if param {
			cls = "ParameterName"
		}
		return starlib.NewBuiltin(cls, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var s string
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
				return nil, err
			}
			return pathNode{bricks.PathNode{Name: s, Parameter: param}}, nil
		})
	}
	switch name {
	case "separator":
		return starlark.String("/"), nil
	case "parameter_separator":
		return starlark.String("."), nil
	case "BrickName":
		return node(false), nil
	case "ParameterName":
		return node(true), nil
	case "parse":
		return starlib.NewBuiltin("parse", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var s string
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
				return nil, err
			}
			p, err := bricks.ParsePath(s)
			if err != nil {
				return nil, err
			}
			return pathValue{p}, nil
		}), nil
	}
	return nil, nil
}

// selectorValue is a blocks.select.Selector.
type selectorValue struct{ s *bricks.Selector }

func (s *selectorValue) String() string {
	return fmt.Sprintf("<Selector of %d bricks>", len(s.s.Bricks))
}
func (s *selectorValue) Type() string         { return "Selector" }
func (s *selectorValue) Freeze()              {}
func (s *selectorValue) Truth() starlark.Bool { return true }

// AttrNames lists bricks, get_parameters and select.
func (s *selectorValue) AttrNames() []string { return []string{"bricks", "get_parameters", "select"} }

// Attr returns bricks, get_parameters or select.
func (s *selectorValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "bricks":
		out := make([]starlark.Value, len(s.s.Bricks))
		for i, b := range s.s.Bricks {
			out[i] = &Brick{b}
		}
		return starlark.NewList(out), nil
	case "select":
		return starlib.NewBuiltin("select", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var pv starlark.Value
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &pv); err != nil {
				return nil, err
			}
			var p bricks.SelectPath
			switch x := pv.(type) {
			case pathValue:
				p = x.p
			case starlark.String:
				var err error
				if p, err = bricks.ParsePath(string(x)); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("select: path must be a Path or a string, got %s", pv.Type())
			}
			sel, params, err := s.s.Select(p)
			if err != nil {
				return nil, err
			}
			if sel != nil {
				return &selectorValue{sel}, nil
			}
			out := make([]starlark.Value, len(params))
			for i, v := range params {
				out[i] = starlib.NewVariable(thread, v)
			}
			return starlark.NewList(out), nil
		}), nil
	case "get_parameters":
		return starlib.NewBuiltin("get_parameters", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var name starlark.Value = starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "parameter_name?", &name); err != nil {
				return nil, err
			}
			filter := ""
			switch x := name.(type) {
			case starlark.NoneType:
			case starlark.String:
				filter = string(x)
			case pathNode:
				filter = x.n.Name
			default:
				return nil, fmt.Errorf("get_parameters: parameter_name must be a string, got %s", name.Type())
			}
			params, paths, err := s.s.Parameters(filter)
			if err != nil {
				return nil, err
			}
			d := starlark.NewDict(len(params))
			for i, v := range params {
				if err := d.SetKey(starlark.String(paths[i]), starlib.NewVariable(thread, v)); err != nil {
					return nil, err
				}
			}
			return d, nil
		}), nil
	}
	return nil, nil
}

func newSelector(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "bricks", &v); err != nil {
		return nil, err
	}
	if br, ok := v.(*Brick); ok {
		return &selectorValue{&bricks.Selector{Bricks: []bricks.Brick{br.B}}}, nil
	}
	bs, err := brickList("Selector: bricks", v, false)
	if err != nil {
		return nil, err
	}
	return &selectorValue{&bricks.Selector{Bricks: bs}}, nil
}
