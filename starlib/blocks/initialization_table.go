package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// The initialization schemes of blocks.initialization as tables
// (classtable.go).
func initializationTableModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.initialization", Members: registerClasses(false, initializationTables...)})
	return
}

// scheme is an initialization scheme's table.
func scheme(name, doc string, p []classParam, make func(c *classCall) (initialization.Scheme, error)) *classTable {
	return &classTable{Module: "blocks.initialization", Name: name, Doc: doc, Params: p,
		New: func(c *classCall) (starlark.Value, error) {
			s, err := make(c)
			if err != nil {
				return nil, err
			}
			return &Scheme{s}, nil
		}}
}

// argScheme is an initialization scheme.
func schemeParam(name, def string) classParam {
	return classParam{Name: name, Default: def, Kind: argScheme}
}

var initializationTables = []*classTable{
	scheme("Constant", "every entry equal to constant (a number or an array, broadcast)", ps(req("constant")),
		func(c *classCall) (initialization.Scheme, error) {
			v := c.Value("constant")
			if f, ok := starlark.AsFloat(v); ok {
				return initialization.Constant{Value: f}, nil
			}
			f64 := nd.Float64
			a, err := starlib.ToArray(v, &f64)
			if err != nil {
				return nil, fmt.Errorf("Constant: constant: %v", err)
			}
			return initialization.ConstantArray{Value: a}, nil
		}),
	scheme("IsotropicGaussian", "normal draws (std comes first, as in Blocks)", ps(num("std", "1"), num("mean", "0")),
		func(c *classCall) (initialization.Scheme, error) {
			return initialization.IsotropicGaussian{Std: c.Float("std"), Mean: c.Float("mean")}, nil
		}),
	scheme("Uniform", "uniform on [mean-width/2, mean+width/2); give width or std", ps(num("mean", "0.0"), num("width", "None"), num("std", "None")),
		func(c *classCall) (initialization.Scheme, error) {
			opt := func(k string) *float64 {
				if c.IsNone(k) {
					return nil
				}
				f := c.Float(k)
				return &f
			}
			return initialization.NewUniform(c.Float("mean"), opt("width"), opt("std"))
		}),
	scheme("Identity", "mult times the identity matrix", ps(num("mult", "1")),
		func(c *classCall) (initialization.Scheme, error) {
			return initialization.Identity{Mult: c.Float("mult")}, nil
		}),
	scheme("Orthogonal", "a random orthogonal matrix (QR of normal draws, signs fixed)", ps(num("scale", "1")),
		func(c *classCall) (initialization.Scheme, error) {
			return initialization.Orthogonal{Scale: c.Float("scale")}, nil
		}),
	scheme("Sparse", "num_init entries per row drawn from weights_init, the others from sparse_init (0)",
		ps(num("num_init", ""), schemeParam("weights_init", ""), schemeParam("sparse_init", "None")),
		func(c *classCall) (initialization.Scheme, error) { return sparseOf(c), nil }),
	scheme("SparseND", "Sparse over a grid of the axes in axis",
		ps(req("axis"), classParam{Name: "num_init", Keyword: true, Kind: argFloat}, classParam{Name: "weights_init", Keyword: true, Kind: argScheme},
			classParam{Name: "sparse_init", Default: "None", Keyword: true, Kind: argScheme}),
		func(c *classCall) (initialization.Scheme, error) {
			var axes starlib.Axes
			if err := axes.Unpack(c.Value("axis")); err != nil || c.IsNone("axis") {
				return nil, fmt.Errorf("SparseND: axis: got %s, want an int or a tuple of ints", c.Value("axis").Type())
			}
			return initialization.SparseND{Axis: axes.Axes, Sparse: sparseOf(c)}, nil
		}),
}

// sparseOf is the Sparse scheme of a call's num_init, weights_init and
// sparse_init.
func sparseOf(c *classCall) initialization.Sparse {
	s := initialization.Sparse{NumInit: c.Float("num_init"), WeightsInit: c.Value("weights_init").(*Scheme).S}
	if sp, ok := c.Value("sparse_init").(*Scheme); ok {
		s.SparseInit = sp.S
	}
	return s
}
