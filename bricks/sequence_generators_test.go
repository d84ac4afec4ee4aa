package bricks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// newTestGenerator builds a generator over vocab symbols: a GRU
// transition, a LookupFeedback, a SoftmaxEmitter and, with attention, a
// SequenceContentAttention over an attended sequence of attDim.
func newTestGenerator(t *testing.T, vocab int, attention bool, attDim int) *SequenceGenerator {
	t.Helper()
	cfg := NewConfig(nd.Float64, 1)
	tr := NewGatedRecurrent(cfg, "transition", 3, nil, nil)
	sources := []string{"states", "feedback"}
	var att *SequenceContentAttention
	if attention {
		var err error
		att, err = NewSequenceContentAttention(cfg, "attention", []string{"states"}, nil, attDim, 4)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, "weighted_averages")
	}
	ro, err := NewReadout(cfg, "readout", NewSoftmaxEmitter(cfg, "emitter", 0), NewLookupFeedback(cfg, "feedback", vocab, 2), sources, vocab, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewSequenceGenerator(cfg, "generator", ro, tr, att)
	if err != nil {
		t.Fatal(err)
	}
	g.WeightsInit = initialization.IsotropicGaussian{Std: 0.7}
	g.BiasesInit = initialization.IsotropicGaussian{Std: 0.3}
	if err := Initialize(g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSequenceGeneratorGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const T, B, V = 4, 2, 3
	outputs := core.NewConstant(nd.FromSlice([]int64{1, 2, 0, 1, 2, 2, 1, 0}, T, B))
	mask := core.NewConstant(nd.FromSlice([]float64{1, 1, 1, 1, 1, 0, 1, 0}, T, B))
	g := newTestGenerator(t, V, false, 0)
	gradCheck(t, "SequenceGenerator", AllParameters(g), func() []*core.Variable {
		c, err := g.ApplyKeywords("cost_matrix", map[string]*core.Variable{"outputs": outputs, "mask": mask}, RecurrentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
	ga := newTestGenerator(t, V, true, 2)
	attended := core.NewShared(rnd(r, -1, 1, 3, B, 2), "attended")
	amask := core.NewConstant(nd.FromSlice([]float64{1, 1, 1, 1, 1, 0}, 3, B))
	gradCheck(t, "SequenceGenerator with attention", append(AllParameters(ga), attended), func() []*core.Variable {
		c, err := ga.ApplyKeywords("cost", map[string]*core.Variable{"outputs": outputs, "mask": mask, "attended": attended, "attended_mask": amask}, RecurrentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

// seqCosts scores candidate sequences (each padded to T with mask) with
// cost_matrix: the training path, independent of the generation code.
func seqCosts(t *testing.T, g *SequenceGenerator, cands [][]int, T int, attended *nd.Array) []float64 {
	t.Helper()
	out := core.NewInput("outputs", nd.Int64, 2)
	mask := core.NewInput("mask", nd.Float64, 2)
	ctx := map[string]*core.Variable{}
	ins := []*core.Variable{out, mask}
	var att *core.Variable
	if attended != nil {
		att = core.NewInput("attended", nd.Float64, 3)
		ctx["attended"] = att
		ins = append(ins, att)
	}
	cm, err := g.CostMatrix(out, mask, ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := core.Sum(cm, []int{0}, false, nil)
	f, err := core.Compile(ins, []*core.Variable{s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(cands)
	ov, mv := nd.New(nd.Int64, T, n), nd.New(nd.Float64, T, n)
	for b, c := range cands {
		for i, sym := range c {
			ov.SetFlat(i*n+b, float64(sym))
			mv.SetFlat(i*n+b, 1)
		}
	}
	args := []*nd.Array{ov, mv}
	if attended != nil {
		args = append(args, tileAxis1(attended, n))
	}
	res, err := f.Call(args)
	if err != nil {
		t.Fatal(err)
	}
	return res[0].Float64s()
}

// TestBeamSearchExhaustive: with a beam wide enough to keep every
// hypothesis, beam search returns every sequence of at most maxLength
// symbols (ending at the first end-of-line) in order of cost, and these
// costs equal cost_matrix's; a narrow beam returns the cheapest ones when
// they survive and is sorted.
func TestBeamSearchExhaustive(t *testing.T) {
	const V, eol, maxLen = 3, 0, 3
	r := rand.New(rand.NewPCG(33, 34))
	// Candidates: EOL only at the end, or no EOL and length maxLen.
	var cands [][]int
	var rec func(prefix []int)
	rec = func(prefix []int) {
		for s := 0; s < V; s++ {
			c := append(slices.Clone(prefix), s)
			if s == eol || len(c) == maxLen {
				cands = append(cands, c)
			} else {
				rec(c)
			}
		}
	}
	rec(nil)
	for _, attention := range []bool{false, true} {
		g := newTestGenerator(t, V, attention, 2)
		var attended *nd.Array
		ctx := map[string]*core.Variable{}
		var ins []*core.Variable
		var data []*nd.Array
		if attention {
			attended = rnd(r, -1, 1, 4, 1, 2)
			a := core.NewInput("attended", nd.Float64, 3)
			ctx["attended"] = a
			ins = []*core.Variable{a}
			data = []*nd.Array{attended}
		}
		want := seqCosts(t, g, cands, maxLen, attended)
		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { return want[order[i]] < want[order[j]] })
		// The probabilities of all complete candidates sum to 1.
		total := 0.0
		for _, c := range want {
			total += math.Exp(-c)
		}
		if math.Abs(total-1) > 1e-12 {
			t.Errorf("attention=%v: candidate probabilities sum to %g", attention, total)
		}
		gen, err := g.NewGeneration(device.Device{}, ctx, ins)
		if err != nil {
			t.Fatal(err)
		}
		res, err := gen.BeamSearch(data, 100, eol, maxLen, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(cands) {
			t.Fatalf("attention=%v: %d hypotheses, want %d", attention, len(res), len(cands))
		}
		for k, h := range res {
			c := cands[order[k]]
			if fmt.Sprint(h.Outputs) != fmt.Sprint(c) || math.Abs(h.Cost-want[order[k]]) > 1e-10 {
				t.Fatalf("attention=%v: hypothesis %d = %v (cost %.12g), exhaustive %v (cost %.12g)", attention, k, h.Outputs, h.Cost, c, want[order[k]])
			}
		}
		narrow, err := gen.BeamSearch(data, 2, eol, maxLen, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(narrow) != 2 || narrow[0].Cost > narrow[1].Cost {
			t.Fatalf("narrow beam: %+v", narrow)
		}
		for _, h := range narrow {
			i := slices.IndexFunc(cands, func(c []int) bool { return fmt.Sprint(c) == fmt.Sprint(h.Outputs) })
			if i < 0 || math.Abs(want[i]-h.Cost) > 1e-10 {
				t.Fatalf("narrow beam hypothesis %v cost %g not a candidate with that cost", h.Outputs, h.Cost)
			}
		}
	}
}

// TestSampleMatchesCostMatrix: the costs that sampling reports for its
// draws equal cost_matrix's for the drawn sequences, and two runs with one
// seed draw the same sequences.
func TestSampleMatchesCostMatrix(t *testing.T) {
	const V, T, B = 3, 5, 4
	for _, attention := range []bool{false, true} {
		g := newTestGenerator(t, V, attention, 2)
		ctx := map[string]*core.Variable{}
		var ins []*core.Variable
		var data []*nd.Array
		var attended *nd.Array
		if attention {
			r := rand.New(rand.NewPCG(35, 36))
			attended = rnd(r, -1, 1, 3, 1, 2)
			a := core.NewInput("attended", nd.Float64, 3)
			ctx["attended"] = a
			ins = []*core.Variable{a}
			data = []*nd.Array{tileAxis1(attended, B)}
		}
		gen, err := g.NewGeneration(device.Device{}, ctx, ins)
		if err != nil {
			t.Fatal(err)
		}
		out, costs, err := gen.Sample(data, T, B, numpyrand.New(5))
		if err != nil {
			t.Fatal(err)
		}
		out2, _, _ := gen.Sample(data, T, B, numpyrand.New(5))
		if fmt.Sprint(out.Float64s()) != fmt.Sprint(out2.Float64s()) {
			t.Error("same seed, different samples")
		}
		cands := make([][]int, B)
		for b := 0; b < B; b++ {
			for tt := 0; tt < T; tt++ {
				cands[b] = append(cands[b], int(out.Flat(tt*B+b)))
			}
		}
		want := seqCosts(t, g, cands, T, attended)
		for b := 0; b < B; b++ {
			got := 0.0
			for tt := 0; tt < T; tt++ {
				got += costs.Flat(tt*B + b)
			}
			if math.Abs(got-want[b]) > 1e-10 {
				t.Errorf("attention=%v: sequence %v: sampled cost %g, cost_matrix %g", attention, cands[b], got, want[b])
			}
		}
	}
}

// TestTrivialEmitterGenerator: a real-valued generator (TrivialEmitter,
// TrivialFeedback) passes the gradient check, and generation feeds each
// readout back as the next output.
func TestTrivialEmitterGenerator(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	cfg := NewConfig(nd.Float64, 1)
	const T, B, D = 3, 2, 2
	ro, err := NewReadout(cfg, "readout", NewTrivialEmitter(cfg, "emitter", D), NewTrivialFeedback(cfg, "feedback", D), []string{"states", "feedback"}, D, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewSequenceGenerator(cfg, "generator", ro, NewLSTM(cfg, "transition", 3, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	g.WeightsInit = initialization.IsotropicGaussian{Std: 0.5}
	g.BiasesInit = initialization.IsotropicGaussian{Std: 0.3}
	if err := Initialize(g); err != nil {
		t.Fatal(err)
	}
	outputs := core.NewShared(rnd(r, -1, 1, T, B, D), "outputs")
	gradCheck(t, "TrivialEmitter generator", append(AllParameters(g), outputs), func() []*core.Variable {
		c, err := g.CostMatrix(outputs, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return []*core.Variable{c}
	})
	gen, err := g.NewGeneration(device.Device{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := gen.Sample(nil, 4, B, numpyrand.New(1))
	if err != nil {
		t.Fatal(err)
	}
	if !nd.SameShape(out.Shape, []int{4, B, D}) {
		t.Fatalf("generated shape %v", out.Shape)
	}
	// Fed back, the generated outputs cost nothing: each is its readout.
	y := core.NewInput("y", nd.Float64, 3)
	c, err := g.CostMatrix(y, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := eval(t, []*core.Variable{y}, []*nd.Array{out}, c)
	for i, v := range res[0].Float64s() {
		if math.Abs(v) > 1e-20 {
			t.Fatalf("cost[%d] of a generated output = %g, want 0", i, v)
		}
	}
}

// TestTileAxis1: a (time, 1, ...) array repeated along axis 1, for the
// typed copies and the generic loop alike.
func TestTileAxis1(t *testing.T) {
	for _, dt := range []nd.DType{nd.Float32, nd.Float64, nd.Int64, nd.Int32} {
		a := nd.New(dt, 3, 1, 2)
		for i := range a.Size() {
			a.SetFlat(i, float64(i+1))
		}
		got := tileAxis1(a, 4)
		if got.DType() != dt || len(got.Shape) != 3 || got.Shape[0] != 3 || got.Shape[1] != 4 || got.Shape[2] != 2 {
			t.Fatalf("%s: got %s%v", dt, got.DType(), got.Shape)
		}
		for tt := range 3 {
			for b := range 4 {
				for k := range 2 {
					if v, want := got.Flat((tt*4+b)*2+k), float64(tt*2+k+1); v != want {
						t.Fatalf("%s: [%d,%d,%d] = %v, want %v", dt, tt, b, k, v, want)
					}
				}
			}
		}
	}
}
