package tensor

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Module theano: scan, Theano's loop, for recurrences written in the
// script itself.
//
//	scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None, go_backwards=False, name=None)
//	    fn is called once, on per-step variables: a slice of each sequence,
//	    then the previous value of each output whose outputs_info entry is
//	    not None, then the non-sequences. It returns one output or a list;
//	    an output with an initial value in outputs_info is fed back. Returns
//	    (outputs, updates) as Theano: the outputs stacked over time (a list
//	    when fn returns several) and an empty dict of updates. The number of
//	    steps is the sequences' length, known only when the function runs;
//	    without sequences it is n_steps (a constant int here).
func theanoScanModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "theano", Members: starlark.StringDict{"scan": starlib.NewBuiltin("scan", theanoScan)}})
	return
}

func scanVarList(thread *starlark.Thread, what string, v starlark.Value, allowNone bool) ([]*core.Variable, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	if _, ok := v.(*starlib.Variable); ok {
		v = starlark.NewList([]starlark.Value{v})
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("scan: %s must be a variable or a list of them, got %s", what, v.Type())
	}
	var out []*core.Variable
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for i := 0; iter.Next(&x); i++ {
		if x == starlark.None && allowNone {
			out = append(out, nil)
			continue
		}
		xv, err := starlib.AsVariable(thread, x)
		if err != nil {
			return nil, fmt.Errorf("scan: %s[%d]: %v", what, i, err)
		}
		out = append(out, xv)
	}
	return out, nil
}

func theanoScan(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Callable
	var seqV, infoV, nonSeqV starlark.Value = starlark.None, starlark.None, starlark.None
	back := false
	name := ""
	nSteps := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "fn", &fn, "sequences?", &seqV, "outputs_info?", &infoV,
		"non_sequences?", &nonSeqV, "n_steps?", &nSteps, "go_backwards?", &back, "name?", &name); err != nil {
		return nil, err
	}
	seqs, err := scanVarList(thread, "sequences", seqV, false)
	if err != nil {
		return nil, err
	}
	info, err := scanVarList(thread, "outputs_info", infoV, true)
	if err != nil {
		return nil, err
	}
	nonSeqs, err := scanVarList(thread, "non_sequences", nonSeqV, false)
	if err != nil {
		return nil, err
	}
	var states []*core.Variable
	for _, v := range info {
		if v != nil {
			states = append(states, v)
		}
	}
	var single bool
	var nOut int
	stO, exO, err := core.Scan(core.ScanSpec{Sequences: seqs, States: states, Contexts: nonSeqs, Reverse: back, Name: name, NSteps: nSteps},
		func(s, st, ctx []*core.Variable) ([]*core.Variable, []*core.Variable, error) {
			var call starlark.Tuple
			for _, v := range s {
				call = append(call, starlib.NewVariable(thread, v))
			}
			for _, v := range st {
				call = append(call, starlib.NewVariable(thread, v))
			}
			for _, v := range ctx {
				call = append(call, starlib.NewVariable(thread, v))
			}
			res, err := starlark.Call(thread, fn, call, nil)
			if err != nil {
				return nil, nil, err
			}
			outs, err := scanVarList(thread, "the step's outputs", res, false)
			if err != nil {
				return nil, nil, err
			}
			_, single = res.(*starlib.Variable)
			nOut = len(outs)
			if len(info) > 0 && len(info) != len(outs) {
				return nil, nil, fmt.Errorf("the step returned %d outputs but outputs_info has %d entries", len(outs), len(info))
			}
			var ns, ex []*core.Variable
			for i, o := range outs {
				if i < len(info) && info[i] != nil {
					ns = append(ns, o)
				} else {
					ex = append(ex, o)
				}
			}
			return ns, ex, nil
		})
	if err != nil {
		return nil, err
	}
	result := make([]starlark.Value, nOut)
	si, ei := 0, 0
	for i := 0; i < nOut; i++ {
		if i < len(info) && info[i] != nil {
			result[i] = starlib.NewVariable(thread, stO[si])
			si++
		} else {
			result[i] = starlib.NewVariable(thread, exO[ei])
			ei++
		}
	}
	var out starlark.Value = starlark.NewList(result)
	if single {
		out = result[0]
	}
	return starlark.Tuple{out, starlark.NewDict(0)}, nil
}
