package starlib

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// ShapeDims reads a shape argument: x.shape (one int vector) or a tuple or
// list of ints and int scalar variables.
func ShapeDims(fname string, v starlark.Value) ([]*core.Variable, error) {
	switch v := v.(type) {
	case *Variable:
		return []*core.Variable{v.V}, nil
	case starlark.Int:
		return ShapeDims(fname, starlark.Tuple{v})
	case starlark.Tuple, *starlark.List:
		var out []*core.Variable
		it := v.(starlark.Iterable).Iterate()
		defer it.Done()
		var x starlark.Value
		for i := 0; it.Next(&x); i++ {
			switch x.(type) {
			case starlark.Int, *Variable:
			default:
				return nil, fmt.Errorf("%s: shape[%d]: got %s, want an int or an int scalar variable (x.shape[0])", fname, i, x.Type())
			}
			d, err := ToVariable(x, nd.Int64)
			if err != nil {
				return nil, fmt.Errorf("%s: shape[%d]: %v", fname, i, err)
			}
			out = append(out, d)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: shape: got %s, want x.shape or a tuple of ints and int scalars", fname, v.Type())
}
