package bricks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// Emitter turns readouts into outputs (Blocks' AbstractEmitter).
type Emitter interface {
	Brick
	// EmitterCost is the cost of outputs given the readouts.
	EmitterCost(readouts, outputs *core.Variable) (*core.Variable, error)
	// InitialOutputs are the outputs before the first step, for the batch
	// size of ref's axis.
	InitialOutputs(ref *core.Variable, axis int) (*core.Variable, error)
	// OutputsDim is get_dim("outputs"): 0 for integer outputs.
	OutputsDim() int
	// Distribution is what generation samples from: probabilities over
	// the symbols (SoftmaxEmitter), or nil when emit is deterministic.
	Distribution(readouts *core.Variable) (*core.Variable, error)
}

// SoftmaxEmitter emits a symbol drawn from softmax(readouts); its cost is
// the categorical cross-entropy.
type SoftmaxEmitter struct {
	*Base
	InitConfig
	// TheanoSeed, when set, seeds the generator generation draws from
	// (Blocks' theano_seed; otherwise the brick's seed).
	TheanoSeed *int64
	// InitialOutput is the symbol before the first step.
	InitialOutput int
	// ReadoutDim is the number of symbols (pushed by the Readout; 0 is
	// unset).
	ReadoutDim int
}

// NewSoftmaxEmitter makes a SoftmaxEmitter (initial_output, default 0, is
// the symbol before the first).
func NewSoftmaxEmitter(cfg *Config, name string, initialOutput int) *SoftmaxEmitter {
	e := &SoftmaxEmitter{Base: &Base{}}
	e.initBase(e, cfg, name, "SoftmaxEmitter")
	e.InitialOutput = initialOutput
	return e
}

// EmitterCost is −log softmax(readouts)[outputs].
func (e *SoftmaxEmitter) EmitterCost(readouts, outputs *core.Variable) (*core.Variable, error) {
	lp, err := core.LogSoftmax(readouts)
	if err != nil {
		return nil, err
	}
	p, err := core.PickLast(lp, outputs)
	if err != nil {
		return nil, err
	}
	return core.Neg(p), nil
}

// InitialOutputs are initial_output for every sequence (int64).
func (e *SoftmaxEmitter) InitialOutputs(ref *core.Variable, axis int) (*core.Variable, error) {
	return core.RepeatLike(core.Const(nd.Int64, float64(e.InitialOutput)), ref, axis)
}

// OutputsDim is 0: outputs are symbols.
func (e *SoftmaxEmitter) OutputsDim() int { return 0 }

// Distribution is softmax(readouts).
func (e *SoftmaxEmitter) Distribution(readouts *core.Variable) (*core.Variable, error) {
	return core.Softmax(readouts)
}

// TrivialEmitter emits the readouts themselves; its cost is the squared
// distance to the outputs.
type TrivialEmitter struct {
	*Base
	ReadoutDim int // the dimension of the readouts and outputs (0: unset)
}

// NewTrivialEmitter makes a TrivialEmitter of readout_dim (0: pushed).
func NewTrivialEmitter(cfg *Config, name string, readoutDim int) *TrivialEmitter {
	e := &TrivialEmitter{Base: &Base{}}
	e.initBase(e, cfg, name, "TrivialEmitter")
	e.ReadoutDim = readoutDim
	return e
}

func (e *TrivialEmitter) missingAllocation() []string {
	if e.ReadoutDim == 0 {
		return []string{"readout_dim"}
	}
	return nil
}

// EmitterCost is Σ (readouts − outputs)² over the last axis.
func (e *TrivialEmitter) EmitterCost(readouts, outputs *core.Variable) (*core.Variable, error) {
	return core.Sum(core.Sqr(core.Sub(readouts, outputs)), []int{readouts.NDim() - 1}, false, nil)
}

// InitialOutputs are zeros (batch, readout_dim).
func (e *TrivialEmitter) InitialOutputs(ref *core.Variable, axis int) (*core.Variable, error) {
	return core.RepeatLike(core.NewConstant(nd.New(e.cfg.FloatX, e.ReadoutDim)), ref, axis)
}

