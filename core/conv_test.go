package core_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// refConv is the direct definition of Theano's conv2d, in nested loops:
// out[n,f,i,j] = Σ_{c,a,b} x[n, c, i·sh+a−ph, j·sw+b−pw] · w[f, c, a', b'],
// with (a', b') = (kh−1−a, kw−1−b) for a true (flipped) convolution.
func refConv(x, w *nd.Array, sh, sw, ph, pw int, flip bool) *nd.Array {
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	F, KH, KW := w.Shape[0], w.Shape[2], w.Shape[3]
	OH, OW := (H+2*ph-KH)/sh+1, (W+2*pw-KW)/sw+1
	out := nd.New(nd.Float64, N, F, OH, OW)
	for n := 0; n < N; n++ {
		for f := 0; f < F; f++ {
			for i := 0; i < OH; i++ {
				for j := 0; j < OW; j++ {
					s := 0.0
					for c := 0; c < C; c++ {
						for a := 0; a < KH; a++ {
							for b := 0; b < KW; b++ {
								y, xx := i*sh+a-ph, j*sw+b-pw
								if y < 0 || y >= H || xx < 0 || xx >= W {
									continue
								}
								fa, fb := a, b
								if flip {
									fa, fb = KH-1-a, KW-1-b
								}
								s += x.Flat(((n*C+c)*H+y)*W+xx) * w.Flat(((f*C+c)*KH+fa)*KW+fb)
							}
						}
					}
					out.SetFlat(((n*F+f)*OH+i)*OW+j, s)
				}
			}
		}
	}
	return out
}

// refPool follows Theano's Pool.perform: pad with zeros, then for every
// output the window in padded coordinates, clipped to the padded image
// (average_inc_pad) or to the real image (the other modes).
func refPool(x *nd.Array, o PoolOptions) *nd.Array {
	s := x.Shape
	d := len(s)
	H, W := s[d-2], s[d-1]
	planes := x.Size() / (H * W)
	ph, pw := o.Pad[0], o.Pad[1]
	R, Cc := H+2*ph, W+2*pw
	outN := func(r, ws, st int) int {
		if o.IgnoreBorder {
			return (r-ws)/st + 1
		}
		if st >= ws {
			return (r-1)/st + 1
		}
		return max(0, (r-1-ws+st)/st) + 1
	}
	OH, OW := outN(R, o.Size[0], o.Step[0]), outN(Cc, o.Size[1], o.Step[1])
	shape := append(append([]int(nil), s[:d-2]...), OH, OW)
	out := nd.New(nd.Float64, shape...)
	for p := 0; p < planes; p++ {
		padded := make([]float64, R*Cc)
		for y := 0; y < H; y++ {
			for xx := 0; xx < W; xx++ {
				padded[(y+ph)*Cc+xx+pw] = x.Flat(p*H*W + y*W + xx)
			}
		}
		for i := 0; i < OH; i++ {
			for j := 0; j < OW; j++ {
				r0, c0 := i*o.Step[0], j*o.Step[1]
				r1, c1 := min(r0+o.Size[0], R), min(c0+o.Size[1], Cc)
				if o.Mode != PoolAverageInc {
					r0, c0 = max(r0, ph), max(c0, pw)
					r1, c1 = min(r1, H+ph), min(c1, W+pw)
				}
				m, sum := math.Inf(-1), 0.0
				for r := r0; r < r1; r++ {
					for c := c0; c < c1; c++ {
						m = math.Max(m, padded[r*Cc+c])
						sum += padded[r*Cc+c]
					}
				}
				v := m
				switch o.Mode {
				case PoolSum:
					v = sum
				case PoolAverageInc, PoolAverageExc:
					v = sum / float64((r1-r0)*(c1-c0))
				}
				out.SetFlat((p*OH+i)*OW+j, v)
			}
		}
	}
	return out
}

