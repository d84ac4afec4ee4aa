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
	var upV, mode, name, profile starlark.Value = starlark.None, starlark.None, starlark.None, starlark.None
	onUnused := "raise"
	downcast := false
	// mode, name and profile are Theano's compilation settings, accepted
	// and ignored (the graph is compiled one way); an input the outputs do
	// not use is accepted whatever on_unused_input says (Theano's 'ignore').
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "inputs", &insV, "outputs", &outsV, "updates?", &upV,
		"mode?", &mode, "name?", &name, "profile?", &profile, "on_unused_input?", &onUnused, "allow_input_downcast?", &downcast); err != nil {
		return nil, err
	}
	switch onUnused {
	case "raise", "warn", "ignore":
	default:
		return nil, fmt.Errorf("function: on_unused_input must be 'raise', 'warn' or 'ignore', got %q", onUnused)
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
	return &Function{F: f, single: single, downcast: downcast}, nil
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