// OutputsDim is readout_dim.
func (e *TrivialEmitter) OutputsDim() int { return e.ReadoutDim }

// Distribution is nil: emit is deterministic.
func (e *TrivialEmitter) Distribution(*core.Variable) (*core.Variable, error) { return nil, nil }

// Feedback embeds outputs as inputs of the next step (Blocks'
// AbstractFeedback).
type Feedback interface {
	Brick
	Feedback(outputs *core.Variable) (*core.Variable, error)
	FeedbackDimension() int
}

// LookupFeedback embeds symbols with a LookupTable child.
type LookupFeedback struct {
	*Base
	InitConfig
	// NumOutputs is the number of symbols, FeedbackDim the dimension of
	// their embedding (0: unset).
	NumOutputs, FeedbackDim int
	Lookup                  *LookupTable
}

// NewLookupFeedback makes a LookupFeedback of num_outputs symbols into
// feedback_dim.
func NewLookupFeedback(cfg *Config, name string, numOutputs, feedbackDim int) *LookupFeedback {
	f := &LookupFeedback{Base: &Base{}}
	f.initBase(f, cfg, name, "LookupFeedback")
	f.NumOutputs, f.FeedbackDim = numOutputs, feedbackDim
	f.Lookup = NewLookupTable(cfg, "lookuptable", 0, 0)
	f.SetChildren([]Brick{f.Lookup})
	return f
}

// PushAllocationConfigHook sizes the lookup table.
func (f *LookupFeedback) PushAllocationConfigHook() error {
	f.Lookup.Length, f.Lookup.Dim = f.NumOutputs, f.FeedbackDim
	return nil
}

func (f *LookupFeedback) missingAllocation() []string {
	var m []string
	if f.NumOutputs == 0 {
		m = append(m, "num_outputs")
	}
	if f.FeedbackDim == 0 {
		m = append(m, "feedback_dim")
	}
	return m
}

// Feedback is lookup(outputs).
func (f *LookupFeedback) Feedback(outputs *core.Variable) (*core.Variable, error) {
	return applyBrick(f.Lookup, outputs)
}

// FeedbackDim is feedback_dim.
func (f *LookupFeedback) FeedbackDimension() int { return f.FeedbackDim }

// TrivialFeedback feeds the outputs back unchanged.
type TrivialFeedback struct {
	*Base
	OutputDim int // the dimension of the outputs (0: unset)
}

// NewTrivialFeedback makes a TrivialFeedback of output_dim.
func NewTrivialFeedback(cfg *Config, name string, outputDim int) *TrivialFeedback {
	f := &TrivialFeedback{Base: &Base{}}
	f.initBase(f, cfg, name, "TrivialFeedback")
	f.OutputDim = outputDim
	return f
}

func (f *TrivialFeedback) missingAllocation() []string {
	if f.OutputDim == 0 {
		return []string{"output_dim"}
	}
	return nil
}

// Feedback is the outputs (cast to floatX).
func (f *TrivialFeedback) Feedback(outputs *core.Variable) (*core.Variable, error) {
	if outputs.DType() != f.cfg.FloatX {
		return core.Cast(outputs, f.cfg.FloatX), nil
	}
	return outputs, nil
}

// FeedbackDim is output_dim.
func (f *TrivialFeedback) FeedbackDimension() int { return f.OutputDim }

// Readout computes readouts from the sources (states, glimpses, the
// feedback) with a Merge, then a Bias (post_merge), and delegates emission
// and cost to its emitter.
type Readout struct {
	*Base
	InitConfig
	// ReadoutDim is the dimension of the readouts; SourceDims those of
	// the sources (pushed by the generator). 0 and nil are unset.
	ReadoutDim  int
	SourceDims  []int
	Emitter     Emitter
	FeedbackBr  Feedback
	Merge       *Parallel
	PostMerge   *Bias
	SourceNames []string
}

