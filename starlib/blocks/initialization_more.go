package blocks

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/starlib"
)

// More of blocks.initialization:
//
//	SparseND(axis, **kwargs: num_init, weights_init, sparse_init=None)
//	    Sparse over a grid: num_init entries (or that fraction) of each
//	    cell of the axes in axis (an int or a tuple) are drawn from weights_init
//	scheme.generate(rng, shape)   the array the scheme draws from rng (a numpy.random.RandomState)
//
// A scheme prints as Blocks' repr: <blocks.initialization.Constant object: constant=1.0>.

// Attr: generate(rng, shape); on a script subclass its attributes
// first and its __getattr__ last (Python's fallback).
func (s *Scheme) Attr(name string) (starlark.Value, error) {
	st := s.ScriptState() // script_classes.go
	if st == nil {
		return s.attr(name)
	}
	if v, found, err := starlib.ScriptAttr(s, st, name); found || err != nil {
		return v, err
	}
	if v, err := s.attr(name); v != nil || err != nil {
		return v, err
	}
	return starlib.ScriptGetattr(s, st, name)
}

func (s *Scheme) attr(name string) (starlark.Value, error) {
	if name == "initialize" {
		return schemeInitialize(s), nil // script_bricks.go
	}
	if name != "generate" {
		return nil, nil
	}
	return starlib.NewBuiltin("generate", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var rngV, shapeV starlark.Value
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "rng", &rngV, "shape", &shapeV); err != nil {
			return nil, err
		}
		var r *starlib.RandomState
		switch x := rngV.(type) {
		case *starlib.RandomState:
			r = x
		case starlark.NoneType:
			r = &starlib.RandomState{R: nil}
		default:
			return nil, fmt.Errorf("generate: rng must be a numpy.random.RandomState, got %s", rngV.Type())
		}
		shape, err := starlib.AsInts(shapeV)
		if err != nil {
			return nil, fmt.Errorf("generate: shape: %v", err)
		}
		if r.R == nil {
			if _, ok := s.S.(initialization.Constant); !ok {
				if _, ok := s.S.(initialization.ConstantArray); !ok {
					return nil, fmt.Errorf("generate: %s draws random numbers: give a numpy.random.RandomState", schemeRepr(s.S))
				}
			}
		}
		a, err := s.S.Generate(r.R, shape)
		if err != nil {
			return nil, err
		}
		return starlib.FromArray(a.Astype(starlib.FloatX(thread))), nil
	}), nil
}

// AttrNames lists generate.
func (s *Scheme) AttrNames() []string { return []string{"generate", "initialize"} }

// schemeRepr is Blocks' repr of a scheme (repr_attrs), without the address.
func schemeRepr(s initialization.Scheme) string {
	f := func(x float64) string { return starlark.Float(x).String() }
	var class string
	var attrs []string
	switch s := s.(type) {
	case initialization.Constant:
		class, attrs = "Constant", []string{"constant=" + f(s.Value)}
	case initialization.ConstantArray:
		class, attrs = "Constant", []string{"constant=" + s.Value.String()}
	case initialization.IsotropicGaussian:
		class, attrs = "IsotropicGaussian", []string{"mean=" + f(s.Mean), "std=" + f(s.Std)}
	case initialization.Uniform:
		class, attrs = "Uniform", []string{"mean=" + f(s.Mean), "width=" + f(s.Width)}
	case initialization.Identity:
		class, attrs = "Identity", []string{"mult=" + f(s.Mult)}
	case initialization.Orthogonal:
		class, attrs = "Orthogonal", []string{"scale=" + f(s.Scale)}
	case initialization.SparseND:
		return fmt.Sprintf("<blocks.initialization.SparseND object: axis=%v>", s.Axis)
	case *scriptScheme:
		return s.String()
	default:
		return "<blocks.initialization." + strings.SplitN(s.String(), "(", 2)[0] + " object>"
	}
	return fmt.Sprintf("<blocks.initialization.%s object: %s>", class, strings.Join(attrs, ", "))
}
