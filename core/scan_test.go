package core_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// rnnStep is h' = tanh(x W + h U), o = h' * 2 + c (c a context).
func rnnScan(t *testing.T, x, h0, W, U, c, mask *Variable, reverse bool) (states, outs []*Variable) {
	t.Helper()
	seqs := []*Variable{x}
	if mask != nil {
		seqs = append(seqs, mask)
	}
	states, outs, err := Scan(ScanSpec{Sequences: seqs, States: []*Variable{h0}, Contexts: []*Variable{c}, Reverse: reverse},
		func(s, st, ctx []*Variable) ([]*Variable, []*Variable, error) {
			xw, err := Dot(s[0], W)
			if err != nil {
				return nil, nil, err
			}
			hu, err := Dot(st[0], U)
			if err != nil {
				return nil, nil, err
			}
			h := Tanh(Add(xw, hu))
			if len(s) > 1 {
				m, err := Dimshuffle(s[1], []int{0, -1})
				if err != nil {
					return nil, nil, err
				}
				h = Add(Mul(m, h), Mul(Sub(Const(m.DType(), 1), m), st[0]))
			}
			return []*Variable{h}, []*Variable{Add(Mul(h, Const(h.DType(), 2)), ctx[0])}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return states, outs
}

// refRNN is the same recurrence as nested loops in float64.
func refRNN(x [][][]float64, h0 [][]float64, W, U [][]float64, mask [][]float64, reverse bool) [][][]float64 {
	T := len(x)
	out := make([][][]float64, T)
	h := h0
	for s := 0; s < T; s++ {
		t := s
		if reverse {
			t = T - 1 - s
		}
		nh := make([][]float64, len(h))
		for b := range h {
			nh[b] = make([]float64, len(h[b]))
			for j := range nh[b] {
				var a float64
				for i := range x[t][b] {
					a += x[t][b][i] * W[i][j]
				}
				for i := range h[b] {
					a += h[b][i] * U[i][j]
				}
				nh[b][j] = math.Tanh(a)
				if mask != nil {
					m := mask[t][b]
					nh[b][j] = m*nh[b][j] + (1-m)*h[b][j]
				}
			}
		}
		out[s] = nh
		h = nh
	}
	return out
}

func to3(a *nd.Array) [][][]float64 {
	out := make([][][]float64, a.Shape[0])
	for i := range out {
		out[i] = make([][]float64, a.Shape[1])
		for j := range out[i] {
			out[i][j] = make([]float64, a.Shape[2])
			for k := range out[i][j] {
				out[i][j][k] = a.Flat((i*a.Shape[1]+j)*a.Shape[2] + k)
			}
		}
	}
	return out
}

func to2(a *nd.Array) [][]float64 {
	out := make([][]float64, a.Shape[0])
	for i := range out {
		out[i] = make([]float64, a.Shape[1])
		for j := range out[i] {
			out[i][j] = a.Flat(i*a.Shape[1] + j)
		}
	}
	return out
}

func TestScanForwardMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const B, D, H = 2, 3, 4
	Wv, Uv := randArray(r, -0.5, 0.5, D, H), randArray(r, -0.5, 0.5, H, H)
	W, U := NewShared(Wv, "W"), NewShared(Uv, "U")
	x := NewInput("x", nd.Float64, 3)
	mask := NewInput("mask", nd.Float64, 2)
	h0 := NewInput("h0", nd.Float64, 2)
	c := NewInput("c", nd.Float64, 2)
	for _, reverse := range []bool{false, true} {
		states, outs := rnnScan(t, x, h0, W, U, c, mask, reverse)
		f, err := Compile([]*Variable{x, mask, h0, c}, []*Variable{states[0], outs[0]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Several lengths through one function: the step is planned once.
		for _, T := range []int{1, 5, 3, 0} {
			xv := randArray(r, -1, 1, T, B, D)
			mv := nd.New(nd.Float64, T, B)
			for i := range mv.F64() {
				if r.Float64() < 0.7 {
					mv.F64()[i] = 1
				}
			}
			h0v, cv := randArray(r, -1, 1, B, H), randArray(r, -1, 1, B, H)
			res, err := f.Call([]*nd.Array{xv, mv, h0v, cv})
			if err != nil {
				t.Fatal(err)
			}
			if !nd.SameShape(res[0].Shape, []int{T, B, H}) {
				t.Fatalf("T=%d: states shape %v", T, res[0].Shape)
			}
			want := refRNN(to3(xv), to2(h0v), to2(Wv), to2(Uv), to2(mv), reverse)
			for s := range want {
				for b := range want[s] {
					for j := range want[s][b] {
						got := res[0].Flat((s*B+b)*H + j)
						if math.Abs(got-want[s][b][j]) > 1e-12 {
							t.Fatalf("reverse=%v T=%d h[%d,%d,%d] = %g, want %g", reverse, T, s, b, j, got, want[s][b][j])
						}
						o := res[1].Flat((s*B+b)*H + j)
						if wo := 2*want[s][b][j] + cv.Flat(b*H+j); math.Abs(o-wo) > 1e-12 {
							t.Fatalf("output[%d,%d,%d] = %g, want %g", s, b, j, o, wo)
						}
					}
				}
			}
		}
		if n := ScanStepPlans(states[0].Inputs()[0]); n != 1 {
			t.Errorf("the step was planned %d times for one batch shape, want 1", n)
		}
	}
}

func TestScanGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const T, B, D, H = 4, 2, 3, 3
	for _, reverse := range []bool{false, true} {
		mv := nd.FromSlice([]float64{1, 1, 1, 1, 1, 0, 0, 0}, T, B)
		checkGrad(t, "scan", func(xs []*Variable) *Variable {
			// xs: x, h0, W, U, c; the context is used through a value
			// computed outside the loop (c*3) and the mask is a constant.
			c3 := Mul(xs[4], Const(nd.Float64, 3))
			states, outs := rnnScan(t, xs[0], xs[1], xs[2], xs[3], c3, NewConstant(mv), reverse)
			// Use both outputs and the last state.
			last, err := Subtensor(states[0], []Index{{I: -1}})
			if err != nil {
				t.Fatal(err)
			}
			return Add(Add(SumAll(Mul(outs[0], outs[0])), SumAll(states[0])), SumAll(Mul(last, last)))
		}, randArray(r, -1, 1, T, B, D), randArray(r, -1, 1, B, H), randArray(r, -0.7, 0.7, D, H),
			randArray(r, -0.7, 0.7, H, H), randArray(r, -1, 1, B, H))
	}
}

// TestScanTwoStates: an LSTM-like pair of states where one state feeds the
// other, and a state that is returned unchanged.
func TestScanTwoStates(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const T, B, H = 3, 2, 2
	checkGrad(t, "scan2", func(xs []*Variable) *Variable {
		states, _, err := Scan(ScanSpec{Sequences: []*Variable{xs[0]}, States: []*Variable{xs[1], xs[2], xs[3]}},
			func(s, st, _ []*Variable) ([]*Variable, []*Variable, error) {
				c := Add(Mul(Sigmoid(st[0]), st[1]), Tanh(s[0]))
				h := Mul(Tanh(c), Sigmoid(Add(s[0], st[0])))
				return []*Variable{h, c, st[2]}, nil, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		return Add(Add(SumAll(Sqr(states[0])), SumAll(states[1])), SumAll(Mul(states[2], states[2])))
	}, randArray(r, -1, 1, T, B, H), randArray(r, -1, 1, B, H), randArray(r, -1, 1, B, H), randArray(r, -1, 1, B, H))
}

func TestScanErrors(t *testing.T) {
	x := NewInput("x", nd.Float64, 3)
	h0 := NewInput("h0", nd.Float64, 2)
	_, _, err := Scan(ScanSpec{States: []*Variable{h0}}, nil) // no sequence, no NSteps
	if err == nil {
		t.Error("a scan without sequences was accepted")
	}
	_, _, err = Scan(ScanSpec{Sequences: []*Variable{x}, States: []*Variable{h0}},
		func(s, st, _ []*Variable) ([]*Variable, []*Variable, error) {
			return []*Variable{s[0]}, nil, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// A state whose shape the step changes is reported when planned.
	W := NewShared(nd.New(nd.Float64, 2, 3), "W")
	states, _, err := Scan(ScanSpec{Sequences: []*Variable{x}, States: []*Variable{h0}},
		func(s, st, _ []*Variable) ([]*Variable, []*Variable, error) {
			y, err := Dot(st[0], W)
			return []*Variable{y}, nil, err
		})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Compile([]*Variable{x, h0}, states, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Call([]*nd.Array{nd.New(nd.Float64, 2, 1, 2), nd.New(nd.Float64, 1, 2)})
	if err == nil {
		t.Error("a state changing shape was accepted")
	}
}

func TestScanSupportOps(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	idx := NewConstant(nd.FromSlice([]int64{2, 0, 2, 1, 3, 2}, 2, 3))
	checkGrad(t, "DotND", func(xs []*Variable) *Variable {
		y, err := DotND(xs[0], xs[1])
		if err != nil {
			t.Fatal(err)
		}
		return y
	}, randArray(r, -1, 1, 3, 2, 4), randArray(r, -1, 1, 4, 5))
	for _, axis := range []int{0, 1, 2} {
		checkGrad(t, "Concatenate", func(xs []*Variable) *Variable {
			y, err := Concatenate(xs, axis)
			if err != nil {
				t.Fatal(err)
			}
			return Sqr(y)
		}, randArray(r, -1, 1, 2, 3, 2), randArray(r, -1, 1, 2, 3, 2))
	}
	checkGrad(t, "Take", func(xs []*Variable) *Variable {
		y, err := Take(xs[0], idx)
		if err != nil {
			t.Fatal(err)
		}
		return Sqr(y)
	}, randArray(r, -1, 1, 4, 3))
	checkGrad(t, "RepeatLike", func(xs []*Variable) *Variable {
		y, err := RepeatLike(xs[0], idx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return Sqr(y)
	}, randArray(r, -1, 1, 4))
	// Values: concatenation on the last axis and a lookup.
	a := NewConstant(nd.FromSlice([]float64{1, 2, 3, 4}, 2, 2))
	b := NewConstant(nd.FromSlice([]float64{5, 6}, 2, 1))
	c, _ := Concatenate([]*Variable{a, b}, -1)
	tk, _ := Take(a, NewConstant(nd.FromSlice([]int64{1, 1, 0})))
	f, err := Compile(nil, []*Variable{c, tk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Call(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0].Float64s(); fmt.Sprint(got) != "[1 2 5 3 4 6]" {
		t.Errorf("concatenate = %v", got)
	}
	if got := res[1].Float64s(); fmt.Sprint(got) != "[3 4 3 4 1 2]" {
		t.Errorf("take = %v", got)
	}
	bad, _ := Take(a, NewConstant(nd.FromSlice([]int64{2})))
	f, _ = Compile(nil, []*Variable{bad}, nil)
	if _, err := f.Call(nil); err == nil {
		t.Error("an index outside the table was accepted")
	}
}

func TestSliceLast(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	checkGrad(t, "SliceLast", func(xs []*Variable) *Variable {
		y, err := SliceLast(xs[0], 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		return Sqr(y)
	}, randArray(r, -1, 1, 2, 3, 4))
}

// TestScanNSteps: without sequences the loop runs NSteps times (a power
// iteration h ← tanh(h·W)), and gradients flow to W and h0.
func TestScanNSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	checkGrad(t, "scan n_steps", func(xs []*Variable) *Variable {
		states, _, err := Scan(ScanSpec{States: []*Variable{xs[0]}, NSteps: 4},
			func(_, st, _ []*Variable) ([]*Variable, []*Variable, error) {
				y, err := Dot(st[0], xs[1])
				return []*Variable{Tanh(y)}, nil, err
			})
		if err != nil {
			t.Fatal(err)
		}
		return states[0]
	}, randArray(r, -1, 1, 2, 3), randArray(r, -1, 1, 3, 3))
}
