package starlib

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// The builtins and helpers below are shared by the tensor and theano
// modules and by Blocks' (theano.function, theano.shared).

// Variables converts arguments with AsVariable, naming the parameter of a
// value that does not convert.
func Variables(thread *starlark.Thread, fname string, params []string, vals ...starlark.Value) ([]*core.Variable, error) {
	out := make([]*core.Variable, len(vals))
	for i, v := range vals {
		x, err := AsVariable(thread, v)
		if err != nil {
			return nil, fmt.Errorf("%s: for parameter %s: %v", fname, params[i], err)
		}
		out[i] = x
	}
	return out, nil
}

// TheanoFunction is the builtin function(inputs, outputs, updates=None)
// of tensor and theano: it compiles a Function.
func TheanoFunction(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := settingsCheckpoint(thread); err != nil {
		return nil, err
	}
	var insV, outsV starlark.Value
	var upV starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "inputs", &insV, "outputs", &outsV, "updates?", &upV); err != nil {
		return nil, err
	}
	items, ok := Elems(insV)
	if !ok {
		return nil, fmt.Errorf("function: inputs must be a list of input variables, got %s", insV.Type())
	}
	var ins []*core.Variable
	for i, it := range items {
		v, ok := it.(*Variable)
		if !ok {
			return nil, fmt.Errorf("function: input %d is %s, want an input variable", i, it.Type())
		}
		ins = append(ins, v.V)
	}
	outs, single, err := VariableList(thread, outsV)
	if err != nil {
		return nil, fmt.Errorf("function: outputs: %v", err)
	}
	ups, err := Updates(thread, upV)
	if err != nil {
		return nil, fmt.Errorf("function: %v", err)
	}
	f, err := core.CompileFor(Device(thread), ins, outs, ups)
	if err != nil {
		return nil, fmt.Errorf("function: %v", err)
	}
	f.SetMemoryLimit(memoryLimit(thread))
	return &Function{F: f, single: single}, nil
}

// TheanoShared is the builtin shared(value, name=None) of tensor and
// theano: a shared variable holding a copy of value (floatX for numbers
// and lists with a float).
func TheanoShared(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var val starlark.Value
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &val, "name??", &name); err != nil {
		return nil, err
	}
	var a *nd.Array
	var err error
	if arr, ok := val.(*Array); ok {
		a = arr.A.Copy()
	} else if a, err = ToArrayFloat(val, FloatX(thread)); err != nil {
		return nil, fmt.Errorf("shared: %v", err)
	}
	return NewVariable(thread, core.NewShared(a, name)), nil
}
