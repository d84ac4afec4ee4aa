package blocks

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.bricks.recurrent: Blocks' recurrent bricks.
//
//	SimpleRecurrent(dim, activation, name=None, weights_init=None, seed=None)
//	    h(t) = activation(inputs(t) + h(t-1)·W); parameters W, initial_state
//	LSTM(dim, activation=None, gate_activation=None, ...)
//	    inputs of 4·dim (input, forget, cell, output parts), diagonal peepholes;
//	    apply returns (states, cells); parameters W_state, W_cell_to_in,
//	    W_cell_to_forget, W_cell_to_out, initial_state, initial_cells
//	GatedRecurrent(dim, activation=None, gate_activation=None, ...)
//	    inputs (dim) and gate_inputs (2·dim: update, reset); parameters
//	    state_to_state, state_to_gates, initial_state
//	Bidirectional(prototype, name=None)
//	    children forward and backward (copies of the prototype); outputs
//	    concatenated on the last axis
//	RecurrentStack(transitions, fork_prototype=None, states_name="states", skip_connections=False, name=None)
//	    layers of recurrent transitions (or Bidirectionals), renamed name#level;
//	    layer k>0 reads layer k-1's states through a Fork (forks[k-1], with a bias
//	    unless skip_connections); states "states", "states#1", ... (and "cells#k"
//	    for LSTMs). apply(..., low_memory=False) runs one layer after another;
//	    low_memory=True runs all layers in one scan (same values).
//
// A recurrent application is called with its inputs by name or position
// (sequences (time, batch, ...), states, contexts; the mask and the states
// are optional: a mask of 0 keeps the previous state, missing states start
// from the brick's initial states) and the keywords iterate=True (False:
// one step on (batch, ...) inputs), reverse=False (iterate from the end;
// outputs in iteration order) and return_initial_states=False. Several
// outputs come back as a tuple: h, c = lstm.apply(inputs=x, mask=m).
//
// Module blocks.bricks.lookup: LookupTable(length, dim, name=None,
// weights_init=None): apply(indices) gives W[indices] (indices.shape + (dim,)).
//
// Module blocks.bricks.parallel (the prototype is a Linear brick, copied
// per channel):
//
//	Parallel(input_names, input_dims, output_dims, prototype=None)   apply(**inputs): one output per input
//	Fork(output_names, input_dim, prototype=None, **kwargs: output_dims)   apply(input_): children fork_<name>
//	Distribute(target_names, source_name, target_dims, source_dim, prototype=None)
//	    apply(source, *targets): targets + transform(source)
//	Merge(input_names, input_dims, output_dim, prototype=None)       apply(*inputs): Σ transform(input)
func recurrentModules() (mods []*starlarkstruct.Module) {
	rec := starlark.StringDict{}
	rec["BaseRecurrent"] = &BrickClass{Class: "BaseRecurrent"}
	rec["recurrent"] = starlib.NewBuiltin("recurrent", recurrentBuiltin) // script_apps.go
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.recurrent", Members: rec})
	// LookupTable and the blocks.bricks.parallel bricks are tables
	// (bricks_recurrent_table.go).
	return
}

func optBrick(class, what string, v starlark.Value) (bricks.Brick, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	b, ok := v.(*Brick)
	if !ok {
		return nil, fmt.Errorf("%s: %s must be a brick, got %s", class, what, v.Type())
	}
	return b.B, nil
}

func strList(class, what string, v starlark.Value) ([]string, error) {
	out, elem, ok := starlib.Strings(v)
	switch {
	case !ok && elem == nil:
		return nil, fmt.Errorf("%s: %s must be a list of strings, got %s", class, what, typeOf(v))
	case !ok:
		return nil, fmt.Errorf("%s: %s must be a list of strings, got an element of type %s", class, what, elem.Type())
	}
	return out, nil
}

func optInts(class, what string, v starlark.Value) ([]int, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	is, err := starlib.AsInts(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %v", class, what, err)
	}
	return is, nil
}

// optPrototype is a brick's prototype argument: nil for None, else a
// Feedforward brick (a Linear, a LinearMaxout, a script class's brick
// with input_dim and output_dim). Unless scripts is set, the prototype
// must be a built-in brick (the Go brick copies it, without a script
// class's parts).
func optPrototype(class, param string, v starlark.Value, scripts bool) (bricks.Feedforward, error) {
	b, err := optBrick(class, param, v)
	if err != nil || b == nil {
		return nil, err
	}
	f, ok := b.(bricks.Feedforward)
	if !ok {
		return nil, fmt.Errorf("%s: %s must be a brick with input_dim and output_dim (a Linear, a LinearMaxout, a script class's brick), got %s", class, param, b.BaseBrick().Class())
	}
	if !scripts && brickExtra(b) != nil {
		return nil, fmt.Errorf("%s: %s: a script class's brick is not supported here (a built-in brick such as Linear is)", class, param)
	}
	return f, nil
}

