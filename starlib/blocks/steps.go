package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// The parts of Blocks' step-rule and algorithm API that scripts and
// Blocks' own tests call directly, beside training through a main loop:
//
//	rule.compute_steps(previous_steps) -> (steps, updates)
//	    previous_steps maps each parameter to its step so far (a dict, in
//	    its order); steps is a dict with the same keys, updates a list of
//	    (shared variable, new value) pairs. A key that is not a variable
//	    (Blocks' tests use ints) stands for a constant parameter of that
//	    value, a step that is a number for a constant step.
//	algorithm.initialize()            compiles the training function
//	algorithm.process_batch(batch)    one step on a dict of source -> array
//	algorithm.updates                 the (variable, value) pairs applied each step
//	algorithm.inputs                  the training function's inputs (after initialize)

// stepRuleMethod returns the step rule's methods beside its
// hyperparameters, or nil.
func stepRuleMethod(s *StepRule, name string) starlark.Value {
	if name == "threshold" && s.name == "StepClipping" {
		return starlark.None // no threshold: Blocks' StepClipping(None) leaves steps as they are
	}
	if name != "compute_steps" {
		return nil
	}
	return starlib.NewBuiltin("compute_steps", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var prev *starlark.Dict
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "previous_steps", &prev); err != nil {
			return nil, err
		}
		items := prev.Items()
		params := make([]*core.Variable, len(items))
		steps := make([]*core.Variable, len(items))
		for i, kv := range items {
			p, err := stepKey(thread, kv[0])
			if err != nil {
				return nil, fmt.Errorf("compute_steps: key %s: %v", kv[0], err)
			}
			s, err := starlib.AsVariable(thread, kv[1])
			if err != nil {
				return nil, fmt.Errorf("compute_steps: the step of %s: %v", kv[0], err)
			}
			params[i], steps[i] = p, s
		}
		out, ups, err := s.R.ComputeSteps(params, steps)
		if err != nil {
			return nil, fmt.Errorf("compute_steps: %v", err)
		}
		d := starlark.NewDict(len(items))
		for i, kv := range items {
			if out[i] == steps[i] {
				_ = d.SetKey(kv[0], kv[1]) // unchanged: the caller's own value
				continue
			}
			_ = d.SetKey(kv[0], starlib.NewVariable(thread, out[i]))
		}
		return starlark.Tuple{d, updatesList(thread, ups)}, nil
	})
}

func updatesList(thread *starlark.Thread, ups []core.Update) *starlark.List {
	l := make([]starlark.Value, len(ups))
	for i, u := range ups {
		l[i] = starlark.Tuple{&starlib.Variable{V: u.Shared}, starlib.NewVariable(thread, u.Value)}
	}
	return starlark.NewList(l)
}

// algorithmAttr returns the attributes of algorithms that both kinds
// have (initialize, process_batch, updates, inputs), or nil.
func algorithmAttr(a *Algorithm, name string) starlark.Value {
	switch name {
	case "initialize":
		return starlib.NewBuiltin("initialize", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			return starlark.None, a.UA.Initialize()
		})
	case "process_batch":
		return starlib.NewBuiltin("process_batch", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var batch *starlark.Dict
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "batch", &batch); err != nil {
				return nil, err
			}
			m, err := batchArrays(thread, batch, a.UA.Inputs())
			if err != nil {
				return nil, fmt.Errorf("process_batch: %v", err)
			}
			return starlark.None, a.UA.ProcessBatch(m)
		})
	case "updates":
		return updatesList(nil, a.UA.Updates())
	case "inputs":
		return variableList(nil, a.UA.Inputs())
	}
	return nil
}

var algorithmAttrNames = []string{"initialize", "inputs", "process_batch", "updates"}

// batchArrays converts a batch dict (source name -> array or nested
// lists) to arrays, each of the dtype of the input variable of its name
// when there is one.
func batchArrays(thread *starlark.Thread, batch *starlark.Dict, inputs []*core.Variable) (map[string]*nd.Array, error) {
	types := map[string]nd.DType{}
	for _, v := range inputs {
		types[v.Name] = v.DType()
	}
	m := map[string]*nd.Array{}
	for _, kv := range batch.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("batch keys must be source names, got %s", kv[0].Type())
		}
		var a *nd.Array
		var err error
		if dt, ok := types[k]; ok {
			a, err = starlib.ToArray(kv[1], &dt)
		} else if _, isStr := kv[1].(starlark.String); isStr {
			a = nd.New(nd.Float64) // a source no input reads (checked against on_unused_sources)
		} else {
			a, err = starlib.ToArrayFloat(kv[1], starlib.FloatX(thread))
		}
		if err != nil {
			return nil, fmt.Errorf("source %s: %v", k, err)
		}
		m[k] = a
	}
	return m, nil
}

// pairsDict reads a list of (key, value) pairs as a dict, in order.
func pairsDict(v starlark.Value) (*starlark.Dict, error) {
	items, ok := starlib.Elems(v)
	if !ok {
		return nil, fmt.Errorf("want a dict or a list of pairs, got %s", v.Type())
	}
	d := starlark.NewDict(len(items))
	for _, it := range items {
		t, ok := it.(starlark.Tuple)
		if !ok || len(t) != 2 {
			return nil, fmt.Errorf("want (key, value) pairs, got %s", it.Type())
		}
		if err := d.SetKey(t[0], t[1]); err != nil {
			return nil, err
		}
	}
	return d, nil
}

const stepKeysLocal = "blocks.stepkeys"

// stepKey is the parameter a key of compute_steps' previous_steps stands
// for: a variable is itself; anything else (Blocks' tests use ints) is a
// constant of its value, the same constant for equal keys within a run,
// so that Restrict(rule, (1, 4)) finds the keys 1 and 4.
func stepKey(thread *starlark.Thread, k starlark.Value) (*core.Variable, error) {
	if v, ok := k.(*starlib.Variable); ok {
		return v.V, nil
	}
	keys, _ := thread.Local(stepKeysLocal).(*starlark.Dict)
	if keys == nil {
		keys = starlark.NewDict(0)
		thread.SetLocal(stepKeysLocal, keys)
	}
	if v, found, err := keys.Get(k); err != nil {
		return nil, err
	} else if found {
		return v.(*starlib.Variable).V, nil
	}
	v, err := starlib.AsVariable(thread, k)
	if err != nil {
		return nil, err
	}
	if err := keys.SetKey(k, &starlib.Variable{V: v}); err != nil {
		return nil, err
	}
	return v, nil
}

// stepKeys reads a list of compute_steps keys (Restrict's variables).
func stepKeys(thread *starlark.Thread, what string, v starlark.Value) ([]*core.Variable, error) {
	if x, ok := v.(*starlib.Variable); ok {
		return []*core.Variable{x.V}, nil
	}
	items, ok := starlib.Elems(v)
	if !ok {
		return nil, fmt.Errorf("%s: want a list of variables, got %s", what, v.Type())
	}
	out := make([]*core.Variable, len(items))
	for i, it := range items {
		k, err := stepKey(thread, it)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %v", what, i, err)
		}
		out[i] = k
	}
	return out, nil
}
