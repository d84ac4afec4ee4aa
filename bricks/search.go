package bricks

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	_ "github.com/blocks-go/blocks/core/exec/cpu" // the CPU backend, which core.Compile runs on
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// Generation is a SequenceGenerator compiled for generation, step by step,
// as Blocks' BeamSearch compiles it: the contexts once, then per step the
// distribution over the next output (after the attention's glimpses) and
// the next states given the chosen outputs. Sampling and beam search both
// drive these functions from Go; every draw comes from numpyrand.
type Generation struct {
	g        *SequenceGenerator
	inputs   []*core.Variable // the data inputs the contexts depend on
	ctxNames []string         // contexts, then preprocessed_attended
	ctxFn    *core.Function   // inputs -> contexts
	initFn   *core.Function   // batch ref, contexts -> states, glimpses, outputs
	distFn   *core.Function   // contexts, states, glimpses, outputs -> distribution, next glimpses
	nextFn   *core.Function   // contexts, states, next glimpses, chosen outputs -> next states
	states   []string         // states then glimpses
	nState   int
	floatX   nd.DType
	// trivial is set when the emitter is deterministic (TrivialEmitter).
	trivial bool
}

// NewGeneration compiles the generation functions for dev (the zero
// Device is the CPU). contexts maps the transition's context names
// (attended, attended_mask) to variables computed from inputs.
func (g *SequenceGenerator) NewGeneration(dev device.Device, contexts map[string]*core.Variable, inputs []*core.Variable) (*Generation, error) {
	if !g.Allocated {
		if err := Allocate(g); err != nil {
			return nil, err
		}
	}
	gen := &Generation{g: g, inputs: inputs, floatX: g.cfg.FloatX}
	var ctxOuts []*core.Variable
	for _, n := range g.ctxNames {
		v, ok := contexts[n]
		if !ok {
			if n == "attended_mask" && contexts["attended"] != nil {
				a := contexts["attended"]
				w, err := core.Subtensor(a, []core.Index{{Slice: true}, {Slice: true}, {I: 0}})
				if err != nil {
					return nil, err
				}
				v = core.Add(core.Mul(w, core.Const(w.DType(), 0)), core.Const(w.DType(), 1))
			} else {
				return nil, fmt.Errorf("%s: context %s is not given", g.AnnotationName(), n)
			}
		}
		gen.ctxNames = append(gen.ctxNames, n)
		ctxOuts = append(ctxOuts, v)
	}
	if g.attention != nil {
		p, err := g.attention.Attention.PreprocessAttended(contexts["attended"])
		if err != nil {
			return nil, err
		}
		gen.ctxNames = append(gen.ctxNames, "preprocessed_attended")
		ctxOuts = append(ctxOuts, p)
	}
	var err error
	if len(ctxOuts) > 0 {
		if gen.ctxFn, err = core.CompileFor(dev, inputs, ctxOuts, nil); err != nil {
			return nil, fmt.Errorf("generation contexts: %w", err)
		}
	}
	ctxP := map[string]*core.Variable{}
	var ctxList []*core.Variable
	for i, n := range gen.ctxNames {
		p := core.NewInput(n, ctxOuts[i].DType(), ctxOuts[i].NDim())
		ctxP[n] = p
		ctxList = append(ctxList, p)
	}
	// Initial states, glimpses and outputs.
	ref := core.NewInput("batch", gen.floatX, 1)
	var init []*core.Variable
	if g.attention != nil {
		init, err = g.attention.InitialStates(ref, 0, ctxP["attended"])
	} else {
		init, err = g.Transition.RecurrentApplication("apply").Initial(ref, 0)
	}
	if err != nil {
		return nil, err
	}
	gen.states = slices.Concat(g.stateNames, g.glimpseNames())
	gen.nState = len(g.stateNames)
	if len(init) != len(gen.states) {
		return nil, fmt.Errorf("internal: %d initial states for %v", len(init), gen.states)
	}
	initOut, err := g.Readout.Emitter.InitialOutputs(ref, 0)
	if err != nil {
		return nil, err
	}
	if gen.initFn, err = core.CompileFor(dev, append([]*core.Variable{ref}, ctxList...), append(init, initOut), nil); err != nil {
		return nil, fmt.Errorf("generation initial states: %w", err)
	}
	// One step: placeholders for the states, glimpses and previous outputs.
	stP := map[string]*core.Variable{}
	var stList []*core.Variable
	for i, n := range gen.states {
		p := core.NewInput(n, init[i].DType(), init[i].NDim())
		stP[n] = p
		stList = append(stList, p)
	}
	prev := core.NewInput("outputs", initOut.DType(), initOut.NDim())
	m := copyMap(ctxP)
	for n, v := range stP {
		m[n] = v
	}
	var glimpses []*core.Variable
	if g.attention != nil {
		if glimpses, err = g.attention.TakeGlimpses(m); err != nil {
			return nil, err
		}
		for i, n := range attentionGlimpseNames {
			m[n] = glimpses[i]
		}
	}
	if m["feedback"], err = g.Readout.FeedbackBr.Feedback(prev); err != nil {
		return nil, err
	}
	readouts, err := g.Readout.Readouts(m)
	if err != nil {
		return nil, err
	}
	dist, err := g.Readout.Emitter.Distribution(readouts)
	if err != nil {
		return nil, err
	}
	if dist == nil {
		gen.trivial = true
		dist = readouts
	}
	distIns := slices.Concat(ctxList, stList, []*core.Variable{prev})
	if gen.distFn, err = core.CompileFor(dev, distIns, append([]*core.Variable{dist}, glimpses...), nil); err != nil {
		return nil, fmt.Errorf("generation readout: %w", err)
	}
	// Next states from the chosen outputs (and the new glimpses).
	chosen := core.NewInput("chosen", initOut.DType(), initOut.NDim())
	var glP []*core.Variable
	m2 := copyMap(ctxP)
	for _, n := range g.stateNames {
		m2[n] = stP[n]
	}
	for _, n := range g.glimpseNames() {
		p := core.NewInput("next_"+n, stP[n].DType(), stP[n].NDim())
		glP = append(glP, p)
		m2[n] = p
	}
	fb, err := g.Readout.FeedbackBr.Feedback(chosen)
	if err != nil {
		return nil, err
	}
	fo, err := Apply(g.Fork, "apply", fb)
	if err != nil {
		return nil, err
	}
	for i, n := range g.seqNames {
		m2[n] = fo[i]
	}
	var next []*core.Variable
	if g.attention != nil {
		next, err = g.attention.ComputeStates(m2)
	} else {
		ra := g.Transition.RecurrentApplication("apply")
		var res []*core.Variable
		if res, err = ra.Step(m2); err == nil {
			for _, n := range ra.Spec.States {
				next = append(next, res[slices.Index(ra.Spec.Outputs, n)])
			}
		}
	}
	if err != nil {
		return nil, err
	}
	nextIns := slices.Concat(ctxList, stList[:gen.nState], glP, []*core.Variable{chosen})
	if gen.nextFn, err = core.CompileFor(dev, nextIns, next, nil); err != nil {
		return nil, fmt.Errorf("generation next states: %w", err)
	}
	return gen, nil
}