// callKeywordApplication calls an application of a brick whose inputs are
// optional or take the @recurrent keywords (iterate, reverse,
// return_initial_states). Positional arguments fill the inputs in order;
// None leaves an input out.
func callKeywordApplication(thread *starlark.Thread, a *BoundApplication, ka bricks.KeywordApplier, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	base := a.Brick.BaseBrick()
	fname := base.Name + "." + a.App
	app := a.application()
	if app == nil {
		return nil, fmt.Errorf("%s has no application %s", base.AnnotationName(), a.App)
	}
	positional := app.Inputs
	if order, ok := recurrentPositional[base.Class()+"."+a.App]; ok {
		positional = order
	}
	stack, isStack := a.Brick.(*bricks.RecurrentStack)
	if isStack {
		// Blocks binds a RecurrentStack's positional arguments to its
		// sequences, then its contexts.
		positional = append(append([]string(nil), stack.Spec().Sequences...), stack.Spec().Contexts...)
	}
	if len(args) > len(positional) {
		return nil, fmt.Errorf("%s takes at most %d positional inputs (%s), got %d", fname, len(positional), strings.Join(positional, ", "), len(args))
	}
	vals := map[string]starlark.Value{}
	for i, x := range args {
		vals[positional[i]] = x
	}
	opts := bricks.RecurrentOptions{}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		switch k {
		case "low_memory":
			if !isStack {
				break
			}
			bv, ok := kv[1].(starlark.Bool)
			if !ok {
				return nil, fmt.Errorf("%s: low_memory must be True or False, got %s", fname, kv[1].Type())
			}
			opts.LowMemory = bool(bv)
			continue
		case "iterate", "reverse", "return_initial_states":
			bv, ok := kv[1].(starlark.Bool)
			if !ok {
				return nil, fmt.Errorf("%s: %s must be True or False, got %s", fname, k, kv[1].Type())
			}
			switch k {
			case "iterate":
				opts.NoIterate = !bool(bv)
			case "reverse":
				opts.Reverse = bool(bv)
			default:
				opts.ReturnInitialStates = bool(bv)
			}
			continue
		}
		known := false
		for _, n := range app.Inputs {
			known = known || n == k
		}
		if !known {
			return nil, fmt.Errorf("%s got an unexpected keyword argument %s (inputs: %s; options: iterate, reverse, return_initial_states)", fname, k, strings.Join(app.Inputs, ", "))
		}
		if _, dup := vals[k]; dup {
			return nil, fmt.Errorf("%s got multiple values for %s", fname, k)
		}
		vals[k] = kv[1]
	}
	ins := map[string]*core.Variable{}
	for k, x := range vals {
		if x == starlark.None {
			continue
		}
		v, err := starlib.AsVariable(thread, x)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", fname, k, err)
		}
		ins[k] = v
	}
	outs, err := ka.ApplyKeywords(a.App, ins, opts)
	if err != nil {
		return nil, err
	}
	if len(outs) == 1 {
		return starlib.NewVariable(thread, outs[0]), nil
	}
	t := make(starlark.Tuple, len(outs))
	for i, o := range outs {
		t[i] = starlib.NewVariable(thread, o)
	}
	return t, nil
}

// extraBrickAttr gives access to any brick's parameters by name
// (lstm.W_state, lookup.W), Bidirectional's forward, backward and
// prototype, RecurrentStack's forks and transitions, get_dim and
// SequenceGenerator.generate.

func extraBrickAttr(b *Brick, name string) (starlark.Value, bool) {
	base := b.B.BaseBrick()
	for _, p := range base.Parameters {
		if p.Name == name {
			return &starlib.Variable{V: p}, true
		}
	}
	if bi, ok := b.B.(*bricks.Bidirectional); ok {
		switch name {
		case "forward":
			return &Brick{bi.Forward}, true
		case "backward":
			return &Brick{bi.Backward}, true
		case "prototype":
			return &Brick{bi.Prototype}, true
		}
	}
	if st, ok := b.B.(*bricks.RecurrentStack); ok {
		switch name {
		case "forks":
			out := make([]starlark.Value, len(st.Forks))
			for i, f := range st.Forks {
				out[i] = &Brick{f}
			}
			return starlark.NewList(out), true
		case "transitions":
			out := make([]starlark.Value, len(st.Transitions))
			for i, t := range st.Transitions {
				out[i] = &Brick{t}
			}
			return starlark.NewList(out), true
		}
		if v := brickClassStatic("RecurrentStack", name); v != nil {
			return v, true // static methods read through an instance too
		}
	}
	if v, ok := generatorAttr(b, name); ok {
		return v, true
	}
	if gd, ok := b.B.(bricks.GetDimmer); ok && name == "get_dim" {
		return starlib.NewBuiltin("get_dim", func(_ *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var n string
			if err := starlark.UnpackPositionalArgs(fb.Name(), args, kwargs, 1, &n); err != nil {
				return nil, err
			}
			d, err := gd.GetDim(n)
			if err != nil {
				return nil, err
			}
			return starlark.MakeInt(d), nil
		}), true
	}
	return nil, false
}

// recurrentPositional is the order in which Blocks' @recurrent binds
// positional arguments: the Python signature of the application (the
// sequences, states and contexts in the order the method lists them),
// not sequences-then-states. Checked against Blocks' signatures in
// recurrent_test.go.
var recurrentPositional = map[string][]string{
	"SimpleRecurrent.apply": {"inputs", "states", "mask"},
	"LSTM.apply":            {"inputs", "states", "cells", "mask"},
	"GatedRecurrent.apply":  {"inputs", "gate_inputs", "states", "mask"},
}
