package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/starlib"
)

// More brick attributes, as Blocks has them:
//
//	linear.get_dim(name)          input_dim for 'input_', output_dim for 'output'
//	lookup.get_dim(name)          0 for 'indices', dim for 'output'
//	recurrent.get_dim(name)       the dimension of a state, input or context
//	lookup.input_dim              0 (indices are integers; only 0 may be set)
//	lookup.output_dim             an alias of dim (settable)
//	brick.rng                     the brick's numpy.random.RandomState (seeded from seed)
//
// get_dim of an unknown name raises "ValueError: ... has no dimension NAME".

func moreBrickAttrNames(b bricks.Brick) []string {
	names := []string{"allocation_args", "rng"}
	switch b.(type) {
	case *bricks.Linear:
		names = append(names, "get_dim")
	case *bricks.LookupTable:
		names = append(names, "get_dim", "input_dim", "output_dim")
	default:
		if _, ok := b.(bricks.GetDimmer); ok {
			names = append(names, "get_dim")
		}
	}
	return names
}

func moreBrickAttr(b *Brick, name string) (starlark.Value, bool, error) {
	base := b.B.BaseBrick()
	dims := func(m map[string]string) starlark.Value {
		return starlib.NewBuiltin("get_dim", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var which string
			if err := starlark.UnpackPositionalArgs(fb.Name(), args, kwargs, 1, &which); err != nil {
				return nil, err
			}
			attr, ok := m[which]
			if !ok {
				return nil, fmt.Errorf("ValueError: %s has no dimension %s", base.AnnotationName(), which)
			}
			if attr == "" {
				return starlark.MakeInt(0), nil
			}
			return attrValue(brickAttrOf(b.B, attr)), nil
		})
	}
	switch name {
	case "allocation_args":
		var out []starlark.Value
		for _, sp := range brickSpecs(b.B) {
			if sp.Lazy == forAllocation {
				out = append(out, starlark.String(sp.Name))
			}
		}
		return starlark.NewList(out), true, nil
	case "rng":
		return &starlib.RandomState{R: base.RNG()}, true, nil
	case "get_dim":
		switch x := b.B.(type) {
		case *bricks.Linear:
			return dims(map[string]string{"input_": "input_dim", "output": "output_dim"}), true, nil
		case *bricks.LookupTable:
			return dims(map[string]string{"indices": "", "output": "dim"}), true, nil
		case bricks.GetDimmer:
			if _, conv := b.B.(bricks.DimBrick); conv {
				return nil, false, nil
			}
			return starlib.NewBuiltin("get_dim", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				var which string
				if err := starlark.UnpackPositionalArgs(fb.Name(), args, kwargs, 1, &which); err != nil {
					return nil, err
				}
				d, err := x.GetDim(which)
				if err != nil {
					return nil, fmt.Errorf("ValueError: %v", err)
				}
				return starlark.MakeInt(d), nil
			}), true, nil
		}
	case "input_dim":
		if _, ok := b.B.(*bricks.LookupTable); ok {
			return starlark.MakeInt(0), true, nil
		}
	case "output_dim":
		if _, ok := b.B.(*bricks.LookupTable); ok {
			return attrValue(brickAttrOf(b.B, "dim")), true, nil
		}
	}
	return nil, false, nil
}

// setBrickFieldMore sets the attributes moreBrickAttr adds; ok is false
// for the others.
func setBrickFieldMore(b *Brick, name string, v starlark.Value) (bool, error) {
	if _, ok := b.B.(*bricks.LookupTable); !ok {
		return false, nil
	}
	switch name {
	case "input_dim":
		var n int
		if err := starlark.AsInt(v, &n); err != nil || n != 0 {
			return true, fmt.Errorf("ValueError: LookupTable.input_dim is 0 (its input is integer indices); it cannot be set to %s", v)
		}
		return true, nil
	case "output_dim":
		return true, setBrickAttr(b.B, "dim", v)
	}
	return false, nil
}

// activationBricks lets MLP's activations be applications (Tanh().apply)
// as in Blocks: an application named apply stands for its brick, which
// MLP applies through apply.
func activationBricks(v starlark.Value) starlark.Value {
	items, ok := starlib.Elems(v)
	if !ok {
		return v
	}
	out := make([]starlark.Value, len(items))
	for i, it := range items {
		out[i] = it
		if app, ok := it.(*BoundApplication); ok && app.App == "apply" {
			out[i] = &Brick{app.Brick}
		}
	}
	return starlark.NewList(out)
}

// mlpPrototype reads MLP's prototype: None or a brick with input_dim and
// output_dim (Blocks' Feedforward: a Linear, a LinearMaxout, a script
// class's brick).
func mlpPrototype(v starlark.Value) (bricks.Feedforward, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	b, ok := v.(*Brick)
	if !ok {
		return nil, fmt.Errorf("MLP: prototype must be a brick with input_dim and output_dim, got %s", v.Type())
	}
	f, ok := b.B.(bricks.Feedforward)
	if !ok {
		return nil, fmt.Errorf("MLP: prototype must be a brick with input_dim and output_dim (a Linear, a LinearMaxout, a script class's brick), got %s", b.B.BaseBrick().Class())
	}
	return f, nil
}