// contexts computes the contexts from the data (nil without contexts).
func (gen *Generation) contexts(data []*nd.Array) ([]*nd.Array, int, error) {
	if gen.ctxFn == nil {
		return nil, 0, nil
	}
	ctx, err := gen.ctxFn.Call(data)
	if err != nil {
		return nil, 0, err
	}
	return ctx, ctx[0].Shape[1], nil
}

// Sample draws nSteps outputs for each of batchSize sequences (with
// contexts, the batch size is theirs). It returns the outputs (time,
// batch) and the cost of each drawn output (−log p).
func (gen *Generation) Sample(data []*nd.Array, nSteps, batchSize int, rng *numpyrand.RandomState) (outputs, costs *nd.Array, err error) {
	ctx, b, err := gen.contexts(data)
	if err != nil {
		return nil, nil, err
	}
	if ctx != nil {
		batchSize = b
	}
	init, err := gen.initFn.Call(append([]*nd.Array{nd.New(gen.floatX, batchSize)}, ctx...))
	if err != nil {
		return nil, nil, err
	}
	states, prev := init[:len(init)-1], init[len(init)-1]
	outShape := append([]int{nSteps}, prev.Shape...)
	outputs = nd.New(prev.DType(), outShape...)
	costs = nd.New(nd.Float64, nSteps, batchSize)
	for t := 0; t < nSteps; t++ {
		res, err := gen.distFn.Call(slices.Concat(ctx, states, []*nd.Array{prev}))
		if err != nil {
			return nil, nil, err
		}
		dist, glimpses := res[0], res[1:]
		chosen := nd.New(prev.DType(), prev.Shape...)
		if gen.trivial {
			chosen = dist.Astype(prev.DType())
		} else {
			v := dist.Shape[1]
			for i := 0; i < batchSize; i++ {
				u := rng.RandomSample()
				k, acc := v-1, 0.0
				for j := 0; j < v; j++ {
					acc += dist.Flat(i*v + j)
					if u < acc {
						k = j
						break
					}
				}
				chosen.SetFlat(i, float64(k))
				costs.SetFlat(t*batchSize+i, -math.Log(dist.Flat(i*v+k)))
			}
		}
		n := chosen.Size()
		for i := 0; i < n; i++ {
			outputs.SetFlat(t*n+i, chosen.Flat(i))
		}
		next, err := gen.nextFn.Call(slices.Concat(ctx, states[:gen.nState], glimpses, []*nd.Array{chosen}))
		if err != nil {
			return nil, nil, err
		}
		states = append(next, glimpses...)
		prev = chosen
	}
	return outputs, costs, nil
}