// checkGradConv is checkGrad with h = 1e-4 and a floor of 1e-2 on the
// scale of the relative error: the costs here sum hundreds of products, so
// the rounding error of a central difference, ε·|cost|/h, is no longer
// small against checkGrad's 1e-3 floor for tiny gradient entries; and
// convolutions are bilinear and pooling piecewise linear (no maximum
// switches within ±h for random entries, whose gaps are ~1e-2), so the
// truncation error of the larger h is nil.
func checkGradConv(t *testing.T, name string, f func(xs []*Variable) *Variable, vals ...*nd.Array) {
	t.Helper()
	checkGradWith(t, name, 1e-4, 1e-2, f, vals...)
}

func compareArrays(t *testing.T, name string, got, want *nd.Array, tol float64) {
	t.Helper()
	if !nd.SameShape(got.Shape, want.Shape) {
		t.Fatalf("%s: shape %v, want %v", name, got.Shape, want.Shape)
	}
	for i := 0; i < want.Size(); i++ {
		if d := math.Abs(got.Flat(i) - want.Flat(i)); d > tol*(1+math.Abs(want.Flat(i))) {
			t.Fatalf("%s: entry %d is %.10g, want %.10g", name, i, got.Flat(i), want.Flat(i))
		}
	}
}

func eval(t *testing.T, v *Variable, inputs []*Variable, args []*nd.Array) *nd.Array {
	t.Helper()
	f, err := Compile(inputs, []*Variable{v}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Call(args)
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

type convCase struct {
	xs, ws []int
	step   [2]int
	border Border
	flip   bool
}

var convCases = []convCase{
	{[]int{2, 3, 7, 6}, []int{4, 3, 3, 2}, [2]int{1, 1}, Border{Mode: "valid"}, true},
	{[]int{2, 3, 7, 6}, []int{4, 3, 3, 2}, [2]int{1, 1}, Border{Mode: "full"}, true},
	{[]int{2, 3, 7, 6}, []int{4, 3, 3, 3}, [2]int{1, 1}, Border{Mode: "half"}, true},
	{[]int{2, 3, 7, 6}, []int{4, 3, 3, 2}, [2]int{1, 1}, Border{Pad: [2]int{1, 2}}, true},
	{[]int{3, 2, 8, 9}, []int{2, 2, 3, 3}, [2]int{2, 3}, Border{Mode: "valid"}, true},
	{[]int{3, 2, 8, 9}, []int{2, 2, 3, 2}, [2]int{2, 2}, Border{Mode: "full"}, true},
	{[]int{3, 2, 8, 9}, []int{2, 2, 3, 3}, [2]int{3, 2}, Border{Pad: [2]int{2, 1}}, false},
	{[]int{11, 1, 5, 5}, []int{3, 1, 5, 5}, [2]int{1, 1}, Border{Mode: "valid"}, true},
}

func TestConv2dMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
		for k, c := range convCases {
			x64, w64 := randArray(r, -1, 1, c.xs...), randArray(r, -1, 1, c.ws...)
			x, w := NewInput("x", dt, 4), NewInput("w", dt, 4)
			y, err := Conv2d(x, w, Conv2dOptions{Step: c.step, Border: c.border, NoFlip: !c.flip})
			if err != nil {
				t.Fatal(err)
			}
			got := eval(t, y, []*Variable{x, w}, []*nd.Array{x64.Astype(dt), w64.Astype(dt)})
			ph, pw := c.border.Pads(c.ws[2], c.ws[3])
			want := refConv(x64, w64, c.step[0], c.step[1], ph, pw, c.flip)
			// float32: products of 54 terms of size ≤ 1, rounding ~1e-7 each.
			tol := 1e-12
			if dt == nd.Float32 {
				tol = 1e-5
			}
			compareArrays(t, fmt.Sprintf("case %d %s", k, dt), got, want, tol)
		}
	}
}

func TestConv2dGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for k, c := range convCases[:7] {
		opts := Conv2dOptions{Step: c.step, Border: c.border, NoFlip: !c.flip}
		checkGradConv(t, fmt.Sprintf("conv2d case %d", k), func(v []*Variable) *Variable {
			return mustVar(Conv2d(v[0], v[1], opts))
		}, randArray(r, -1, 1, c.xs...), randArray(r, -1, 1, c.ws...))
	}
}

