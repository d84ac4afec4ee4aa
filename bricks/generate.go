package bricks

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// categoricalOp draws, for every row of its input (probabilities over the
// last axis), one index: the first j with u < p[0] + ... + p[j] for a
// u = random_sample() of its generator (the last index if rounding leaves
// u above the total), rows in C order. These are the draws Generation's
// Sample makes; Blocks drew them from Theano's MRG streams
// (multinomial(pvals).argmax(-1)), a different generator.
type categoricalOp struct{ rng *numpyrand.RandomState }

var _ core.RandomOp = (*categoricalOp)(nil)

func (o *categoricalOp) String() string              { return "Categorical" }
func (o *categoricalOp) RNG() *numpyrand.RandomState { return o.rng }
func (o *categoricalOp) Grad(in []*core.Variable, out, gz *core.Variable) []*core.Variable {
	return []*core.Variable{nil}
}

func (o *categoricalOp) Type(in []*core.Variable) (nd.DType, int, error) {
	if len(in) != 1 || in[0].NDim() < 1 || !in[0].DType().IsFloat() {
		return 0, 0, fmt.Errorf("categorical draws need one float array of probabilities")
	}
	return nd.Int64, in[0].NDim() - 1, nil
}

func (o *categoricalOp) Shape(in [][]int) ([]int, error) { return in[0][:len(in[0])-1], nil }

func (o *categoricalOp) Run(out *nd.Array, in []*nd.Array) {
	p := in[0]
	v := p.Shape[p.NDim()-1]
	for i, n := 0, out.Size(); i < n; i++ {
		u := o.rng.RandomSample()
		k, acc := v-1, 0.0
		for j := 0; j < v; j++ {
			acc += p.Flat(i*v + j)
			if u < acc {
				k = j
				break
			}
		}
		out.SetFlat(i, float64(k))
	}
}

// GenerateNames are the outputs of Generate, in Blocks' order: the
// transition's states, "outputs", the glimpses (with attention), "costs".
func (g *SequenceGenerator) GenerateNames() []string {
	return slices.Concat(g.stateNames, []string{"outputs"}, g.glimpseNames(), []string{"costs"})
}

// Generate is Blocks' symbolic SequenceGenerator.generate: a scan of
// nSteps generation steps for batchSize sequences. Each step takes the
// glimpses from the states (with attention), reads out from the states,
// glimpses and the feedback of the previous outputs, emits the next
// outputs (the readouts, or a draw from the softmax, from rng), their
// cost, and the next states. given holds initial states (a state not
// given starts from the transition's initial state) and the contexts
// (attended, attended_mask). It returns the variables of GenerateNames,
// each stacked over the steps.
func (g *SequenceGenerator) Generate(nSteps, batchSize int, given map[string]*core.Variable, rng *numpyrand.RandomState) ([]*core.Variable, error) {
	if nSteps < 1 || batchSize < 1 {
		return nil, fmt.Errorf("%s.generate: want n_steps >= 1 and batch_size >= 1, got %d and %d", g.AnnotationName(), nSteps, batchSize)
	}
	return g.GenerateSymbolic(core.Const(nd.Int64, float64(nSteps)), core.Const(nd.Int64, float64(batchSize)), true, given, rng)
}

