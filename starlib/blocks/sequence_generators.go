package blocks

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.bricks.sequence_generators: Blocks' sequence generators.
//
//	SequenceGenerator(readout, transition, attention=None, add_contexts=True, name=None, weights_init=None, biases_init=None)
//	    children readout, fork (a Fork feeding the transition's inputs) and the
//	    transition (att_trans, an AttentionRecurrent, when attention is given).
//	    cost(outputs, mask=None, **contexts_and_states): mean over the batch of the summed costs
//	    cost_matrix(outputs, mask=None, **contexts_and_states): (time, batch) costs, 0 where masked;
//	        initial states by name; auxiliary variables <state> and <state>_final_value
//	    readout, fork, transition: the children
//	    generate(n_steps, batch_size=1, inputs_dict=None, seed=None, **contexts):
//	        samples; returns {"outputs": (n_steps, batch), "costs": (n_steps, batch)}.
//	        Unlike Blocks (a symbolic scan with Theano's random streams), it runs the
//	        loop and draws from numpy's generator, seeded with the emitter's seed
//	        (or seed); contexts are variables computed from the inputs in inputs_dict.
//	Readout(emitter=None, feedback_brick=None, merge=None, merge_prototype=None, ..., **kwargs: readout_dim, source_names, name)
//	    readouts = Bias(Merge(sources)); children emitter (default TrivialEmitter(readout_dim)),
//	    feedback (default TrivialFeedback(readout_dim)), merge, bias
//	SoftmaxEmitter(initial_output=0, theano_seed=None, name=None)    outputs drawn from softmax(readouts); cost −log p;
//	    theano_seed seeds the numpy generator generation draws from (Blocks: Theano's MRG streams)
//	TrivialEmitter(readout_dim, name=None)         outputs = readouts; cost Σ (readouts − outputs)²
//	LookupFeedback(num_outputs, feedback_dim, name=None)   feedback = LookupTable(outputs)
//	TrivialFeedback(output_dim, name=None)         feedback = outputs
//
// Module blocks.bricks.attention:
//
//	SequenceContentAttention(match_dim, ..., **kwargs: state_names, state_dims, attended_dim, name)
//	    glimpses weighted_averages (batch, attended_dim) and weights (batch, time)
//	AttentionRecurrent(transition, attention, name=None)
//	    apply(sequences..., states..., attended=, attended_mask=None, iterate=True, ...):
//	    the transition's states, then the glimpses
//
// Module blocks.search:
//
//	BeamSearch(generator, **contexts)   (the inputs are those the contexts depend on)
//	    search(input_values=None, eol_symbol=-1, max_length=512, ignore_first_eol=False, beam_size=None)
//	    returns (outputs, costs): lists of hypotheses (each up to and including
//	    eol_symbol) and their costs (−log p), in order of cost. input_values maps
//	    the inputs to one sequence's data (batch size 1, or Blocks' tiled batch of
//	    beam_size identical columns, whose first column is used); beam_size
//	    defaults to that batch size.
func sequenceGeneratorsModules() (mods []*starlarkstruct.Module) {
	sg := starlark.StringDict{}
	for _, c := range []string{"BaseSequenceGenerator", "AbstractEmitter", "AbstractFeedback", "AbstractReadout"} {
		sg[c] = &BrickClass{Class: c}
	}
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.sequence_generators", Members: sg})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.attention", Members: starlark.StringDict{
		"AbstractAttention":        &BrickClass{Class: "AbstractAttention"},
		"GenericSequenceAttention": &BrickClass{Class: "GenericSequenceAttention"},
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.search", Members: starlark.StringDict{
		"BeamSearch": beamSearchClass{},
	}})
	return
}

func typeOfBrick(b bricks.Brick) string {
	if b == nil {
		return "None"
	}
	return b.BaseBrick().Class()
}

// contextsAndInputs reads symbolic contexts from keyword arguments and
// finds the input variables they depend on.
func contextsAndInputs(thread *starlark.Thread, fname string, kwargs map[string]starlark.Value) (map[string]*core.Variable, []*core.Variable, error) {
	ctx := map[string]*core.Variable{}
	var roots []*core.Variable
	keys := make([]string, 0, len(kwargs))
	for k := range kwargs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := starlib.AsVariable(thread, kwargs[k])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %v", fname, k, err)
		}
		ctx[k] = v
		roots = append(roots, v)
	}
	var inputs []*core.Variable
	for _, v := range core.Ancestors(roots) {
		if v.IsInput() {
			inputs = append(inputs, v)
		}
	}
	return ctx, inputs, nil
}