// NewReadout makes a Readout; mergePrototype may be nil (Linear without
// bias).
func NewReadout(cfg *Config, name string, emitter Emitter, feedback Feedback, sourceNames []string, readoutDim int, mergePrototype Feedforward) (*Readout, error) {
	r := &Readout{Base: &Base{}, Emitter: emitter, FeedbackBr: feedback, SourceNames: sourceNames}
	r.initBase(r, cfg, name, "Readout")
	r.ReadoutDim = readoutDim
	m, err := NewMerge(cfg, "merge", sourceNames, nil, 0, mergePrototype)
	if err != nil {
		return nil, err
	}
	r.Merge = m
	r.PostMerge = NewBias(cfg, "bias")
	r.SetChildren([]Brick{emitter, feedback, m, r.PostMerge})
	return r, nil
}

// PushAllocationConfigHook sizes the emitter, merge and bias.
func (r *Readout) PushAllocationConfigHook() error {
	d := r.ReadoutDim
	if d == 0 {
		return fmt.Errorf("%s: allocation argument readout_dim is not set", r.AnnotationName())
	}
	sd := r.SourceDims
	if len(sd) != len(r.SourceNames) {
		return fmt.Errorf("%s: source_dims %v do not match source_names %v", r.AnnotationName(), sd, r.SourceNames)
	}
	switch e := r.Emitter.(type) {
	case *SoftmaxEmitter:
		e.ReadoutDim = d
	case *TrivialEmitter:
		e.ReadoutDim = d
	}
	if tf, ok := r.FeedbackBr.(*TrivialFeedback); ok {
		tf.OutputDim = r.Emitter.OutputsDim() // Blocks: get_dim("outputs")
	}
	r.Merge.InputDims, r.Merge.OutputDim = sd, d
	r.PostMerge.Dim = d
	return nil
}

func (r *Readout) missingAllocation() []string {
	var m []string
	if r.ReadoutDim == 0 {
		m = append(m, "readout_dim")
	}
	if r.SourceDims == nil {
		m = append(m, "source_dims")
	}
	return m
}

// GetDim answers outputs, feedback, readouts and the sources.
func (r *Readout) GetDim(name string) (int, error) {
	switch name {
	case "outputs":
		return r.Emitter.OutputsDim(), nil
	case "feedback":
		return r.FeedbackBr.FeedbackDimension(), nil
	case "readouts":
		return r.ReadoutDim, nil
	}
	if i := slices.Index(r.SourceNames, name); i >= 0 {
		if sd := r.SourceDims; i < len(sd) {
			return sd[i], nil
		}
	}
	return 0, fmt.Errorf("%s: unknown dimension %s", r.AnnotationName(), name)
}

// Readouts merges the sources (a map holding at least the source names):
// Blocks' readout.readout(**sources), a call of the readout's application
// readout.
func (r *Readout) Readouts(in map[string]*core.Variable) (*core.Variable, error) {
	args := make([]*core.Variable, len(r.SourceNames))
	for i, n := range r.SourceNames {
		v, ok := in[n]
		if !ok {
			return nil, fmt.Errorf("%s: source %s is not available", r.AnnotationName(), n)
		}
		args[i] = v
	}
	return first(callAs(r, "readout", r.SourceNames, args, nil, func(args []*core.Variable) ([]*core.Variable, error) {
		m, err := Apply(r.Merge, "apply", args...)
		if err != nil {
			return nil, err
		}
		return Apply(r.PostMerge, "apply", m[0])
	}))
}

// Feedback is Blocks' readout.feedback(outputs): a call of the readout's
// application feedback, which calls the feedback brick's.
func (r *Readout) Feedback(outputs *core.Variable) (*core.Variable, error) {
	return first(callAs(r, "feedback", []string{"outputs"}, []*core.Variable{outputs}, []string{"feedback"}, func(in []*core.Variable) ([]*core.Variable, error) {
		var names []string // LookupFeedback.feedback declares no outputs
		if _, ok := r.FeedbackBr.(*TrivialFeedback); ok {
			names = []string{"feedback"}
		}
		return callAs(r.FeedbackBr, "feedback", []string{"outputs"}, in, names, func(in []*core.Variable) ([]*core.Variable, error) {
			v, err := r.FeedbackBr.Feedback(in[0])
			return []*core.Variable{v}, err
		})
	}))
}

