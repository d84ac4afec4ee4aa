package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// appSelector is an application value that is not a BoundApplication (a
// SequenceGenerator's generate) but selects its calls in
// VariableFilter(applications=[...]).
type appSelector interface {
	starlark.Value
	appRef() (bricks.Brick, string)
}

// generateApp is SequenceGenerator.generate, Blocks' symbolic generation:
//
//	generate(n_steps, batch_size, iterate=True, **states_and_contexts)
//
// n_steps and batch_size are ints or int scalars computed from shapes
// (3 * chars.shape[0]). It returns the list states..., outputs,
// glimpses..., costs, each (n_steps, batch, ...) (one step, without the
// time axis, with iterate=False), made by one application call
// "generate" of the generator. Like an application it has states,
// contexts, outputs, name and brick, and selects its calls in
// VariableFilter(applications=[generator.generate]).
type generateApp struct{ g *bricks.SequenceGenerator }

var (
	_ starlark.Callable = (*generateApp)(nil)
	_ starlark.HasAttrs = (*generateApp)(nil)
	_ appSelector       = (*generateApp)(nil)
)

func (a *generateApp) String() string {
	return fmt.Sprintf("<bound application %s.generate>", a.g.Name)
}
func (a *generateApp) Type() string          { return "BoundApplication" }
func (a *generateApp) Freeze()               {}
func (a *generateApp) Truth() starlark.Bool  { return true }
func (a *generateApp) Hash() (uint32, error) { return starlark.String(a.String()).Hash() }
func (a *generateApp) Name() string          { return a.g.Name + ".generate" }

func (a *generateApp) appRef() (bricks.Brick, string) { return a.g, "generate" }

// AttrNames lists the application's attributes.
func (a *generateApp) AttrNames() []string {
	return []string{"brick", "contexts", "name", "outputs", "sequences", "states"}
}

// Attr returns brick, name, states, contexts, sequences or outputs.
func (a *generateApp) Attr(name string) (starlark.Value, error) {
	states, contexts, outputs := a.g.GenerateSpec()
	switch name {
	case "brick":
		return &Brick{a.g}, nil
	case "name":
		return starlark.String("generate"), nil
	case "states":
		return starlib.StringList(states), nil
	case "contexts":
		return starlib.StringList(contexts), nil
	case "sequences":
		return starlib.StringList(nil), nil
	case "outputs":
		return starlib.StringList(outputs), nil
	}
	return nil, nil
}

// CallInternal builds the generation graph.
func (a *generateApp) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
	defer starlib.RecoverInternal("generate", &err)
	var nSteps, batch starlark.Value = starlark.None, starlark.None
	iterate := true
	var known []starlark.Tuple
	given := map[string]*core.Variable{}
	for _, kv := range kwargs {
		switch k := string(kv[0].(starlark.String)); k {
		case "n_steps", "batch_size", "iterate":
			known = append(known, kv)
		default:
			v, err := starlib.AsVariable(thread, kv[1])
			if err != nil {
				return nil, fmt.Errorf("generate: %s: %v", k, err)
			}
			given[k] = v
		}
	}
	if err := starlark.UnpackArgs("generate", args, known, "n_steps?", &nSteps, "batch_size?", &batch, "iterate?", &iterate); err != nil {
		return nil, err
	}
	toInt := func(what string, v starlark.Value) (*core.Variable, error) {
		switch x := v.(type) {
		case starlark.NoneType:
			return nil, nil
		case starlark.Int:
			return starlib.ToVariable(x, nd.Int64)
		case *starlib.Variable:
			return x.V, nil
		}
		return nil, fmt.Errorf("generate: %s must be an int or an int scalar variable (x.shape[0]), got %s", what, v.Type())
	}
	n, err := toInt("n_steps", nSteps)
	if err != nil {
		return nil, err
	}
	b, err := toInt("batch_size", batch)
	if err != nil {
		return nil, err
	}
	if b == nil {
		// Blocks takes the batch size from the given states when
		// batch_size is not given; here it is required.
		return nil, fmt.Errorf("generate: batch_size is required (an int, or x.shape[1])")
	}
	if iterate && n == nil {
		return nil, fmt.Errorf("generate: n_steps is required with iterate=True")
	}
	outs, err := a.g.GenerateSymbolic(n, b, iterate, given, a.g.SampleRNG())
	if err != nil {
		return nil, err
	}
	vals := make([]starlark.Value, len(outs))
	for i, o := range outs {
		vals[i] = starlib.NewVariable(thread, o)
	}
	return starlark.NewList(vals), nil
}

// beamSearchFromSamples is Blocks' BeamSearch(samples): samples is the
// "outputs" result of generator.generate; the generator is its brick, and
// the contexts are the inputs of that generate call.
func beamSearchFromSamples(thread *starlark.Thread, samples *starlib.Variable) (*BeamSearch, error) {
	call := samples.V.Tag.ApplicationCall
	if call == nil || call.Application != "generate" {
		return nil, fmt.Errorf("BeamSearch: samples must be an output of a SequenceGenerator's generate, got a variable of no generate call")
	}
	g, ok := call.Brick.(*bricks.SequenceGenerator)
	if !ok {
		return nil, fmt.Errorf("BeamSearch: samples were made by %s, not by a SequenceGenerator", call.Brick.AnnotationName())
	}
	_, ctxNames, _ := g.GenerateSpec()
	ctx := map[string]*core.Variable{}
	var roots []*core.Variable
	for _, v := range core.Ancestors([]*core.Variable{samples.V}) {
		if v.Tag.ApplicationCall != call || !core.HasRole(v, core.Input) {
			continue
		}
		for _, n := range ctxNames {
			if v.Tag.Name == n {
				ctx[n] = v
				roots = append(roots, v)
			}
		}
	}
	var inputs []*core.Variable
	for _, v := range core.Ancestors(roots) {
		if v.IsInput() {
			inputs = append(inputs, v)
		}
	}
	gen, err := g.NewGeneration(starlib.Device(thread), ctx, inputs)
	if err != nil {
		return nil, err
	}
	return &BeamSearch{gen: gen, inputs: inputs}, nil
}

// beamSearchArrays is Blocks' search(..., as_arrays=True): (outputs,
// mask, costs), each (steps, beam): the hypotheses' outputs, padded with
// the end-of-line symbol after they finish; 1 where an output belongs to
// its hypothesis (up to and including its end-of-line symbol); the cost of
// each step's output (0 after the end).
func beamSearchArrays(thread *starlark.Thread, res []bricks.BeamSearchResult, eol int) starlark.Value {
	steps := 0
	for _, h := range res {
		steps = max(steps, len(h.StepCosts))
	}
	floatX := starlib.FloatX(thread)
	outs := nd.New(nd.Int64, steps, len(res))
	mask := nd.New(floatX, steps, len(res))
	costs := nd.New(floatX, steps, len(res))
	for j, h := range res {
		for t := 0; t < steps; t++ {
			k := t*len(res) + j
			if t < len(h.Outputs) {
				outs.SetFlat(k, float64(h.Outputs[t]))
				mask.SetFlat(k, 1)
			} else {
				outs.SetFlat(k, float64(eol))
			}
			if t < len(h.StepCosts) {
				costs.SetFlat(k, h.StepCosts[t])
			}
		}
	}
	return starlark.Tuple{starlib.FromArray(outs), starlib.FromArray(mask), starlib.FromArray(costs)}
}
