package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// More of ComputationGraph, as Blocks has it:
//
//	cg.replace(replacements)   replacements a dict or a list of (variable, value)
//	    pairs, made one at a time in the graph's order; a variable not in the graph
//	    or an AUXILIARY one is warned about, as Blocks does
//	cg.scans                   the graph's loops (theano.scan, recurrent bricks), one variable each
//	cg.scan_variables          the variables inside the loops' step graphs
//	cg.get_snapshot(data)      a dict of every variable that has a role (shared ones
//	    excepted) to its value on data, a dict of input name to array
//	cg.updates                 the updates the graph needs when compiled: none here, an
//	    empty list (Blocks lists those of Theano's random streams; a random op here
//	    advances its own generator)
//	cg.get_theano_function(additional_updates=None, **kwargs)
//	    theano.function(cg.inputs, cg.outputs, updates=cg.updates + additional_updates,
//	    **kwargs): a list of outputs for a list, called with one array per input in
//	    cg.inputs' order

func graphMoreAttr(g *ComputationGraph, name string) starlark.Value {
	switch name {
	case "updates":
		return starlark.NewList(nil)
	case "get_theano_function":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var ups starlark.Value = starlark.None
			if len(args) > 1 {
				return nil, fmt.Errorf("get_theano_function: got %d positional arguments, want at most 1 (additional_updates)", len(args))
			}
			if len(args) == 1 {
				ups = args[0]
			}
			var rest []starlark.Tuple
			for _, kv := range kwargs {
				if kv[0] == starlark.String("additional_updates") {
					ups = kv[1]
					continue
				}
				rest = append(rest, kv)
			}
			// Blocks' graph updates are none here (cg.updates): the
			// function's updates are the additional ones.
			if ups != starlark.None {
				rest = append(rest, starlark.Tuple{starlark.String("updates"), ups})
			}
			fn := starlib.NewBuiltin("get_theano_function", starlib.TheanoFunction)
			return starlark.Call(thread, fn, starlark.Tuple{variableList(nil, g.G.Inputs()), variableList(nil, g.G.Outputs)}, rest)
		}).BindReceiver(g)
	case "replace":
		return starlib.NewBuiltin("replace", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var replV starlark.Value
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "replacements", &replV); err != nil {
				return nil, err
			}
			repl, ok := replV.(*starlark.Dict)
			if !ok {
				var err error
				if repl, err = pairsDict(replV); err != nil {
					return nil, fmt.Errorf("replace: replacements: %v", err)
				}
			}
			inGraph := map[*core.Variable]bool{}
			for _, v := range g.G.Variables {
				inGraph[v] = true
			}
			m := map[*core.Variable]*core.Variable{}
			var missing []string
			for _, kv := range repl.Items() {
				k, ok := kv[0].(*starlib.Variable)
				if !ok {
					return nil, fmt.Errorf("replace: key %s is not a variable", kv[0].Type())
				}
				v, err := starlib.AsVariable(thread, kv[1])
				if err != nil {
					return nil, fmt.Errorf("replace: value for %s: %v", k.V, err)
				}
				if !inGraph[k.V] {
					missing = append(missing, k.V.String())
				} else if core.HasRole(k.V, core.Auxiliary) {
					thread.Print(thread, fmt.Sprintf("WARNING: replace method was asked to replace a variable (%s) that is an auxiliary variable.", k.V))
				}
				m[k.V] = v
			}
			if len(missing) > 0 {
				thread.Print(thread, fmt.Sprintf("WARNING: replace method was asked to replace a variable(s) (%v) that is not a part of the computational graph.", missing))
			}
			ng, err := g.G.Replace(m)
			if err != nil {
				return nil, err
			}
			return &ComputationGraph{G: ng}, nil
		})
	case "scans":
		var out []*core.Variable
		for _, v := range g.G.Variables {
			if core.IsScan(v) {
				out = append(out, v)
			}
		}
		return variableList(nil, out)
	case "scan_variables":
		return variableList(nil, g.G.ScanVariables())
	case "get_snapshot":
		return starlib.NewBuiltin("get_snapshot", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var data *starlark.Dict
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data", &data); err != nil {
				return nil, err
			}
			return graphSnapshot(thread, g.G, data)
		})
	}
	return nil
}

var graphMoreAttrNames = []string{"get_snapshot", "get_theano_function", "scan_variables", "scans", "updates"}

func graphSnapshot(thread *starlark.Thread, g *graph.ComputationGraph, data *starlark.Dict) (starlark.Value, error) {
	var outs []*core.Variable
	for _, v := range g.Variables {
		if len(v.Tag.Roles) > 0 && !v.IsShared() {
			outs = append(outs, v)
		}
	}
	ins := g.Inputs()
	vals, err := batchArrays(thread, data, ins)
	if err != nil {
		return nil, fmt.Errorf("get_snapshot: %v", err)
	}
	args := make([]*nd.Array, len(ins))
	for i, in := range ins {
		a, ok := vals[in.Name]
		if !ok {
			return nil, fmt.Errorf("get_snapshot: no data for the input %s", in)
		}
		args[i] = a
	}
	f, err := core.CompileFor(starlib.Device(thread), ins, outs, nil)
	if err != nil {
		return nil, fmt.Errorf("get_snapshot: %v", err)
	}
	res, err := f.Call(args)
	if err != nil {
		return nil, fmt.Errorf("get_snapshot: %v", err)
	}
	d := starlark.NewDict(len(outs))
	for i, v := range outs {
		if err := d.SetKey(&starlib.Variable{V: v}, starlib.FromArray(res[i])); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// popCallID takes Blocks' call_id keyword out of an application's
// keyword arguments.
func popCallID(kwargs []starlark.Tuple) (starlark.Value, []starlark.Tuple, bool) {
	for i, kv := range kwargs {
		if string(kv[0].(starlark.String)) == "call_id" {
			rest := append(append([]starlark.Tuple(nil), kwargs[:i]...), kwargs[i+1:]...)
			return kv[1], rest, true
		}
	}
	return nil, kwargs, false
}

// setCallID records call_id (a string) in the metadata of the
// application call that made the result v.
func setCallID(v, callID starlark.Value) error {
	s, ok := starlark.AsString(callID)
	if !ok {
		return fmt.Errorf("call_id must be a string, got %s", callID.Type())
	}
	var first *starlib.Variable
	switch x := v.(type) {
	case *starlib.Variable:
		first = x
	case starlark.Tuple:
		if len(x) > 0 {
			first, _ = x[0].(*starlib.Variable)
		}
	}
	if first == nil || first.V.Tag.ApplicationCall == nil {
		return nil
	}
	first.V.Tag.ApplicationCall.Metadata["call_id"] = s
	return nil
}
