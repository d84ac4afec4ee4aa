package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/nd"
)

// Module blocks.initialization: Blocks' parameter initialization schemes.
//
//	Constant(constant)                     every entry equal to constant
//	IsotropicGaussian(std=1, mean=0)       normal draws (std comes first, as in Blocks)
//	Uniform(mean=0, width=None, std=None)  uniform on [mean-width/2, mean+width/2); give width or std
//	Identity(mult=1)                       mult times the identity matrix
//	Orthogonal(scale=1)                    a random orthogonal matrix (QR of normal draws, signs fixed)
//	Sparse(num_init, weights_init, sparse_init=None)  num_init entries per row from weights_init
//
// A scheme is set as a brick's weights_init or biases_init; the brick draws
// from its own numpy-exact generator, exactly the numbers Blocks draws.
func init() {
	Register("blocks.initialization", &starlarkstruct.Module{Name: "blocks.initialization", Members: starlark.StringDict{
		"Constant": NewBuiltin("Constant", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var c starlark.Value
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "constant", &c); err != nil {
				return nil, err
			}
			if f, ok := starlark.AsFloat(c); ok {
				return &Scheme{initialization.Constant{Value: f}}, nil
			}
			f64 := nd.Float64
			a, err := ToArray(c, &f64)
			if err != nil {
				return nil, fmt.Errorf("Constant: constant: %v", err)
			}
			return &Scheme{initialization.ConstantArray{Value: a}}, nil
		}),
		"IsotropicGaussian": NewBuiltin("IsotropicGaussian", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			std, mean := FloatArg(1), FloatArg(0)
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "std?", &std, "mean?", &mean); err != nil {
				return nil, err
			}
			return &Scheme{initialization.IsotropicGaussian{Std: float64(std), Mean: float64(mean)}}, nil
		}),
		"Uniform": NewBuiltin("Uniform", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			mean := FloatArg(0)
			var width, std starlark.Value = starlark.None, starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "mean?", &mean, "width?", &width, "std?", &std); err != nil {
				return nil, err
			}
			w, err := optFloat(width)
			if err != nil {
				return nil, fmt.Errorf("Uniform: width: %v", err)
			}
			s, err := optFloat(std)
			if err != nil {
				return nil, fmt.Errorf("Uniform: std: %v", err)
			}
			u, err := initialization.NewUniform(float64(mean), w, s)
			if err != nil {
				return nil, err
			}
			return &Scheme{u}, nil
		}),
		"Identity": NewBuiltin("Identity", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			mult := FloatArg(1)
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "mult?", &mult); err != nil {
				return nil, err
			}
			return &Scheme{initialization.Identity{Mult: float64(mult)}}, nil
		}),
		"Orthogonal": NewBuiltin("Orthogonal", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			scale := FloatArg(1)
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "scale?", &scale); err != nil {
				return nil, err
			}
			return &Scheme{initialization.Orthogonal{Scale: float64(scale)}}, nil
		}),
		"Sparse": NewBuiltin("Sparse", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var num FloatArg
			var w *Scheme
			var sparse starlark.Value = starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "num_init", &num, "weights_init", &w, "sparse_init?", &sparse); err != nil {
				return nil, err
			}
			s := initialization.Sparse{NumInit: float64(num), WeightsInit: w.S}
			if sp, ok := sparse.(*Scheme); ok {
				s.SparseInit = sp.S
			} else if sparse != starlark.None {
				return nil, fmt.Errorf("Sparse: sparse_init: got %s, want an initialization scheme", sparse.Type())
			}
			return &Scheme{s}, nil
		}),
		"SparseND": NewBuiltin("SparseND", newSparseND),
	}})
}

func optFloat(v starlark.Value) (*float64, error) {
	if v == starlark.None {
		return nil, nil
	}
	f, ok := starlark.AsFloat(v)
	if !ok {
		return nil, fmt.Errorf("got %s, want a number", v.Type())
	}
	return &f, nil
}

// Scheme is an initialization scheme as a Starlark value.
type Scheme struct{ S initialization.Scheme }

var _ starlark.Value = (*Scheme)(nil)

func (s *Scheme) String() string        { return schemeRepr(s.S) }
func (s *Scheme) Type() string          { return "Initialization" }
func (s *Scheme) Freeze()               {}
func (s *Scheme) Truth() starlark.Bool  { return true }
func (s *Scheme) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: Initialization") }
