package bricks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

func rnd(r *rand.Rand, lo, hi float64, shape ...int) *nd.Array {
	a := nd.New(nd.Float64, shape...)
	for i := range a.F64() {
		a.F64()[i] = lo + (hi-lo)*r.Float64()
	}
	return a
}

// randomMask is a (T, B) 0/1 mask with random entries.
func randomMask(r *rand.Rand, T, B int) *nd.Array {
	m := nd.New(nd.Float64, T, B)
	for i := range m.F64() {
		if r.Float64() < 0.7 {
			m.F64()[i] = 1
		}
	}
	return m
}

func initRandom(t *testing.T, b Brick, seed uint64) {
	t.Helper()
	if err := SetInitSchemes(b, initialization.IsotropicGaussian{Std: 0.5}, nil); err != nil {
		t.Fatal(err)
	}
	if err := Initialize(b); err != nil {
		t.Fatal(err)
	}
	// Random initial states too, so that their gradients are exercised.
	r := rand.New(rand.NewPCG(seed, 1))
	for _, p := range AllParameters(b) {
		if core.HasRole(p, core.InitialState) {
			for i := range p.Value().F64() {
				p.Value().F64()[i] = r.Float64() - 0.5
			}
		}
	}
}

func sigm(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// at2 is a[i][j] of a 2-d float64 array.
func at2(a *nd.Array, i, j int) float64 { return a.F64()[i*a.Shape[1]+j] }

// TestLSTMMatchesReference runs Blocks' LSTM equations as plain loops.
func TestLSTMMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cfg := NewConfig(nd.Float64, 1)
	const T, B, D = 5, 3, 4
	l := NewLSTM(cfg, "lstm", D, nil, nil)
	initRandom(t, l, 1)
	x := core.NewInput("x", nd.Float64, 3)
	mask := core.NewInput("mask", nd.Float64, 2)
	outs, err := ApplyRecurrent(l, "apply", map[string]*core.Variable{"inputs": x, "mask": mask}, RecurrentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	xv, mv := rnd(r, -1, 1, T, B, 4*D), randomMask(r, T, B)
	res := eval(t, []*core.Variable{x, mv2v(mask)}, []*nd.Array{xv, mv}, outs...)
	W, wi, wf, wo := l.WState.Value(), l.WCellToIn.Value().F64(), l.WCellToForget.Value().F64(), l.WCellToOut.Value().F64()
	h := make([][]float64, B)
	c := make([][]float64, B)
	for b := range h {
		h[b] = append([]float64(nil), l.InitialState.Value().F64()...)
		c[b] = append([]float64(nil), l.InitialCells.Value().F64()...)
	}
	for tt := 0; tt < T; tt++ {
		for b := 0; b < B; b++ {
			act := make([]float64, 4*D)
			for j := range act {
				act[j] = xv.F64()[(tt*B+b)*4*D+j]
				for i := 0; i < D; i++ {
					act[j] += h[b][i] * at2(W, i, j)
				}
			}
			nh, nc := make([]float64, D), make([]float64, D)
			for j := 0; j < D; j++ {
				ig := sigm(act[j] + c[b][j]*wi[j])
				fg := sigm(act[D+j] + c[b][j]*wf[j])
				nc[j] = fg*c[b][j] + ig*math.Tanh(act[2*D+j])
				og := sigm(act[3*D+j] + nc[j]*wo[j])
				nh[j] = og * math.Tanh(nc[j])
			}
			m := at2(mv, tt, b)
			for j := 0; j < D; j++ {
				h[b][j] = m*nh[j] + (1-m)*h[b][j]
				c[b][j] = m*nc[j] + (1-m)*c[b][j]
				if g := res[0].F64()[(tt*B+b)*D+j]; math.Abs(g-h[b][j]) > 1e-12 {
					t.Fatalf("states[%d,%d,%d] = %g, want %g", tt, b, j, g, h[b][j])
				}
				if g := res[1].F64()[(tt*B+b)*D+j]; math.Abs(g-c[b][j]) > 1e-12 {
					t.Fatalf("cells[%d,%d,%d] = %g, want %g", tt, b, j, g, c[b][j])
				}
			}
		}
	}
}

func mv2v(v *core.Variable) *core.Variable { return v }

// TestGatedRecurrentMatchesReference runs Blocks' GRU equations as loops.
func TestGatedRecurrentMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	cfg := NewConfig(nd.Float64, 1)
	const T, B, D = 4, 3, 3
	g := NewGatedRecurrent(cfg, "gru", D, nil, nil)
	initRandom(t, g, 2)
	x := core.NewInput("x", nd.Float64, 3)
	gx := core.NewInput("gx", nd.Float64, 3)
	mask := core.NewInput("mask", nd.Float64, 2)
	for _, reverse := range []bool{false, true} {
		outs, err := ApplyRecurrent(g, "apply", map[string]*core.Variable{"inputs": x, "gate_inputs": gx, "mask": mask}, RecurrentOptions{Reverse: reverse})
		if err != nil {
			t.Fatal(err)
		}
		xv, gxv, mv := rnd(r, -1, 1, T, B, D), rnd(r, -1, 1, T, B, 2*D), randomMask(r, T, B)
		res := eval(t, []*core.Variable{x, gx, mask}, []*nd.Array{xv, gxv, mv}, outs...)
		U, G := g.StateToState.Value(), g.StateToGates.Value()
		h := make([][]float64, B)
		for b := range h {
			h[b] = append([]float64(nil), g.InitialState.Value().F64()...)
		}
		for s := 0; s < T; s++ {
			tt := s
			if reverse {
				tt = T - 1 - s
			}
			for b := 0; b < B; b++ {
				gates := make([]float64, 2*D)
				for j := range gates {
					a := gxv.F64()[(tt*B+b)*2*D+j]
					for i := 0; i < D; i++ {
						a += h[b][i] * at2(G, i, j)
					}
					gates[j] = sigm(a)
				}
				nh := make([]float64, D)
				for j := 0; j < D; j++ {
					a := xv.F64()[(tt*B+b)*D+j]
					for i := 0; i < D; i++ {
						a += h[b][i] * gates[D+i] * at2(U, i, j)
					}
					u := gates[j]
					nh[j] = math.Tanh(a)*u + h[b][j]*(1-u)
				}
				m := at2(mv, tt, b)
				for j := 0; j < D; j++ {
					h[b][j] = m*nh[j] + (1-m)*h[b][j]
					if got := res[0].F64()[(s*B+b)*D+j]; math.Abs(got-h[b][j]) > 1e-12 {
						t.Fatalf("reverse=%v states[%d,%d,%d] = %g, want %g", reverse, s, b, j, got, h[b][j])
					}
				}
			}
		}
	}
}

