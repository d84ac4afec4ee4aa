package blocks

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks/initialization"
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
func initializationModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.initialization", Members: starlark.StringDict{
		// The schemes are tables (initialization_table.go).
	}})
	return
}

// Scheme is an initialization scheme as a Starlark value.
type Scheme struct{ S initialization.Scheme }

var _ starlark.Value = (*Scheme)(nil)

func (s *Scheme) String() string       { return schemeRepr(s.S) }
func (s *Scheme) Type() string         { return "Initialization" }
func (s *Scheme) Freeze()              {}
func (s *Scheme) Truth() starlark.Bool { return true }
