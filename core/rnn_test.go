package core

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// The fused LSTM and GRU sequences (rnn.go) against the Scan of the
// bricks' step graph (the same expressions as bricks/recurrent.go's LSTM
// and GatedRecurrent steps) and against finite differences.

func maskVar(m *Variable) *Variable {
	md, _ := Dimshuffle(m, []int{0, -1})
	return md
}

func masked(m, next, prev *Variable) *Variable {
	if m == nil {
		return next
	}
	md := maskVar(m)
	return Add(Mul(md, next), Mul(Sub(Const(md.dtype, 1), md), prev))
}

// lstmScan is Blocks' LSTM step as a graph iterated by Scan.
func lstmScan(t testing.TB, x, h0, c0, w, wci, wcf, wco, mask *Variable, d int, reverse bool) (h, c *Variable) {
	seqs := []*Variable{x}
	if mask != nil {
		seqs = append(seqs, mask)
	}
	st, _, err := Scan(ScanSpec{Sequences: seqs, States: []*Variable{h0, c0}, Reverse: reverse},
		func(s, st, _ []*Variable) ([]*Variable, []*Variable, error) {
			hp, cp := st[0], st[1]
			hw, err := Dot(hp, w)
			if err != nil {
				return nil, nil, err
			}
			act := Add(hw, s[0])
			part := make([]*Variable, 4)
			for i := range part {
				part[i], _ = SliceLast(act, i*d, (i+1)*d)
			}
			in := Sigmoid(Add(part[0], Mul(cp, wci)))
			f := Sigmoid(Add(part[1], Mul(cp, wcf)))
			cand := Tanh(part[2])
			nc := Add(Mul(f, cp), Mul(in, cand))
			o := Sigmoid(Add(part[3], Mul(nc, wco)))
			nh := Mul(o, Tanh(nc))
			var m *Variable
			if len(s) > 1 {
				m = s[1]
			}
			return []*Variable{masked(m, nh, hp), masked(m, nc, cp)}, nil, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return st[0], st[1]
}

// gruScan is Blocks' GatedRecurrent step as a graph iterated by Scan.
func gruScan(t testing.TB, x, xg, h0, u, wg, mask *Variable, d int, reverse bool) *Variable {
	seqs := []*Variable{x, xg}
	if mask != nil {
		seqs = append(seqs, mask)
	}
	st, _, err := Scan(ScanSpec{Sequences: seqs, States: []*Variable{h0}, Reverse: reverse},
		func(s, st, _ []*Variable) ([]*Variable, []*Variable, error) {
			h := st[0]
			hg, err := Dot(h, wg)
			if err != nil {
				return nil, nil, err
			}
			gates := Sigmoid(Add(hg, s[1]))
			upd, _ := SliceLast(gates, 0, d)
			rst, _ := SliceLast(gates, d, 2*d)
			hr, err := Dot(Mul(h, rst), u)
			if err != nil {
				return nil, nil, err
			}
			n := Tanh(Add(hr, s[0]))
			next := Add(Mul(n, upd), Mul(h, Sub(Const(upd.dtype, 1), upd)))
			var m *Variable
			if len(s) > 2 {
				m = s[2]
			}
			return []*Variable{masked(m, next, h)}, nil, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return st[0]
}

func rnnRand(r *rand.Rand, dt nd.DType, scale float64, shape ...int) *nd.Array {
	a := nd.New(dt, shape...)
	for i := range a.Size() {
		a.SetFlat(i, scale*(2*r.Float64()-1))
	}
	return a
}

func randMask(r *rand.Rand, dt nd.DType, T, B int) *nd.Array {
	m := nd.New(dt, T, B)
	for i := range m.Size() {
		if r.IntN(4) != 0 {
			m.SetFlat(i, 1)
		}
	}
	return m
}

type rnnCase struct {
	name    string
	gru     bool
	mask    bool
	reverse bool
}

var rnnCases = []rnnCase{
	{"lstm", false, false, false}, {"lstm/mask", false, true, false}, {"lstm/mask/reverse", false, true, true},
	{"gru", true, false, false}, {"gru/mask", true, true, false}, {"gru/reverse", true, false, true},
}

// rnnGraphs builds, for one case, the fused and the scanned outputs, a
// cost Σ out·R (R fixed random weights of every output), the inputs and
// random values for them.
func rnnGraphs(t testing.TB, c rnnCase, dt nd.DType, T, B, d int, seed uint64) (ins []*Variable, vals []*nd.Array, fused, scanned []*Variable) {
	r := rand.New(rand.NewPCG(seed, 1))
	in := func(name string, scale float64, shape ...int) *Variable {
		v := NewInput(name, dt, len(shape))
		ins = append(ins, v)
		vals = append(vals, rnnRand(r, dt, scale, shape...))
		return v
	}
	var mask *Variable
	if c.gru {
		x, xg, h0 := in("x", 1, T, B, d), in("xg", 1, T, B, 2*d), in("h0", 0.5, B, d)
		u, wg := in("u", 0.7, d, d), in("wg", 0.7, d, 2*d)
		if c.mask {
			mask = in("mask", 1, T, B)
			vals[len(vals)-1] = randMask(r, dt, T, B)
		}
		h, err := GRUSequence(x, xg, h0, u, wg, mask, c.reverse)
		if err != nil {
			t.Fatal(err)
		}
		return ins, vals, []*Variable{h}, []*Variable{gruScan(t, x, xg, h0, u, wg, mask, d, c.reverse)}
	}
	x, h0, c0 := in("x", 1, T, B, 4*d), in("h0", 0.5, B, d), in("c0", 0.5, B, d)
	w, wci, wcf, wco := in("w", 0.7, d, 4*d), in("wci", 0.7, d), in("wcf", 0.7, d), in("wco", 0.7, d)
	if c.mask {
		mask = in("mask", 1, T, B)
		vals[len(vals)-1] = randMask(r, dt, T, B)
	}
	h, cc, err := LSTMSequence(x, h0, c0, w, wci, wcf, wco, mask, c.reverse)
	if err != nil {
		t.Fatal(err)
	}
	sh, sc := lstmScan(t, x, h0, c0, w, wci, wcf, wco, mask, d, c.reverse)
	return ins, vals, []*Variable{h, cc}, []*Variable{sh, sc}
}

func weightedCost(t testing.TB, outs []*Variable, seed uint64, T, B, d int) *Variable {
	r := rand.New(rand.NewPCG(seed, 7))
	var cost *Variable
	for _, o := range outs {
		w := NewShared(rnnRand(r, o.dtype, 1, T, B, d), "R")
		s, err := Sum(Mul(o, w), nil, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cost == nil {
			cost = s
		} else {
			cost = Add(cost, s)
		}
	}
	return cost
}

// rnnSizes are the sizes the fused sequences are tested at: a small batch
// (one sequence) and one split by rows (rnn_split.go; the thresholds
// lowered by splitSmallRNNs), in two uneven row blocks.
var rnnSizes = []struct{ T, B, d int }{{5, 3, 4}, {4, 19, 3}, {2, 32, 256}}

// splitSmallRNNs makes every fused sequence of 16 rows or more split by
// rows, for the rest of the test.
func splitSmallRNNs(t *testing.T) {
	work, w := rnnMinSplitWork, rnnMaxSplitWeights
	rnnMinSplitWork, rnnMaxSplitWeights = 0, 1<<30
	t.Cleanup(func() { rnnMinSplitWork, rnnMaxSplitWeights = work, w })
}

// TestFusedRNNMatchesScan: the fused forward pass gives the scan's bits
// (float32 and float64, with and without a mask, forward and reversed, in
// one sequence or split by rows), and its gradients agree with the scan's
// to rounding; a split sequence gives the same bits run in parallel or
// serially.
func TestFusedRNNMatchesScan(t *testing.T) {
	splitSmallRNNs(t)
	for _, sz := range rnnSizes {
		T, B, d := sz.T, sz.B, sz.d
		if B >= rnnMinSplitRows && rnnRowParts(T, B, d*d) != 2 {
			t.Fatalf("%d rows do not split", B)
		}
		for _, c := range rnnCases {
			for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
				t.Run(fmt.Sprintf("%s/%s/B=%d", c.name, dt, B), func(t *testing.T) {
					testFusedMatchesScan(t, c, dt, T, B, d)
				})
			}
		}
	}
}

func testFusedMatchesScan(t *testing.T, c rnnCase, dt nd.DType, T, B, d int) {
	ins, vals, fused, scanned := rnnGraphs(t, c, dt, T, B, d, 3)
	f, err := Compile(ins, append(append([]*Variable(nil), fused...), scanned...), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Call(vals)
	if err != nil {
		t.Fatal(err)
	}
	k := len(fused)
	for i := range k {
		for j := range out[i].Size() {
			if a, b := out[i].Flat(j), out[k+i].Flat(j); a != b {
				t.Fatalf("output %d element %d: fused %v, scan %v", i, j, a, b)
			}
		}
	}
	var wrt []*Variable
	for _, v := range ins {
		if v.Name != "mask" {
			wrt = append(wrt, v)
		}
	}
	gf, err := Grad(weightedCost(t, fused, 5, T, B, d), wrt, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := Grad(weightedCost(t, scanned, 5, T, B, d), wrt, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(ins, append(gf, gs...), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Call(vals)
	if err != nil {
		t.Fatal(err)
	}
	tol := 1e-12
	if dt == nd.Float32 {
		tol = 2e-5
	}
	for i := range wrt {
		a, b := res[i], res[len(wrt)+i]
		for j := range a.Size() {
			if x, y := a.Flat(j), b.Flat(j); math.Abs(x-y) > tol*(1+math.Abs(y)) {
				t.Fatalf("gradient of %s element %d: fused %v, scan %v", wrt[i], j, x, y)
			}
		}
	}
	// The same again with every split run serially: the same bits.
	defer kernels.SetSerial(kernels.SetSerial(true))
	again, err := g.Call(vals)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wrt {
		for j := range res[i].Size() {
			if x, y := res[i].Flat(j), again[i].Flat(j); x != y {
				t.Fatalf("gradient of %s element %d: %v in parallel, %v serially", wrt[i], j, x, y)
			}
		}
	}
}

// TestFusedRNNGradient checks the fused sequences' gradients in float64
// against central finite differences of the cost.
func TestFusedRNNGradient(t *testing.T) {
	splitSmallRNNs(t)
	for _, sz := range []struct{ T, B, d int }{{4, 2, 3}, {3, 17, 2}} {
		for _, c := range rnnCases {
			t.Run(fmt.Sprintf("%s/B=%d", c.name, sz.B), func(t *testing.T) {
				testFusedGradient(t, c, sz.T, sz.B, sz.d)
			})
		}
	}
}

func testFusedGradient(t *testing.T, c rnnCase, T, B, d int) {
	ins, vals, fused, _ := rnnGraphs(t, c, nd.Float64, T, B, d, 11)
	cost := weightedCost(t, fused, 13, T, B, d)
	var wrt []*Variable
	for _, v := range ins {
		if v.Name != "mask" {
			wrt = append(wrt, v)
		}
	}
	gs, err := Grad(cost, wrt, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(ins, gs, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := Compile(ins, []*Variable{cost}, nil)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := g.Call(vals)
	if err != nil {
		t.Fatal(err)
	}
	eval := func() float64 {
		out, err := fc.Call(vals)
		if err != nil {
			t.Fatal(err)
		}
		return out[0].Flat(0)
	}
	const eps = 1e-6
	for i := range wrt {
		a := vals[i]
		for j := range a.Size() {
			v := a.Flat(j)
			a.SetFlat(j, v+eps)
			up := eval()
			a.SetFlat(j, v-eps)
			down := eval()
			a.SetFlat(j, v)
			num := (up - down) / (2 * eps)
			if got := grads[i].Flat(j); math.Abs(got-num) > 1e-6*(1+math.Abs(num)) {
				t.Fatalf("d cost / d %s[%d]: %v, finite differences %v", wrt[i], j, got, num)
			}
		}
	}
}

// TestFusedRNNBadShapes: shapes that do not fit are errors naming what was
// expected.
func TestFusedRNNBadShapes(t *testing.T) {
	x := NewInput("x", nd.Float32, 3)
	h0 := NewInput("h0", nd.Float32, 2)
	c0 := NewInput("c0", nd.Float32, 2)
	w := NewInput("w", nd.Float32, 2)
	p := NewInput("p", nd.Float32, 1)
	h, _, err := LSTMSequence(x, h0, c0, w, p, p, p, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Compile([]*Variable{x, h0, c0, w, p}, []*Variable{h}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Call([]*nd.Array{nd.New(nd.Float32, 2, 3, 8), nd.New(nd.Float32, 3, 2), nd.New(nd.Float32, 3, 2),
		nd.New(nd.Float32, 2, 7), nd.New(nd.Float32, 2)})
	if err == nil || !contains(err.Error(), "want (2, 8)") {
		t.Fatalf("want a shape error naming (2, 8), got %v", err)
	}
	if _, _, err := LSTMSequence(x, h0, c0, w, p, p, p, NewInput("m", nd.Float32, 1), false); err == nil {
		t.Fatal("a 1-d mask was accepted")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