// inputData orders the arrays of a {variable: array} dict as inputs.
func inputData(fname string, inputs []*core.Variable, d *starlark.Dict) ([]*nd.Array, error) {
	data := make([]*nd.Array, len(inputs))
	for i, in := range inputs {
		if d == nil {
			return nil, fmt.Errorf("%s: the contexts depend on input %s: give its value in the inputs dict", fname, in)
		}
		var val starlark.Value
		for _, item := range d.Items() {
			if k, ok := item[0].(*starlib.Variable); ok && k.V == in {
				val = item[1]
			}
		}
		if val == nil {
			return nil, fmt.Errorf("%s: no value for input %s", fname, in)
		}
		a, err := starlib.InputArray(in, val)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", fname, err)
		}
		data[i] = a
	}
	return data, nil
}

// generatorAttr gives SequenceGenerator.generate (Blocks' symbolic one)
// and sample (the loop run at once), and the emitters' initial_outputs.
func generatorAttr(b *Brick, name string) (starlark.Value, bool) {
	if e, ok := b.B.(bricks.Emitter); ok && name == "initial_outputs" {
		return emitterInitialOutputs(e), true
	}
	g, ok := b.B.(*bricks.SequenceGenerator)
	if !ok {
		return nil, false
	}
	switch name {
	case "generate":
		return &generateApp{g}, true // generate_app.go
	case "sample":
	default:
		return nil, false
	}
	return starlib.NewBuiltin("sample", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
		defer starlib.RecoverInternal("sample", &err)
		nSteps, batch := 0, 1
		var d *starlark.Dict
		var seed starlark.Value = starlark.None
		ctxArgs := map[string]starlark.Value{}
		var known []starlark.Tuple
		for _, kv := range kwargs {
			switch k := string(kv[0].(starlark.String)); k {
			case "n_steps", "batch_size", "inputs_dict", "seed", "iterate":
				known = append(known, kv)
			default:
				ctxArgs[k] = kv[1]
			}
		}
		iterate := true
		if err := starlark.UnpackArgs("sample", args, known, "n_steps", &nSteps, "batch_size?", &batch, "inputs_dict?", &d, "seed?", &seed, "iterate?", &iterate); err != nil {
			return nil, err
		}
		if !iterate {
			return nil, fmt.Errorf("sample: iterate=False is not supported")
		}
		if nSteps < 0 || batch < 1 {
			return nil, fmt.Errorf("sample: want n_steps >= 0 and batch_size >= 1, got %d and %d", nSteps, batch)
		}
		ctx, inputs, err := contextsAndInputs(thread, "sample", ctxArgs)
		if err != nil {
			return nil, err
		}
		data, err := inputData("sample", inputs, d)
		if err != nil {
			return nil, err
		}
		gen, err := g.NewGeneration(starlib.Device(thread), ctx, inputs)
		if err != nil {
			return nil, err
		}
		rng := g.SampleRNG()
		if seed != starlark.None {
			var s int64
			if err := starlark.AsInt(seed, &s); err != nil {
				return nil, fmt.Errorf("sample: seed: %v", err)
			}
			rng = numpyrand.New(uint32(s))
		}
		out, costs, err := gen.Sample(data, nSteps, batch, rng)
		if err != nil {
			return nil, err
		}
		res := starlark.NewDict(2)
		res.SetKey(starlark.String("outputs"), starlib.FromArray(out))
		res.SetKey(starlark.String("costs"), starlib.FromArray(costs))
		return res, nil
	}), true
}

// emitterInitialOutputs is an emitter's initial_outputs(batch_size): the
// outputs before the first step, for batch_size sequences.
func emitterInitialOutputs(e bricks.Emitter) starlark.Value {
	return starlib.NewBuiltin("initial_outputs", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var batch int
		if err := starlark.UnpackArgs("initial_outputs", args, kwargs, "batch_size", &batch); err != nil {
			return nil, err
		}
		if batch < 0 {
			return nil, fmt.Errorf("initial_outputs: batch_size must be >= 0, got %d", batch)
		}
		ref := core.NewConstant(nd.New(BrickConfig(thread).FloatX, batch))
		v, err := e.InitialOutputs(ref, 0)
		if err != nil {
			return nil, err
		}
		return starlib.NewVariable(thread, v), nil
	})
}