// BeamSearchResult is one hypothesis: its outputs (up to and including the
// end-of-line symbol) and its cost (−log probability).
type BeamSearchResult struct {
	Outputs []int
	Cost    float64
	// StepCosts is the cost added at each step the search ran (0 after
	// the hypothesis finished): Blocks' as_arrays costs.
	StepCosts []float64
}

// BeamSearch is Blocks' beam search (blocks.search.BeamSearch.search) for
// generators with a softmax emitter: it keeps the beamSize cheapest
// hypotheses, finished hypotheses only extend with eolSymbol at no cost,
// and it stops when all are finished or after maxLength steps. data must
// hold one sequence (batch size 1); the result is in order of cost. With
// ignoreFirstEOL an end-of-line at the first step does not finish.
func (gen *Generation) BeamSearch(data []*nd.Array, beamSize, eolSymbol, maxLength int, ignoreFirstEOL bool) ([]BeamSearchResult, error) {
	if gen.trivial {
		return nil, fmt.Errorf("beam search needs a probabilistic emitter (SoftmaxEmitter)")
	}
	if beamSize < 1 {
		return nil, fmt.Errorf("beam size must be positive, got %d", beamSize)
	}
	ctx, b, err := gen.contexts(data)
	if err != nil {
		return nil, err
	}
	if ctx != nil && b != 1 {
		return nil, fmt.Errorf("beam search takes one input sequence (batch size 1), got %d", b)
	}
	init, err := gen.initFn.Call(append([]*nd.Array{nd.New(gen.floatX, 1)}, ctx...))
	if err != nil {
		return nil, err
	}
	states, prev := init[:len(init)-1], init[len(init)-1]
	type hyp struct {
		outputs  []int
		cost     float64
		steps    []float64
		finished bool
	}
	hyps := []hyp{{}}
	tiledCtx := ctx
	// The contexts repeated for n hypotheses, computed once per n (the
	// functions only read their inputs).
	tiled := map[int][]*nd.Array{}
	tile := func(n int) []*nd.Array {
		if t, ok := tiled[n]; ok {
			return t
		}
		t := make([]*nd.Array, len(ctx))
		for i, c := range ctx {
			t[i] = tileAxis1(c, n)
		}
		tiled[n] = t
		return t
	}
	for step := 0; step < maxLength; step++ {
		live := false
		for _, h := range hyps {
			live = live || !h.finished
		}
		if !live {
			break
		}
		if ctx != nil {
			tiledCtx = tile(len(hyps))
		}
		res, err := gen.distFn.Call(slices.Concat(tiledCtx, states, []*nd.Array{prev}))
		if err != nil {
			return nil, err
		}
		dist, glimpses := res[0], res[1:]
		v := dist.Shape[1]
		type cand struct {
			row, sym int
			cost     float64
		}
		// The beamSize cheapest candidates, in order of cost, ties in
		// the order they are listed (a stable sort's first beamSize),
		// kept by insertion: beamSize is small, the candidates many.
		cands := make([]cand, 0, beamSize+1)
		add := func(c cand) {
			if len(cands) == beamSize && !(c.cost < cands[beamSize-1].cost) {
				return
			}
			i := len(cands)
			for i > 0 && c.cost < cands[i-1].cost {
				i--
			}
			cands = slices.Insert(cands, i, c)
			if len(cands) > beamSize {
				cands = cands[:beamSize]
			}
		}
		for r, h := range hyps {
			if h.finished {
				add(cand{r, eolSymbol, h.cost})
				continue
			}
			for j := 0; j < v; j++ {
				add(cand{r, j, h.cost - math.Log(dist.Flat(r*v+j))})
			}
		}
		rows := make([]int, len(cands))
		chosen := nd.New(nd.Int64, len(cands))
		newHyps := make([]hyp, len(cands))
		for i, c := range cands {
			rows[i] = c.row
			chosen.SetFlat(i, float64(c.sym))
			h := hyps[c.row]
			nh := hyp{outputs: append(slices.Clone(h.outputs), c.sym), cost: c.cost, steps: append(slices.Clone(h.steps), c.cost-h.cost), finished: h.finished}
			if h.finished {
				nh.outputs = h.outputs
			} else if c.sym == eolSymbol && !(ignoreFirstEOL && step == 0) {
				nh.finished = true
			}
			newHyps[i] = nh
		}
		pick := func(a []*nd.Array) []*nd.Array {
			out := make([]*nd.Array, len(a))
			for i, x := range a {
				out[i] = x.Take(rows)
			}
			return out
		}
		states, glimpses = pick(states), pick(glimpses)
		if ctx != nil {
			tiledCtx = tile(len(cands))
		}
		next, err := gen.nextFn.Call(slices.Concat(tiledCtx, states[:gen.nState], glimpses, []*nd.Array{chosen}))
		if err != nil {
			return nil, err
		}
		states = append(next, glimpses...)
		prev = chosen
		hyps = newHyps
	}
	out := make([]BeamSearchResult, len(hyps))
	for i, h := range hyps {
		out[i] = BeamSearchResult{Outputs: h.outputs, Cost: h.cost, StepCosts: h.steps}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Cost < out[j].Cost })
	return out, nil
}