// gradCheck compares the gradient of cost = Σ w ⊙ build() with respect to
// the parameters of the brick and to the float inputs (given as shared
// variables) with central differences.
func gradCheck(t *testing.T, name string, params []*core.Variable, build func() []*core.Variable) {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	outs := build()
	f0, err := core.Compile(nil, outs, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	vals, err := f0.Call(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var cost *core.Variable
	for i, o := range outs {
		term := core.SumAll(core.Mul(o, core.NewConstant(rnd(r, 0.5, 1.5, vals[i].Shape...))))
		if cost == nil {
			cost = term
		} else {
			cost = core.Add(cost, term)
		}
	}
	grads, err := core.Grad(cost, params, core.GradOptions{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f, err := core.Compile(nil, append([]*core.Variable{cost}, grads...), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	res, err := f.Call(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	costAt := func() float64 {
		v, err := f.Call(nil)
		if err != nil {
			t.Fatal(err)
		}
		return v[0].Flat(0)
	}
	// Central differences, h = 1e-6: truncation O(h²) and rounding O(ε/h)
	// are both far below the 1e-6 relative tolerance.
	const h = 1e-6
	for k, p := range params {
		data := p.Value().F64()
		for i := range data {
			old := data[i]
			data[i] = old + h
			fp := costAt()
			data[i] = old - h
			fm := costAt()
			data[i] = old
			num := (fp - fm) / (2 * h)
			sym := res[1+k].Flat(i)
			if rel := math.Abs(num-sym) / math.Max(1e-3, math.Abs(num)+math.Abs(sym)); rel > 1e-6 {
				t.Errorf("%s: d/d%s[%d]: symbolic %.10g, numeric %.10g", name, p, i, sym, num)
			}
		}
	}
}

func TestRecurrentGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	cfg := NewConfig(nd.Float64, 1)
	const T, B, D = 4, 2, 3
	mask := core.NewConstant(nd.FromSlice([]float64{1, 1, 1, 1, 1, 0, 0, 0}, T, B))
	tanh, _ := NewActivation(cfg, "Tanh", "", 0)
	sr := NewSimpleRecurrent(cfg, "rnn", D, tanh)
	initRandom(t, sr, 3)
	x := core.NewShared(rnd(r, -1, 1, T, B, D), "x")
	gradCheck(t, "SimpleRecurrent", append(AllParameters(sr), x), func() []*core.Variable {
		out, err := ApplyRecurrent(sr, "apply", map[string]*core.Variable{"inputs": x, "mask": mask}, RecurrentOptions{ReturnInitialStates: true})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	l := NewLSTM(cfg, "lstm", D, nil, nil)
	initRandom(t, l, 4)
	x4 := core.NewShared(rnd(r, -1, 1, T, B, 4*D), "x4")
	for _, reverse := range []bool{false, true} {
		gradCheck(t, fmt.Sprintf("LSTM reverse=%v", reverse), append(AllParameters(l), x4), func() []*core.Variable {
			out, err := ApplyRecurrent(l, "apply", map[string]*core.Variable{"inputs": x4, "mask": mask}, RecurrentOptions{Reverse: reverse})
			if err != nil {
				t.Fatal(err)
			}
			return out
		})
	}
	g := NewGatedRecurrent(cfg, "gru", D, nil, nil)
	initRandom(t, g, 5)
	x2 := core.NewShared(rnd(r, -1, 1, T, B, 2*D), "x2")
	gradCheck(t, "GatedRecurrent", append(AllParameters(g), x, x2), func() []*core.Variable {
		out, err := ApplyRecurrent(g, "apply", map[string]*core.Variable{"inputs": x, "gate_inputs": x2, "mask": mask}, RecurrentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	// One step (iterate=False) with given states.
	h0 := core.NewShared(rnd(r, -1, 1, B, D), "h0")
	c0 := core.NewShared(rnd(r, -1, 1, B, D), "c0")
	x1 := core.NewShared(rnd(r, -1, 1, B, 4*D), "x1")
	gradCheck(t, "LSTM one step", append(AllParameters(l)[:4], x1, h0, c0), func() []*core.Variable {
		out, err := ApplyRecurrent(l, "apply", map[string]*core.Variable{"inputs": x1, "states": h0, "cells": c0}, RecurrentOptions{NoIterate: true})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	bi, err := NewBidirectional(cfg, "bidirectional", NewSimpleRecurrent(cfg, "p", D, tanh))
	if err != nil {
		t.Fatal(err)
	}
	initRandom(t, bi, 6)
	gradCheck(t, "Bidirectional", append(AllParameters(bi), x), func() []*core.Variable {
		out, err := bi.ApplyKeywords("apply", map[string]*core.Variable{"inputs": x, "mask": mask}, RecurrentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

// TestPaddedBatchMatchesOneByOne: sequences of lengths 5, 2 and 3, padded
// into one masked batch, give the per-sequence outputs and the gradients
// of running each sequence alone (summed), for an LSTM and a
// Bidirectional GRU.
func TestPaddedBatchMatchesOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	cfg := NewConfig(nd.Float64, 1)
	const D = 3
	lengths := []int{5, 2, 3}
	T, B := 5, len(lengths)
	l := NewLSTM(cfg, "lstm", D, nil, nil)
	initRandom(t, l, 7)
	bi, err := NewBidirectional(cfg, "bi", NewGatedRecurrent(cfg, "p", D, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	initRandom(t, bi, 8)
	type model struct {
		name   string
		params []*core.Variable
		in     int // input width
		apply  func(x, mask *core.Variable) *core.Variable
	}
	models := []model{
		{"LSTM", AllParameters(l), 4 * D, func(x, mask *core.Variable) *core.Variable {
			in := map[string]*core.Variable{"inputs": x}
			if mask != nil {
				in["mask"] = mask
			}
			out, err := ApplyRecurrent(l, "apply", in, RecurrentOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return out[0]
		}},
		{"Bidirectional GRU", AllParameters(bi), 3 * D, func(x, mask *core.Variable) *core.Variable {
			xi, _ := sliceLast(x, 0, D)
			xg, _ := core.Subtensor(x, []core.Index{{Slice: true}, {Slice: true}, {Slice: true, Start: ptr(D)}})
			in := map[string]*core.Variable{"inputs": xi, "gate_inputs": xg}
			if mask != nil {
				in["mask"] = mask
			}
			out, err := bi.ApplyKeywords("apply", in, RecurrentOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return out[0]
		}},
	}
	for _, m := range models {
		seqs := make([]*nd.Array, B)
		padded := nd.New(nd.Float64, T, B, m.in)
		maskv := nd.New(nd.Float64, T, B)
		for b, n := range lengths {
			seqs[b] = rnd(r, -1, 1, n, 1, m.in)
			for tt := 0; tt < n; tt++ {
				maskv.F64()[tt*B+b] = 1
				copy(padded.F64()[(tt*B+b)*m.in:(tt*B+b+1)*m.in], seqs[b].F64()[tt*m.in:(tt+1)*m.in])
			}
		}
		// Weights for the cost, one per (t, b, unit), zero where padded.
		outDim := D
		if m.name != "LSTM" {
			outDim = 2 * D
		}
		w := rnd(r, 0.5, 1.5, T, B, outDim)
		x := core.NewInput("x", nd.Float64, 3)
		mask := core.NewInput("mask", nd.Float64, 2)
		wv := core.NewInput("w", nd.Float64, 3)
		y := m.apply(x, mask)
		cost := core.SumAll(core.Mul(core.Mul(y, wv), mustDimshuffle(t, mask, 0, 1, -1)))
		grads, err := core.Grad(cost, m.params, core.GradOptions{})
		if err != nil {
			t.Fatal(err)
		}
		batch := eval(t, []*core.Variable{x, mask, wv}, []*nd.Array{padded, maskv, w}, append([]*core.Variable{y}, grads...)...)
		// One by one, without a mask.
		ys := m.apply(x, nil)
		cost1 := core.SumAll(core.Mul(ys, wv))
		grads1, err := core.Grad(cost1, m.params, core.GradOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := core.Compile([]*core.Variable{x, wv}, append([]*core.Variable{ys}, grads1...), nil)
		if err != nil {
			t.Fatal(err)
		}
		sum := make([]*nd.Array, len(m.params))
		for b, n := range lengths {
			wb := nd.New(nd.Float64, n, 1, outDim)
			for tt := 0; tt < n; tt++ {
				copy(wb.F64()[tt*outDim:(tt+1)*outDim], w.F64()[(tt*B+b)*outDim:(tt*B+b+1)*outDim])
			}
			res, err := f.Call([]*nd.Array{seqs[b], wb})
			if err != nil {
				t.Fatal(err)
			}
			for tt := 0; tt < n; tt++ {
				for j := 0; j < outDim; j++ {
					got := batch[0].F64()[(tt*B+b)*outDim+j]
					want := res[0].F64()[tt*outDim+j]
					if math.Abs(got-want) > 1e-12 {
						t.Fatalf("%s: sequence %d, step %d, unit %d: batch %g, alone %g", m.name, b, tt, j, got, want)
					}
				}
			}
			for k := range sum {
				if sum[k] == nil {
					sum[k] = res[1+k].Copy()
				} else {
					for i := range sum[k].F64() {
						sum[k].F64()[i] += res[1+k].F64()[i]
					}
				}
			}
		}
		for k, p := range m.params {
			for i := range sum[k].F64() {
				got, want := batch[1+k].F64()[i], sum[k].F64()[i]
				if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
					t.Fatalf("%s: gradient of %s[%d]: batch %g, one by one %g", m.name, ParameterPath(p), i, got, want)
				}
			}
		}
	}
}

func ptr(i int) *int { return &i }

func mustDimshuffle(t *testing.T, x *core.Variable, pat ...int) *core.Variable {
	y, err := core.Dimshuffle(x, pat)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

func TestLookupAndParallelGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	cfg := NewConfig(nd.Float64, 1)
	lt := NewLookupTable(cfg, "lookup", 5, 3)
	initRandom(t, lt, 9)
	idx := core.NewConstant(nd.FromSlice([]int64{4, 0, 4, 2}, 2, 2))
	gradCheck(t, "LookupTable", AllParameters(lt), func() []*core.Variable {
		y, err := Apply(lt, "apply", idx)
		if err != nil {
			t.Fatal(err)
		}
		return []*core.Variable{core.Sqr(y[0])}
	})
	x := core.NewShared(rnd(r, -1, 1, 3, 2, 4), "x")
	fork, err := NewFork(cfg, "fork", []string{"a", "b"}, 4, []int{2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fork.BiasesInit = initialization.Constant{Value: 0.1}
	initRandom(t, fork, 10)
	gradCheck(t, "Fork", append(AllParameters(fork), x), func() []*core.Variable {
		y, err := Apply(fork, "apply", x)
		if err != nil {
			t.Fatal(err)
		}
		return y
	})
	if n := fork.Children[1].BaseBrick().Name; n != "fork_b" {
		t.Errorf("fork child named %q, want fork_b", n)
	}
	y := core.NewShared(rnd(r, -1, 1, 3, 2, 2), "y")
	merge, err := NewMerge(cfg, "merge", []string{"x", "y"}, []int{4, 2}, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	initRandom(t, merge, 11)
	gradCheck(t, "Merge", append(AllParameters(merge), x, y), func() []*core.Variable {
		out, err := Apply(merge, "apply", x, y)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	dist, err := NewDistribute(cfg, "distribute", []string{"y"}, "x", []int{2}, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	initRandom(t, dist, 12)
	gradCheck(t, "Distribute", append(AllParameters(dist), x, y), func() []*core.Variable {
		out, err := Apply(dist, "apply", x, y)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

func TestRecurrentStackAndParallelGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	cfg := NewConfig(nd.Float64, 1)
	tanh, _ := NewActivation(cfg, "Tanh", "", 0)
	stack, err := NewRecurrentStack(cfg, "stack", []Brick{NewSimpleRecurrent(cfg, "rnn", 2, tanh), NewLSTM(cfg, "lstm", 2, nil, nil)}, nil, "states", true)
	if err != nil {
		t.Fatal(err)
	}
	initRandom(t, stack, 13)
	x := core.NewShared(rnd(r, -1, 1, 3, 2, 2), "x")
	x1 := core.NewShared(rnd(r, -1, 1, 3, 2, 8), "x1")
	mask := core.NewConstant(nd.FromSlice([]float64{1, 1, 1, 0, 1, 0}, 3, 2))
	gradCheck(t, "RecurrentStack", append(AllParameters(stack), x, x1), func() []*core.Variable {
		out, err := stack.ApplyKeywords("apply", map[string]*core.Variable{"inputs": x, "inputs#1": x1, "mask": mask}, RecurrentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	p, err := NewParallel(cfg, "parallel", []string{"a", "b"}, []int{2, 2}, []int{3, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.BiasesInit = initialization.Constant{Value: 0.2}
	initRandom(t, p, 14)
	gradCheck(t, "Parallel", append(AllParameters(p), x), func() []*core.Variable {
		out, err := Apply(p, "apply", x, x)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

// BenchmarkLSTMTrainingStep is one forward and backward pass of an LSTM
// (dim 100, inputs already 4·dim) over 50 steps of a batch of 32, float32.
func BenchmarkLSTMTrainingStep(b *testing.B) {
	cfg := NewConfig(nd.Float32, 1)
	l := NewLSTM(cfg, "lstm", 100, nil, nil)
	l.WeightsInit = initialization.IsotropicGaussian{Std: 0.1}
	if err := Initialize(l); err != nil {
		b.Fatal(err)
	}
	x := core.NewInput("x", nd.Float32, 3)
	out, err := ApplyRecurrent(l, "apply", map[string]*core.Variable{"inputs": x}, RecurrentOptions{})
	if err != nil {
		b.Fatal(err)
	}
	cost := core.SumAll(out[0])
	grads, err := core.Grad(cost, AllParameters(l), core.GradOptions{})
	if err != nil {
		b.Fatal(err)
	}
	f, err := core.Compile([]*core.Variable{x}, append([]*core.Variable{cost}, grads...), nil)
	if err != nil {
		b.Fatal(err)
	}
	xv := nd.New(nd.Float32, 50, 32, 400)
	for i := range xv.F32() {
		xv.F32()[i] = float32(i%7) * 0.01
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Call([]*nd.Array{xv}); err != nil {
			b.Fatal(err)
		}
	}
}