// The transposed convolution (gradient with respect to the images) is the
// adjoint of conv2d: ⟨conv(x, W), z⟩ = ⟨x, convT(z, W)⟩, and its own
// gradients (conv2d and the filters' gradient) pass the check.
func TestConv2dTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for k, c := range convCases[:7] {
		opts := Conv2dOptions{Step: c.step, Border: c.border, NoFlip: !c.flip}
		x64, w64 := randArray(r, -1, 1, c.xs...), randArray(r, -1, 1, c.ws...)
		ph, pw := c.border.Pads(c.ws[2], c.ws[3])
		y := refConv(x64, w64, c.step[0], c.step[1], ph, pw, c.flip)
		z64 := randArray(r, -1, 1, y.Shape...)
		zv, wv := NewInput("z", nd.Float64, 4), NewInput("w", nd.Float64, 4)
		xt := mustVar(Conv2dGradInputs(zv, wv, [2]int{c.xs[2], c.xs[3]}, opts))
		xtv := eval(t, xt, []*Variable{zv, wv}, []*nd.Array{z64, w64})
		lhs, rhs := 0.0, 0.0
		for i := 0; i < y.Size(); i++ {
			lhs += y.Flat(i) * z64.Flat(i)
		}
		for i := 0; i < x64.Size(); i++ {
			rhs += x64.Flat(i) * xtv.Flat(i)
		}
		if math.Abs(lhs-rhs) > 1e-10*(1+math.Abs(lhs)) {
			t.Errorf("case %d: <conv(x,W), z> = %.12g but <x, convT(z,W)> = %.12g", k, lhs, rhs)
		}
		size := [2]int{c.xs[2], c.xs[3]}
		checkGradConv(t, fmt.Sprintf("conv2d transpose case %d", k), func(v []*Variable) *Variable {
			return mustVar(Conv2dGradInputs(v[0], v[1], size, opts))
		}, z64, w64)
		// The filters' gradient op, differentiated itself.
		checkGradConv(t, fmt.Sprintf("conv2d grad weights case %d", k), func(v []*Variable) *Variable {
			wl := NewConstant(w64)
			return Conv2dGradWeights(v[0], v[1], wl, opts)
		}, x64, z64)
	}
}

var poolCases = []PoolOptions{
	{Size: [2]int{2, 2}, IgnoreBorder: true, Mode: PoolMax},
	{Size: [2]int{2, 2}, IgnoreBorder: false, Mode: PoolMax},
	{Size: [2]int{3, 2}, Step: [2]int{2, 1}, IgnoreBorder: false, Mode: PoolMax},
	{Size: [2]int{3, 3}, Step: [2]int{2, 2}, Pad: [2]int{1, 2}, IgnoreBorder: true, Mode: PoolMax},
	{Size: [2]int{2, 3}, IgnoreBorder: true, Mode: PoolAverageExc},
	{Size: [2]int{2, 3}, IgnoreBorder: false, Mode: PoolAverageExc},
	{Size: [2]int{3, 3}, Step: [2]int{1, 2}, Pad: [2]int{2, 1}, IgnoreBorder: true, Mode: PoolAverageExc},
	{Size: [2]int{3, 3}, Step: [2]int{1, 2}, Pad: [2]int{2, 1}, IgnoreBorder: true, Mode: PoolAverageInc},
	{Size: [2]int{2, 2}, Step: [2]int{3, 1}, IgnoreBorder: false, Mode: PoolAverageInc},
	{Size: [2]int{2, 2}, IgnoreBorder: false, Mode: PoolSum},
}

func TestPoolMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for k, o := range poolCases {
		for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
			x64 := randArray(r, -1, 1, 2, 3, 7, 5)
			x := NewInput("x", dt, 4)
			y := mustVar(Pool2d(x, o))
			got := eval(t, y, []*Variable{x}, []*nd.Array{x64.Astype(dt)})
			oo := o
			if oo.Step == [2]int{} {
				oo.Step = oo.Size
			}
			want := refPool(x64, oo)
			tol := 1e-12
			if dt == nd.Float32 {
				tol = 1e-6
			}
			compareArrays(t, fmt.Sprintf("pool case %d %s", k, dt), got, want, tol)
		}
	}
	// Any number of leading axes.
	x64 := randArray(r, -1, 1, 4, 6)
	x := NewInput("x", nd.Float64, 2)
	got := eval(t, mustVar(Pool2d(x, poolCases[1])), []*Variable{x}, []*nd.Array{x64})
	compareArrays(t, "2-d pooling", got, refPool(x64, PoolOptions{Size: [2]int{2, 2}, Step: [2]int{2, 2}, Mode: PoolMax}), 0)
}

func TestPoolGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for k, o := range poolCases {
		checkGradConv(t, fmt.Sprintf("pool case %d", k), func(v []*Variable) *Variable {
			return mustVar(Pool2d(v[0], o))
		}, randArray(r, -1, 1, 2, 2, 7, 5))
	}
}

func TestPoolErrors(t *testing.T) {
	x := NewInput("x", nd.Float32, 4)
	if _, err := Pool2d(x, PoolOptions{Size: [2]int{2, 2}, Pad: [2]int{1, 1}}); err == nil {
		t.Error("padding without ignore_border was accepted")
	}
	if _, err := Pool2d(x, PoolOptions{Size: [2]int{2, 2}, Pad: [2]int{2, 0}, IgnoreBorder: true}); err == nil {
		t.Error("padding as large as the window was accepted")
	}
	w := NewInput("w", nd.Float32, 4)
	y := mustVar(Conv2d(x, w, Conv2dOptions{}))
	f, _ := Compile([]*Variable{x, w}, []*Variable{y}, nil)
	if _, err := f.Call([]*nd.Array{nd.New(nd.Float32, 1, 2, 5, 5), nd.New(nd.Float32, 3, 1, 3, 3)}); err == nil {
		t.Error("channel mismatch was accepted")
	}
}

// Two runs, and runs on 1 and several cores, give bit-identical filter
// gradients (the batch is split into a fixed number of chunks).
func TestConvDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	x64, w64 := randArray(r, -1, 1, 37, 3, 9, 9), randArray(r, -1, 1, 5, 3, 3, 3)
	x, w := NewShared(x64.Astype(nd.Float32), "x"), NewShared(w64.Astype(nd.Float32), "w")
	cost := SumAll(Sqr(mustVar(Conv2d(x, w, Conv2dOptions{Border: Border{Mode: "full"}}))))
	g, err := Grad(cost, []*Variable{w}, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := eval(t, g[0], nil, nil)
	second := eval(t, g[0], nil, nil)
	for i := 0; i < first.Size(); i++ {
		if first.Flat(i) != second.Flat(i) {
			t.Fatalf("entry %d differs between runs: %v, %v", i, first.Flat(i), second.Flat(i))
		}
	}
}

// Conv2dBias is conv2d plus one bias per map, and its gradient with respect
// to the biases is the sum over the batch and the pixels.
func TestConv2dBias(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	c := convCases[3]
	opts := Conv2dOptions{Step: c.step, Border: c.border}
	x64, w64, b64 := randArray(r, -1, 1, c.xs...), randArray(r, -1, 1, c.ws...), randArray(r, -1, 1, c.ws[0])
	x, w, b := NewInput("x", nd.Float32, 4), NewInput("w", nd.Float32, 4), NewInput("b", nd.Float32, 1)
	got := eval(t, mustVar(Conv2dBias(x, w, b, opts)), []*Variable{x, w, b}, []*nd.Array{x64.Astype(nd.Float32), w64.Astype(nd.Float32), b64.Astype(nd.Float32)})
	ph, pw := c.border.Pads(c.ws[2], c.ws[3])
	want := refConv(x64, w64, 1, 1, ph, pw, true)
	per := want.Size() / (want.Shape[0] * want.Shape[1])
	for i := 0; i < want.Size(); i++ {
		want.SetFlat(i, want.Flat(i)+b64.Flat(i/per%want.Shape[1]))
	}
	compareArrays(t, "conv2d with biases", got, want, 1e-5)
	checkGradConv(t, "conv2d with biases", func(v []*Variable) *Variable {
		return mustVar(Conv2dBias(v[0], v[1], v[2], opts))
	}, x64, w64, b64)
}

