package tensor

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// allocModules are Theano's constructors of arrays with a symbolic
// shape, in module tensor (and theano.tensor):
//
//	zeros(shape, dtype=floatX)     ones(shape, dtype=floatX)
//	alloc(value, *shape)           value (a number) broadcast to shape
//
// shape is x.shape, or a tuple or list whose entries are ints or int
// scalars computed from shapes (3 * x.shape[0]); the shape is known when
// the graph runs.
func allocModules() (mods []*starlarkstruct.Module) {
	members := starlark.StringDict{
		"zeros": starlib.NewBuiltin("zeros", tensorFill(0)),
		"ones":  starlib.NewBuiltin("ones", tensorFill(1)),
		"alloc": starlib.NewBuiltin("alloc", tensorAlloc),
	}
	for _, name := range []string{"tensor", "theano.tensor"} {
		mods = append(mods, &starlarkstruct.Module{Name: name, Members: members})
	}
	return mods
}

func tensorFill(value float64) func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var shape starlark.Value
		var dt starlib.DTypeArg
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shape, "dtype?", &dt); err != nil {
			return nil, err
		}
		dims, err := starlib.ShapeDims(b.Name(), shape)
		if err != nil {
			return nil, err
		}
		dtype := starlib.FloatX(thread)
		if p := dt.Get(thread); p != nil {
			dtype = *p
		}
		v, err := core.AllocShaped(value, dtype, dims)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return starlib.NewVariable(thread, v), nil
	}
}

func tensorAlloc(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("alloc: unexpected keyword argument %s", kwargs[0][0])
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("alloc(value, *shape): want a value and at least one dimension, got %d arguments", len(args))
	}
	f, ok := starlark.AsFloat(args[0])
	if !ok {
		return nil, fmt.Errorf("alloc: value must be a number, got %s", args[0].Type())
	}
	dtype := starlib.FloatX(thread)
	if _, isInt := args[0].(starlark.Int); isInt {
		dtype = nd.Int64
	}
	dims, err := starlib.ShapeDims("alloc", args[1:])
	if err != nil {
		return nil, err
	}
	v, err := core.AllocShaped(f, dtype, dims)
	if err != nil {
		return nil, fmt.Errorf("alloc: %v", err)
	}
	return starlib.NewVariable(thread, v), nil
}