// Cost is Blocks' readout.cost(readouts, outputs): the emitter's cost, as
// calls of the readout's and the emitter's applications cost.
func (r *Readout) Cost(readouts, outputs *core.Variable) (*core.Variable, error) {
	names := []string{"readouts", "outputs"}
	return first(callAs(r, "cost", names, []*core.Variable{readouts, outputs}, nil, func(in []*core.Variable) ([]*core.Variable, error) {
		return callAs(r.Emitter, "cost", names, in, nil, func(in []*core.Variable) ([]*core.Variable, error) {
			v, err := r.Emitter.EmitterCost(in[0], in[1])
			return []*core.Variable{v}, err
		})
	}))
}

// Emit is Blocks' readout.emit(readouts), the emitter's emit: the
// readouts themselves (TrivialEmitter), or symbols drawn from the
// emitter's distribution with rng; calls of the readout's and the
// emitter's applications emit.
func (r *Readout) Emit(readouts *core.Variable, rng *numpyrand.RandomState) (*core.Variable, error) {
	names := []string{"readouts"}
	return first(callAs(r, "emit", names, []*core.Variable{readouts}, nil, func(in []*core.Variable) ([]*core.Variable, error) {
		return callAs(r.Emitter, "emit", names, in, nil, func(in []*core.Variable) ([]*core.Variable, error) {
			dist, err := r.Emitter.Distribution(in[0])
			if err != nil || dist == nil {
				return in[:1], err
			}
			v, err := core.ApplyRandomOp(&categoricalOp{rng: rng}, dist)
			return []*core.Variable{v}, err
		})
	}))
}

// InitialOutputs is Blocks' readout.initial_outputs(batch_size), the
// emitter's, for the batch size of ref's axis: calls of the readout's and
// the emitter's applications initial_outputs (without inputs: the batch
// size is read from ref's shape).
func (r *Readout) InitialOutputs(ref *core.Variable, axis int) (*core.Variable, error) {
	return first(callAs(r, "initial_outputs", nil, nil, nil, func([]*core.Variable) ([]*core.Variable, error) {
		return callAs(r.Emitter, "initial_outputs", nil, nil, nil, func([]*core.Variable) ([]*core.Variable, error) {
			v, err := r.Emitter.InitialOutputs(ref, axis)
			return []*core.Variable{v}, err
		})
	}))
}

// callAs runs fn as a call of the application app of br, as Blocks'
// @application runs a method: the inputs and outputs are copied, named
// {brick}_{app}_{name} and tagged with br and the call (outputs without
// names are output_0, output_1, ...), so that a graph meets br where
// Blocks' graph does (Model's top bricks, VariableFilter by brick). It is
// for applications the project computes in Go rather than registering
// them (Readout.feedback, emitter.cost, ...).
func callAs(br Brick, app string, inNames []string, ins []*core.Variable, outNames []string, fn func(ins []*core.Variable) ([]*core.Variable, error)) ([]*core.Variable, error) {
	a := &Application{Name: app, Inputs: inNames, Outputs: outNames, BlocksOutputNames: outNames == nil,
		Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) { return fn(in) }}
	return applyApp(br, a, "", ins)
}

// first is the first of an application's outputs.
func first(outs []*core.Variable, err error) (*core.Variable, error) {
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("an application returned no output")
	}
	return outs[0], nil
}

// SequenceGenerator is Blocks' sequence generator: a readout, a recurrent
// transition (wrapped in an AttentionRecurrent, child att_trans, when an
// attention brick is given) and a Fork (child fork) that turns the
// feedback into the transition's inputs. cost_matrix scores given output
// sequences; generation samples (Sample) or searches (BeamSearch).
type SequenceGenerator struct {
	*Base
	InitConfig
	Readout    *Readout
	Fork       *Parallel
	Transition RecurrentBrick // the transition or its AttentionRecurrent
	attention  *AttentionRecurrent
	stateNames []string // the transition's states
	ctxNames   []string
	seqNames   []string // the transition's sequences without mask
	sampleRNG  *numpyrand.RandomState
}