// GenerateSymbolic is Generate with symbolic nSteps and batchSize: int
// scalars computed from constants and the shapes of other variables
// (Blocks' n_steps=3 * chars.shape[0], batch_size=chars.shape[1]), known
// when the graph runs. With iterate false it is one generation step
// (Blocks' iterate=False; nSteps is not used): the given states (those
// not given start from the initial ones, "outputs" and the glimpses
// included) in, the next states, outputs, glimpses and costs out. The
// result is one application call "generate" of g: the given variables are
// its inputs and the results its outputs, named as GenerateNames.
func (g *SequenceGenerator) GenerateSymbolic(nSteps, batchSize *core.Variable, iterate bool, given map[string]*core.Variable, rng *numpyrand.RandomState) ([]*core.Variable, error) {
	if !g.Allocated {
		if err := Allocate(g); err != nil {
			return nil, err
		}
	}
	glimpses := g.glimpseNames()
	stateLike := slices.Concat(g.stateNames, []string{"outputs"}, glimpses)
	for n := range given {
		if !slices.Contains(stateLike, n) && !slices.Contains(g.ctxNames, n) {
			return nil, fmt.Errorf("%s.generate got an unexpected input %s (it takes the states %v and the contexts %v)", g.AnnotationName(), n, stateLike, g.ctxNames)
		}
	}
	// One application call: the given variables are its inputs.
	call := &core.ApplicationCall{Brick: core.Annotation(g), Application: "generate", Metadata: map[string]any{}, ID: callIDs.Add(1)}
	names := make([]string, 0, len(given))
	for n := range given {
		names = append(names, n)
	}
	slices.Sort(names)
	tagged := map[string]*core.Variable{}
	for _, n := range names {
		tagged[n] = tag(given[n], g.Base, "generate", n, call, core.Input)
	}
	given = tagged
	var steps *core.Variable // a dummy sequence of nSteps entries, when symbolic
	constSteps := 0
	if iterate {
		if nSteps == nil {
			return nil, fmt.Errorf("%s.generate: n_steps is required", g.AnnotationName())
		}
		if n, ok := constInt(nSteps); ok {
			if n < 1 {
				return nil, fmt.Errorf("%s.generate: want n_steps >= 1, got %d", g.AnnotationName(), n)
			}
			constSteps = n
		} else {
			var err error
			if steps, err = core.AllocShaped(0, g.cfg.FloatX, []*core.Variable{nSteps}); err != nil {
				return nil, fmt.Errorf("%s.generate: n_steps: %w", g.AnnotationName(), err)
			}
		}
	}
	var ref *core.Variable // a vector of batch_size entries
	if batchSize == nil {
		return nil, fmt.Errorf("%s.generate: batch_size is required", g.AnnotationName())
	}
	if n, ok := constInt(batchSize); ok {
		if n < 1 {
			return nil, fmt.Errorf("%s.generate: want batch_size >= 1, got %d", g.AnnotationName(), n)
		}
		ref = core.NewConstant(nd.New(g.cfg.FloatX, n))
	} else {
		var err error
		if ref, err = core.AllocShaped(0, g.cfg.FloatX, []*core.Variable{batchSize}); err != nil {
			return nil, fmt.Errorf("%s.generate: batch_size: %w", g.AnnotationName(), err)
		}
	}
	var ctxNames []string
	var ctxVals []*core.Variable
	for _, n := range g.ctxNames {
		v, ok := given[n]
		if !ok && n == "attended_mask" && given["attended"] != nil {
			w, err := core.Subtensor(given["attended"], []core.Index{{Slice: true}, {Slice: true}, {I: 0}})
			if err != nil {
				return nil, err
			}
			v, ok = core.Add(core.Mul(w, core.Const(w.DType(), 0)), core.Const(w.DType(), 1)), true
		}
		if !ok {
			return nil, fmt.Errorf("%s.generate: context %s is not given", g.AnnotationName(), n)
		}
		ctxNames = append(ctxNames, n)
		ctxVals = append(ctxVals, v)
	}
	if g.attention != nil {
		p, err := g.attention.Attention.PreprocessAttended(given["attended"])
		if err != nil {
			return nil, err
		}
		ctxNames = append(ctxNames, "preprocessed_attended")
		ctxVals = append(ctxVals, p)
	}
	var init []*core.Variable
	var err error
	if g.attention != nil {
		init, err = g.attention.InitialStates(ref, 0, given["attended"])
	} else {
		init, err = g.Transition.RecurrentApplication("apply").Initial(ref, 0)
	}
	if err != nil {
		return nil, err
	}
	nState := len(g.stateNames)
	initOut, err := g.Readout.InitialOutputs(ref, 0)
	if err != nil {
		return nil, err
	}
	outDType := initOut.DType()
	if v, ok := given["outputs"]; ok {
		if v.DType() != outDType {
			v = core.Cast(v, outDType)
		}
		initOut = v
	}
	for i, n := range slices.Concat(g.stateNames, glimpses) {
		if v, ok := given[n]; ok {
			if v.DType() != init[i].DType() {
				v = core.Cast(v, init[i].DType())
			}
			init[i] = v
		}
	}
	// Scan states: the transition's states, the previous outputs, the
	// glimpses. The scan carries floats only: integer outputs (symbols)
	// travel as floatX, exact up to 2**24, and are cast back after it.
	carried := initOut
	if outDType != g.cfg.FloatX {
		carried = core.Cast(initOut, g.cfg.FloatX)
	}
	scanStates := slices.Concat(init[:nState], []*core.Variable{carried}, init[nState:])
	step := func(st, ctx []*core.Variable) ([]*core.Variable, []*core.Variable, error) {
		m := map[string]*core.Variable{}
		for i, n := range ctxNames {
			m[n] = ctx[i]
		}
		for i, n := range g.stateNames {
			m[n] = st[i]
		}
		prev := st[nState]
		if outDType != prev.DType() {
			prev = core.Cast(prev, outDType)
		}
		for i, n := range glimpses {
			m[n] = st[nState+1+i]
		}
		var next []*core.Variable
		if g.attention != nil {
			var err error
			if next, err = g.attention.TakeGlimpses(m); err != nil {
				return nil, nil, err
			}
			for i, n := range glimpses {
				m[n] = next[i]
			}
		}
		var err error
		if m["feedback"], err = g.Readout.Feedback(prev); err != nil {
			return nil, nil, err
		}
		readouts, err := g.Readout.Readouts(m)
		if err != nil {
			return nil, nil, err
		}
		outputs, err := g.Readout.Emit(readouts, rng)
		if err != nil {
			return nil, nil, err
		}
		if outputs.DType() != outDType {
			outputs = core.Cast(outputs, outDType)
		}
		costs, err := g.Readout.Cost(readouts, outputs)
		if err != nil {
			return nil, nil, err
		}
		fb, err := g.Readout.Feedback(outputs)
		if err != nil {
			return nil, nil, err
		}
		fo, err := Apply(g.Fork, "apply", fb)
		if err != nil {
			return nil, nil, err
		}
		delete(m, "feedback")
		for i, n := range g.seqNames {
			m[n] = fo[i]
		}
		var ns []*core.Variable
		if g.attention != nil {
			ns, err = g.attention.ComputeStates(m)
		} else {
			// Blocks' transition.compute_states: a call of the
			// transition's apply with iterate=False.
			ra := g.Transition.RecurrentApplication("apply")
			var res []*core.Variable
			if res, err = ApplyRecurrent(g.Transition, "apply", m, RecurrentOptions{NoIterate: true}); err == nil {
				for _, n := range ra.Spec.States {
					ns = append(ns, res[slices.Index(ra.Spec.Outputs, n)])
				}
			}
		}
		if err != nil {
			return nil, nil, err
		}
		for i := range ns {
			if ns[i].DType() != st[i].DType() {
				ns[i] = core.Cast(ns[i], st[i].DType())
			}
		}
		carriedOut := outputs
		if outDType != g.cfg.FloatX {
			carriedOut = core.Cast(outputs, g.cfg.FloatX)
		}
		newStates := slices.Concat(ns, []*core.Variable{carriedOut}, next)
		return newStates, []*core.Variable{costs}, nil
	}
	var res []*core.Variable
	if !iterate {
		states, outs, err := step(scanStates, ctxVals)
		if err != nil {
			return nil, fmt.Errorf("%s.generate: %w", g.AnnotationName(), err)
		}
		res = append(states, outs...)
	} else {
		spec := core.ScanSpec{States: scanStates, Contexts: ctxVals, NSteps: constSteps, Name: g.Name + "_generate_scan"}
		if steps != nil {
			spec.Sequences = []*core.Variable{steps}
		}
		states, outs, err := core.Scan(spec, func(_, st, ctx []*core.Variable) ([]*core.Variable, []*core.Variable, error) {
			return step(st, ctx)
		})
		if err != nil {
			return nil, fmt.Errorf("%s.generate: %w", g.AnnotationName(), err)
		}
		res = append(states, outs...)
	}
	if outDType != g.cfg.FloatX {
		res[nState] = core.Cast(res[nState], outDType)
	}
	for i, n := range g.GenerateNames() {
		res[i] = tag(res[i], g.Base, "generate", n, call, core.Output)
	}
	return res, nil
}

// constInt is the value of a constant int scalar variable.
func constInt(v *core.Variable) (int, bool) {
	if !v.IsConstant() || v.NDim() != 0 || v.DType().IsFloat() {
		return 0, false
	}
	return int(v.Value().Flat(0)), true
}

// GenerateSpec is Blocks' generate.states, generate.contexts and
// generate.outputs: the states (the transition's, "outputs", the
// glimpses), the contexts and the results of Generate.
func (g *SequenceGenerator) GenerateSpec() (states, contexts, outputs []string) {
	return slices.Concat(g.stateNames, []string{"outputs"}, g.glimpseNames()), slices.Clone(g.ctxNames), g.GenerateNames()
}