// tileAxis1 repeats a (time, 1, ...) array n times along axis 1.
func tileAxis1(a *nd.Array, n int) *nd.Array {
	shape := slices.Clone(a.Shape)
	shape[1] = n
	out := nd.New(a.DType(), shape...)
	inner := nd.Prod(a.Shape[2:])
	if tileRows(out.Data, a.Data, a.Shape[0], n, inner) {
		return out
	}
	for t := 0; t < a.Shape[0]; t++ {
		for b := 0; b < n; b++ {
			for k := 0; k < inner; k++ {
				out.SetFlat((t*n+b)*inner+k, a.Flat(t*inner+k))
			}
		}
	}
	return out
}

// tileRows is tileAxis1's copy for the float and int64 arrays: dst holds
// rows row blocks of n copies of src's inner elements; false for other
// data.
func tileRows(dst, src any, rows, n, inner int) bool {
	switch d := dst.(type) {
	case []float32:
		return tileTyped(d, src, rows, n, inner)
	case []float64:
		return tileTyped(d, src, rows, n, inner)
	case []int64:
		return tileTyped(d, src, rows, n, inner)
	}
	return false
}

func tileTyped[T float32 | float64 | int64](dst []T, src any, rows, n, inner int) bool {
	s, ok := src.([]T)
	if !ok {
		return false
	}
	for t := range rows {
		row := s[t*inner : (t+1)*inner]
		for b := range n {
			copy(dst[(t*n+b)*inner:], row)
		}
	}
	return true
}