// SampleRNG is the generator sampling draws from: numpy's RandomState
// seeded with the emitter's theano_seed or seed, kept across calls.
func (g *SequenceGenerator) SampleRNG() *numpyrand.RandomState {
	if g.sampleRNG == nil {
		seed := g.Readout.Emitter.BaseBrick().Seed()
		if se, ok := g.Readout.Emitter.(*SoftmaxEmitter); ok && se.TheanoSeed != nil {
			seed = *se.TheanoSeed
		}
		g.sampleRNG = numpyrand.New(uint32(seed))
	}
	return g.sampleRNG
}

// NewSequenceGenerator makes a SequenceGenerator; attention may be nil.
func NewSequenceGenerator(cfg *Config, name string, readout *Readout, transition Brick, attention *SequenceContentAttention) (*SequenceGenerator, error) {
	g := &SequenceGenerator{Base: &Base{}, Readout: readout}
	g.initBase(g, cfg, name, "SequenceGenerator")
	tr, ok := transition.(RecurrentBrick)
	if !ok || tr.RecurrentApplication("apply") == nil {
		return nil, fmt.Errorf("SequenceGenerator: the transition %s is not a recurrent brick", transition.BaseBrick().AnnotationName())
	}
	ta := tr.RecurrentApplication("apply")
	g.stateNames = ta.Spec.States
	g.ctxNames = ta.Spec.Contexts
	for _, s := range ta.Spec.Sequences {
		if s != "mask" {
			g.seqNames = append(g.seqNames, s)
		}
	}
	g.Transition = tr
	if attention != nil {
		ar, err := NewAttentionRecurrent(cfg, "att_trans", transition, attention)
		if err != nil {
			return nil, err
		}
		g.attention = ar
		g.Transition = ar
		g.ctxNames = append(slices.Clone(g.ctxNames), "attended", "attended_mask")
	}
	f, err := NewFork(cfg, "fork", g.seqNames, 0, nil, nil)
	if err != nil {
		return nil, err
	}
	g.Fork = f
	g.SetChildren([]Brick{readout, f, g.Transition})
	// Blocks' cost and cost_matrix take the contexts and the initial
	// states by keyword.
	inputs := slices.Concat([]string{"outputs", "mask"}, g.ctxNames, g.stateNames)
	for _, app := range []string{"cost", "cost_matrix"} {
		g.addApplication(&Application{Name: app, Inputs: inputs, Outputs: []string{app},
			Fn: func(*core.ApplicationCall, []*core.Variable) ([]*core.Variable, error) {
				return nil, fmt.Errorf("call %s with keywords", app)
			}})
	}
	return g, nil
}

func (g *SequenceGenerator) transitionDim(name string) (int, error) {
	gd, ok := g.Transition.(GetDimmer)
	if !ok {
		return 0, fmt.Errorf("%s: the transition must answer get_dim", g.AnnotationName())
	}
	return gd.GetDim(name)
}

func (g *SequenceGenerator) glimpseNames() []string {
	if g.attention != nil {
		return attentionGlimpseNames
	}
	return nil
}

// PushAllocationConfigHook sizes the readout's sources and the fork.
func (g *SequenceGenerator) PushAllocationConfigHook() error {
	if err := PushAllocationConfig(g.Transition); err != nil {
		return err
	}
	known := slices.Concat(g.stateNames, g.ctxNames, g.glimpseNames())
	var sd []int
	for _, n := range g.Readout.SourceNames {
		var d int
		var err error
		if slices.Contains(known, n) {
			d, err = g.transitionDim(n)
		} else {
			d, err = g.Readout.GetDim(n)
		}
		if err != nil {
			return err
		}
		sd = append(sd, d)
	}
	g.Readout.SourceDims = sd
	g.Fork.InputDim = g.Readout.FeedbackBr.FeedbackDimension()
	var od []int
	for _, n := range g.seqNames {
		d, err := g.transitionDim(n)
		if err != nil {
			return err
		}
		od = append(od, d)
	}
	g.Fork.OutputDims = od
	return nil
}

// applyTransition runs the (attention) transition with keywords.
func (g *SequenceGenerator) applyTransition(in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	if g.attention != nil {
		return g.attention.ApplyKeywords("apply", in, o)
	}
	return ApplyRecurrent(g.Transition, "apply", in, o)
}

