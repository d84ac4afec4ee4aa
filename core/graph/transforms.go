package graph

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// DefaultSeed is Blocks' config.default_seed, the seed of apply_dropout and
// apply_noise when none is given.
const DefaultSeed = 1

// ApplyDropout is Blocks' apply_dropout: a new graph in which each of vars
// is replaced by var * mask / divisor, the mask drawn afresh at every call
// of a compiled function as binomial(1, 1 - dropProb) from one numpyrand
// generator RandomState(seed) shared by all the masks of this call (Blocks
// shared one MRG stream likewise). The divisor is 1 - dropProb unless
// customDivisor is given, so that the expectation of the replacement is the
// clean variable. The replacements have role DROPOUT. g is left unchanged.
func ApplyDropout(g *ComputationGraph, vars []*core.Variable, dropProb float64, seed uint32, customDivisor *float64) (*ComputationGraph, error) {
	rng := numpyrand.New(seed)
	return applyDropout(g, vars, dropProb, customDivisor, func(v *core.Variable) (*core.Variable, error) {
		return core.BinomialLike(v, 1-dropProb, v.DType(), rng)
	})
}

// ApplyDropoutStreams is ApplyDropout with Blocks' rng argument: each mask
// is a draw of the random streams, streams.binomial(v.shape, p=1 -
// dropProb, dtype=v's), in the order of vars (a generator per mask, as
// Theano's streams make one per draw).
func ApplyDropoutStreams(g *ComputationGraph, vars []*core.Variable, dropProb float64, streams *core.RandomStreams, customDivisor *float64) (*ComputationGraph, error) {
	return applyDropout(g, vars, dropProb, customDivisor, func(v *core.Variable) (*core.Variable, error) {
		return streams.Draw(core.DistBinomial, 1, 1-dropProb, v.DType(), []*core.Variable{core.ShapeOf(v)})
	})
}

func applyDropout(g *ComputationGraph, vars []*core.Variable, dropProb float64, customDivisor *float64, newMask func(*core.Variable) (*core.Variable, error)) (*ComputationGraph, error) {
	if !(dropProb >= 0 && dropProb < 1) {
		return nil, fmt.Errorf("apply_dropout: drop_prob must be in [0, 1), got %g", dropProb)
	}
	divisor := 1 - dropProb
	if customDivisor != nil {
		if *customDivisor == 0 {
			return nil, fmt.Errorf("apply_dropout: custom_divisor must not be 0")
		}
		divisor = *customDivisor
	}
	repl := map[*core.Variable]*core.Variable{}
	for _, v := range vars {
		if !v.DType().IsFloat() {
			return nil, fmt.Errorf("apply_dropout: %s is %s, not a float variable", v, v.TypeString())
		}
		mask, err := newMask(v)
		if err != nil {
			return nil, fmt.Errorf("apply_dropout: %v", err)
		}
		mask.Name = "dropout_mask"
		r := core.Div(core.Mul(v, mask), core.Const(v.DType(), divisor))
		if v.Name != "" {
			r.Name = v.Name + "_dropout"
		}
		core.AddRole(r, core.Dropout)
		r.Tag.ReplacementOf = v
		repl[v] = r
	}
	ng, err := g.Replace(repl)
	if err != nil {
		return nil, fmt.Errorf("apply_dropout: %v", err)
	}
	return ng, nil
}

// ApplyNoise is Blocks' apply_noise: a new graph in which each of vars
// (typically the weights) is replaced by var + noise, the noise drawn
// afresh at every call as normal(0, level) from one generator
// RandomState(seed). g is left unchanged.
func ApplyNoise(g *ComputationGraph, vars []*core.Variable, level float64, seed uint32) (*ComputationGraph, error) {
	if !(level >= 0) {
		return nil, fmt.Errorf("apply_noise: level must be >= 0, got %g", level)
	}
	rng := numpyrand.New(seed)
	repl := map[*core.Variable]*core.Variable{}
	for _, v := range vars {
		if !v.DType().IsFloat() {
			return nil, fmt.Errorf("apply_noise: %s is %s, not a float variable", v, v.TypeString())
		}
		noise, err := core.NormalLike(v, level, v.DType(), rng)
		if err != nil {
			return nil, fmt.Errorf("apply_noise: %v", err)
		}
		noise.Name = "noise"
		r := core.Add(v, noise)
		if v.Name != "" {
			r.Name = v.Name + "_noisy"
		}
		repl[v] = r
	}
	ng, err := g.Replace(repl)
	if err != nil {
		return nil, fmt.Errorf("apply_noise: %v", err)
	}
	return ng, nil
}

// CollectParameters is Blocks' collect_parameters: the parameters' values
// are copied, flattened and concatenated into one new shared vector named
// "collected_parameters" (role COLLECTOR), and each parameter is replaced
// by its slice of it, reshaped (role COLLECTED). It returns the new graph
// and the vector. g is left unchanged.
func CollectParameters(g *ComputationGraph, params []*core.Variable) (*ComputationGraph, *core.Variable, error) {
	if len(params) == 0 {
		return nil, nil, fmt.Errorf("collect_parameters: no parameters")
	}
	dt := params[0].DType()
	total := 0
	for _, p := range params {
		if !p.IsShared() {
			return nil, nil, fmt.Errorf("collect_parameters: %s is not a shared variable", p)
		}
		if p.DType() != dt {
			return nil, nil, fmt.Errorf("collect_parameters: %s is %s but %s is %s", p, p.DType(), params[0], dt)
		}
		total += p.Value().Size()
	}
	all := nd.New(dt, total)
	off := 0
	for _, p := range params {
		v := p.Value()
		for i := range v.Size() {
			all.SetFlat(off+i, v.Flat(i))
		}
		off += v.Size()
	}
	collected := core.NewShared(all, "collected_parameters")
	core.AddRole(collected, core.Collector)
	repl := map[*core.Variable]*core.Variable{}
	off = 0
	for _, p := range params {
		n := p.Value().Size()
		start, stop := off, off+n
		s, err := core.Subtensor(collected, []core.Index{{Slice: true, Start: &start, Stop: &stop}})
		if err != nil {
			return nil, nil, fmt.Errorf("collect_parameters: %v", err)
		}
		r, err := core.Reshape(s, append([]int(nil), p.Value().Shape...))
		if err != nil {
			return nil, nil, fmt.Errorf("collect_parameters: %v", err)
		}
		r.Name = p.Name
		core.AddRole(r, core.Collected)
		repl[p] = r
		off = stop
	}
	ng, err := g.Replace(repl)
	if err != nil {
		return nil, nil, fmt.Errorf("collect_parameters: %v", err)
	}
	return ng, collected, nil
}