// BeamSearch is blocks.search.BeamSearch over a generator.
type BeamSearch struct {
	gen    *bricks.Generation
	inputs []*core.Variable
}

func (s *BeamSearch) String() string       { return "<BeamSearch>" }
func (s *BeamSearch) Type() string         { return "BeamSearch" }
func (s *BeamSearch) Freeze()              {}
func (s *BeamSearch) Truth() starlark.Bool { return true }
func (s *BeamSearch) AttrNames() []string  { return []string{"search"} }

// Attr returns search.
func (s *BeamSearch) Attr(name string) (starlark.Value, error) {
	if name != "search" {
		return nil, nil
	}
	return starlib.NewBuiltin("search", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
		defer starlib.RecoverInternal("search", &err)
		var d *starlark.Dict
		eol, maxLen := -1, 512
		ignore, asArrays := false, false
		var beam starlark.Value = starlark.None
		if err := starlark.UnpackArgs("search", args, kwargs, "input_values?", &d, "eol_symbol?", &eol, "max_length?", &maxLen, "ignore_first_eol?", &ignore, "as_arrays?", &asArrays, "beam_size?", &beam); err != nil {
			return nil, err
		}
		data, err := inputData("search", s.inputs, d)
		if err != nil {
			return nil, err
		}
		beamSize := 1
		for i, a := range data {
			if a.NDim() < 2 {
				return nil, fmt.Errorf("search: input %s must be (time, batch, ...), got shape %v", s.inputs[i], a.Shape)
			}
			beamSize = a.Shape[1]
			data[i] = firstColumn(a)
		}
		if beam != starlark.None {
			if err := starlark.AsInt(beam, &beamSize); err != nil {
				return nil, fmt.Errorf("search: beam_size: %v", err)
			}
		}
		res, err := s.gen.BeamSearch(data, beamSize, eol, maxLen, ignore)
		if err != nil {
			return nil, err
		}
		if asArrays { // generate_app.go
			return beamSearchArrays(thread, res, eol), nil
		}
		outs := make([]starlark.Value, len(res))
		costs := make([]starlark.Value, len(res))
		for i, h := range res {
			o := make([]starlark.Value, len(h.Outputs))
			for j, x := range h.Outputs {
				o[j] = starlark.MakeInt(x)
			}
			outs[i] = starlark.NewList(o)
			costs[i] = starlark.Float(h.Cost)
		}
		return starlark.Tuple{starlark.NewList(outs), starlark.NewList(costs)}, nil
	}), nil
}

// firstColumn is a[:, :1] for an array of at least two axes.
func firstColumn(a *nd.Array) *nd.Array {
	if a.Shape[1] == 1 {
		return a
	}
	shape := append([]int{a.Shape[0], 1}, a.Shape[2:]...)
	out := nd.New(a.DType(), shape...)
	inner := nd.Prod(a.Shape[2:])
	for t := 0; t < a.Shape[0]; t++ {
		for k := 0; k < inner; k++ {
			out.SetFlat(t*inner+k, a.Flat((t*a.Shape[1])*inner+k))
		}
	}
	return out
}

func newBeamSearch(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("BeamSearch takes the generator as its one positional argument, got %d", len(args))
	}
	if samples, ok := args[0].(*starlib.Variable); ok { // Blocks' BeamSearch(samples)
		if len(kwargs) > 0 {
			return nil, fmt.Errorf("BeamSearch(samples) takes no keyword arguments (the contexts come from the generate call)")
		}
		return beamSearchFromSamples(thread, samples)
	}
	gb, ok := args[0].(*Brick)
	var g *bricks.SequenceGenerator
	if ok {
		g, ok = gb.B.(*bricks.SequenceGenerator)
	}
	if !ok {
		return nil, fmt.Errorf("BeamSearch: want a SequenceGenerator, got %s", args[0].Type())
	}
	ctxArgs := map[string]starlark.Value{}
	for _, kv := range kwargs {
		ctxArgs[string(kv[0].(starlark.String))] = kv[1]
	}
	ctx, inputs, err := contextsAndInputs(thread, "BeamSearch", ctxArgs)
	if err != nil {
		return nil, err
	}
	gen, err := g.NewGeneration(starlib.Device(thread), ctx, inputs)
	if err != nil {
		return nil, err
	}
	return &BeamSearch{gen: gen, inputs: inputs}, nil
}