// CostMatrix is the cost of each output (time, batch): the readout's cost
// of outputs[t] given the states before step t and the glimpses taken from
// them; masked entries are 0. given holds the contexts and, optionally,
// initial states (a state not given starts from the transition's initial
// state). It is a call of the application cost_matrix (ApplyKeywords).
func (g *SequenceGenerator) CostMatrix(outputs, mask *core.Variable, given map[string]*core.Variable) (*core.Variable, error) {
	in := map[string]*core.Variable{"outputs": outputs}
	if mask != nil {
		in["mask"] = mask
	}
	for n, v := range given {
		if n != "outputs" && n != "mask" {
			in[n] = v
		}
	}
	return first(g.ApplyKeywords("cost_matrix", in, RecurrentOptions{}))
}

// costMatrix computes cost_matrix within its call: given holds the
// contexts and the initial states given. Like Blocks it adds to the call
// the auxiliary variables <glimpse> and <state> (the glimpses and the
// states the readout reads, one per output) and <name>_final_value for
// each state and glimpse: its value after the last step (with a mask, the
// value after each sequence's last unmasked step, since a masked step
// keeps the state), with which a next batch can start (truncated
// back-propagation through time).
func (g *SequenceGenerator) costMatrix(call *core.ApplicationCall, outputs, mask *core.Variable, given map[string]*core.Variable) (*core.Variable, error) {
	if !g.Allocated {
		if err := Allocate(g); err != nil {
			return nil, err
		}
	}
	r := g.Readout
	fb, err := r.Feedback(outputs)
	if err != nil {
		return nil, err
	}
	fo, err := Apply(g.Fork, "apply", fb)
	if err != nil {
		return nil, err
	}
	in := map[string]*core.Variable{}
	for i, n := range g.seqNames {
		in[n] = fo[i]
	}
	if mask != nil {
		in["mask"] = mask
	}
	for _, n := range g.stateNames {
		v, ok := given[n]
		if !ok {
			continue
		}
		d, err := g.transitionDim(n)
		if err != nil {
			return nil, err
		}
		if v.NDim() != 2 {
			return nil, fmt.Errorf("the initial %s must be 2-d (batch, %d), got the %d-d %s", n, d, v.NDim(), untagged(v))
		}
		if u := untagged(v); u.IsShared() && u.Value().Shape[1] != d {
			return nil, fmt.Errorf("the initial %s must be (batch, %d), got %s of shape %s", n, d, u, nd.ShapeString(u.Value().Shape))
		}
		in[n] = v
	}
	for _, n := range g.ctxNames {
		if v, ok := given[n]; ok {
			in[n] = v
		} else if n != "attended_mask" {
			return nil, fmt.Errorf("context %s is not given", n)
		}
	}
	res, err := g.applyTransition(in, RecurrentOptions{ReturnInitialStates: true})
	if err != nil {
		return nil, err
	}
	spec := g.Transition.RecurrentApplication(map[bool]string{true: "do_apply", false: "apply"}[g.attention != nil]).Spec
	src := map[string]*core.Variable{}
	final := map[string]*core.Variable{}
	minusOne, one1 := -1, 1
	for i, n := range spec.Outputs {
		isState, isGlimpse := slices.Contains(g.stateNames, n), slices.Contains(g.glimpseNames(), n)
		switch {
		case isState:
			src[n], err = core.Subtensor(res[i], []core.Index{{Slice: true, Stop: &minusOne}})
		case isGlimpse:
			src[n], err = core.Subtensor(res[i], []core.Index{{Slice: true, Start: &one1}})
		}
		if err != nil {
			return nil, err
		}
		if isState || isGlimpse {
			if final[n], err = core.Subtensor(res[i], []core.Index{{I: -1}}); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range g.ctxNames {
		if v, ok := given[n]; ok {
			src[n] = v
		}
	}
	// The feedback of the previous outputs: the initial outputs, then
	// outputs[:-1].
	init, err := r.InitialOutputs(outputs, 1)
	if err != nil {
		return nil, err
	}
	fb0, err := r.Feedback(init)
	if err != nil {
		return nil, err
	}
	pat := []int{-1}
	for d := 0; d < fb0.NDim(); d++ {
		pat = append(pat, d)
	}
	fb0, err = core.Dimshuffle(fb0, pat)
	if err != nil {
		return nil, err
	}
	prev, err := core.Subtensor(fb, []core.Index{{Slice: true, Stop: &minusOne}})
	if err != nil {
		return nil, err
	}
	if src["feedback"], err = core.Concatenate([]*core.Variable{fb0, prev}, 0); err != nil {
		return nil, err
	}
	readouts, err := r.Readouts(src)
	if err != nil {
		return nil, err
	}
	costs, err := r.Cost(readouts, outputs)
	if err != nil {
		return nil, err
	}
	if mask != nil {
		m := mask
		if m.DType() != costs.DType() {
			m = core.Cast(m, costs.DType())
		}
		costs = core.Mul(costs, m)
	}
	if call != nil {
		for _, n := range slices.Concat(g.glimpseNames(), g.stateNames) {
			g.addCallAuxiliary(call, src[n].Copy(), n)
		}
		for _, n := range slices.Concat(g.stateNames, g.glimpseNames()) {
			g.addCallAuxiliary(call, final[n].Copy(), n+"_final_value")
		}
	}
	return costs, nil
}

// addCallAuxiliary is Blocks' ApplicationCall.add_auxiliary_variable(v,
// name=name) for a call of g: v is named {brick}_{application}_{name}
// (tag name name), annotated with g and the call, with role AUXILIARY.
func (g *SequenceGenerator) addCallAuxiliary(call *core.ApplicationCall, v *core.Variable, name string) {
	call.AddAuxiliaryVariable(v, fmt.Sprintf("%s_%s_%s", g.Name, call.Application, name))
	v.Tag.Name = name
	v.Tag.Annotations = append(v.Tag.Annotations, core.Annotation(g))
}

// ApplyKeywords implements cost_matrix and cost (the mean over the batch
// of the summed costs of each sequence, from a call of cost_matrix as in
// Blocks). Besides outputs and mask they take the contexts and the initial
// states by name.
func (g *SequenceGenerator) ApplyKeywords(app string, in map[string]*core.Variable, _ RecurrentOptions) ([]*core.Variable, error) {
	if app != "cost" && app != "cost_matrix" {
		return nil, fmt.Errorf("%s has no application %s", g.AnnotationName(), app)
	}
	if _, ok := in["outputs"]; !ok {
		return nil, fmt.Errorf("%s.%s: outputs are not given", g.AnnotationName(), app)
	}
	known := g.Application(app).Inputs
	call := &core.ApplicationCall{Brick: g, Application: app, Metadata: map[string]any{}, ID: callIDs.Add(1)}
	tagged := map[string]*core.Variable{}
	for _, n := range sortedKeys(in) {
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("%s.%s got an unexpected input %s (it takes %s)", g.AnnotationName(), app, n, strings.Join(known, ", "))
		}
		tagged[n] = tag(in[n], g.Base, app, n, call, core.Input)
	}
	var out *core.Variable
	switch app {
	case "cost_matrix":
		cm, err := g.costMatrix(call, tagged["outputs"], tagged["mask"], tagged)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", g.AnnotationName(), app, err)
		}
		out = cm
	case "cost":
		cm, err := g.CostMatrix(tagged["outputs"], tagged["mask"], tagged)
		if err != nil {
			return nil, err
		}
		s, err := core.Sum(cm, []int{0}, false, nil)
		if err != nil {
			return nil, err
		}
		out = core.MeanAll(s)
		// Blocks' auxiliary per_sequence_element: the cost per output,
		// over the unmasked outputs.
		per := core.MeanAll(cm)
		if m := tagged["mask"]; m != nil {
			if m.DType() != cm.DType() {
				m = core.Cast(m, cm.DType())
			}
			per = core.Div(core.SumAll(cm), core.SumAll(m))
		}
		g.addCallAuxiliary(call, per, "per_sequence_element")
	}
	o := tag(out, g.Base, app, app, call, core.Output)
	if app == "cost" {
		core.AddRole(o, core.Cost)
	}
	return []*core.Variable{o}, nil
}

var _ KeywordApplier = (*SequenceGenerator)(nil)