// TestConv2dIsNumpyConvolve pins the flip convention against an
// independent definition: on one-row images, Theano's conv2d in 'full' and
// 'valid' modes is numpy.convolve's 'full' and 'valid' (a true
// convolution), computed by Debian's numpy.
func TestConv2dIsNumpyConvolve(t *testing.T) {
	xs := []float64{0.5, -1.25, 2, 0.75, -0.5, 1.5, 3}
	ws := []float64{1, -2, 0.5}
	py := `
import json, numpy
x = numpy.array([0.5, -1.25, 2, 0.75, -0.5, 1.5, 3])
w = numpy.array([1, -2, 0.5])
print(json.dumps({"full": numpy.convolve(x, w, "full").tolist(), "valid": numpy.convolve(x, w, "valid").tolist()}))
`
	raw, err := exec.Command("/usr/bin/python3", "-c", py).Output()
	if err != nil {
		t.Skipf("Debian's python3-numpy is not available: %v", err)
	}
	var ref map[string][]float64
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"full", "valid"} {
		x := NewConstant(row4(xs))
		w := NewConstant(row4(ws))
		got := eval(t, mustVar(Conv2d(x, w, Conv2dOptions{Border: Border{Mode: mode}})), nil, nil)
		want := row4(ref[mode])
		compareArrays(t, "numpy.convolve "+mode, got, want, 1e-12)
	}
}

// row4 is a (1, 1, 1, len) array.
func row4(v []float64) *nd.Array {
	a := nd.New(nd.Float64, 1, 1, 1, len(v))
	copy(a.F64(), v)
	return a
}

// The float32 gradients of a convolution (the vectorized im2col and col2im
// rows, internal/vec) agree with float64's for every case: the gradient
// of Σ conv(x, W)·z with respect to x and W.
func TestConv2dGradientsFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	cases := append(append([]convCase(nil), convCases...),
		convCase{[]int{3, 4, 12, 20}, []int{5, 4, 5, 5}, [2]int{1, 1}, Border{Mode: "valid"}, true},
		convCase{[]int{2, 3, 11, 19}, []int{4, 3, 3, 3}, [2]int{2, 1}, Border{Mode: "half"}, true})
	for k, c := range cases {
		x64, w64 := randArray(r, -1, 1, c.xs...), randArray(r, -1, 1, c.ws...)
		opts := Conv2dOptions{Step: c.step, Border: c.border, NoFlip: !c.flip}
		var grads [2][]*nd.Array
		for d, dt := range []nd.DType{nd.Float64, nd.Float32} {
			x, w := NewInput("x", dt, 4), NewInput("w", dt, 4)
			y := mustVar(Conv2d(x, w, opts))
			ph, pw := c.border.Pads(c.ws[2], c.ws[3])
			z := NewShared(randArray(rand.New(rand.NewPCG(uint64(k), 1)), -1, 1, refConv(x64, w64, c.step[0], c.step[1], ph, pw, c.flip).Shape...).Astype(dt), "z")
			g, err := Grad(SumAll(Mul(y, z)), []*Variable{x, w}, GradOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := Compile([]*Variable{x, w}, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			if grads[d], err = f.Call([]*nd.Array{x64.Astype(dt), w64.Astype(dt)}); err != nil {
				t.Fatal(err)
			}
		}
		compareArrays(t, fmt.Sprintf("case %d: gradient of the images", k), grads[1][0], grads[0][0], 1e-5)
		compareArrays(t, fmt.Sprintf("case %d: gradient of the filters", k), grads[1][1], grads[0][1], 1e-4)
	}
}
