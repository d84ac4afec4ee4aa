package bricks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// fdCheck compares the symbolic gradient of cost = Σ r⊙out (r a fixed
// random weighting) with respect to every shared variable in wrt with
// central differences. The variables hold float64 values.
func fdCheck(t *testing.T, name string, out *core.Variable, wrt []*core.Variable) {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	o := eval(t, nil, nil, out)[0]
	wts := nd.New(nd.Float64, o.Shape...)
	for i := range wts.F64() {
		wts.F64()[i] = 0.5 + r.Float64()
	}
	cost := core.SumAll(core.Mul(out, core.NewConstant(wts)))
	grads, err := core.Grad(cost, wrt, core.GradOptions{})
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
	at := func() float64 {
		v, err := f.Call(nil)
		if err != nil {
			t.Fatal(err)
		}
		return v[0].Flat(0)
	}
	// h = 1e-6: truncation O(h²), rounding ε·|cost|/h ≈ 1e-8 for costs of
	// order 100, so the relative error is measured against a floor of 1e-2.
	const h = 1e-6
	for k, p := range wrt {
		data := p.Value().F64()
		for i := range data {
			old := data[i]
			data[i] = old + h
			fp := at()
			data[i] = old - h
			fm := at()
			data[i] = old
			num, sym := (fp-fm)/(2*h), res[1+k].Flat(i)
			if rel := math.Abs(num-sym) / math.Max(1e-2, math.Abs(num)+math.Abs(sym)); rel > 1e-6 {
				t.Errorf("%s: d/d%s[%d]: symbolic %.10g, numeric %.10g", name, p, i, sym, num)
				return
			}
		}
	}
}

func randShared(r *rand.Rand, name string, shape ...int) *core.Variable {
	a := nd.New(nd.Float64, shape...)
	for i := range a.F64() {
		a.F64()[i] = 2*r.Float64() - 1
	}
	return core.NewShared(a, name)
}

func initAll(t *testing.T, b Brick) {
	t.Helper()
	if err := SetInitSchemes(b, initialization.Uniform{Width: 0.6}, initialization.Uniform{Width: 0.4}); err != nil {
		t.Fatal(err)
	}
	if err := Initialize(b); err != nil {
		t.Fatal(err)
	}
}

func TestConvolutionalGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for k, c := range []struct {
		step   []int
		border core.Border
		tied   bool
	}{
		{[]int{1, 1}, core.Border{Mode: "valid"}, true},
		{[]int{1, 1}, core.Border{Mode: "full"}, true},
		{[]int{2, 1}, core.Border{Mode: "half"}, false},
		{[]int{2, 3}, core.Border{Pad: [2]int{1, 2}}, true},
	} {
		cfg := NewConfig(nd.Float64, 1)
		conv := NewConvolutional(cfg, "")
		conv.FilterSize = []int{3, 2}
		conv.NumFilters = 3
		conv.NumChannels = 2
		conv.ImageSize = Size{6, 7}
		conv.Step = c.step
		conv.BorderMode = new(c.border)
		conv.TiedBiases = new(c.tied)
		initAll(t, conv)
		x := randShared(r, "x", 2, 2, 6, 7)
		y := mustApply(t, conv, "apply", x)
		out := eval(t, nil, nil, y)[0]
		dim, err := conv.GetDim("output")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Shape[1:], dim) {
			t.Errorf("case %d: output shape %v, get_dim('output') %v", k, out.Shape, dim)
		}
		if !c.tied && !slices.Equal(conv.B.Value().Shape, []int(dim)) {
			t.Errorf("case %d: untied biases of shape %v", k, conv.B.Value().Shape)
		}
		if !core.HasRole(conv.W, core.Filter) || !core.HasRole(conv.W, core.Weight) {
			t.Errorf("W roles %v", conv.W.Tag.Roles)
		}
		fdCheck(t, fmt.Sprintf("Convolutional case %d", k), y, []*core.Variable{x, conv.W, conv.B})
	}
}

func TestConvolutionalTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	cfg := NewConfig(nd.Float64, 1)
	ct := NewConvolutionalTranspose(cfg, "")
	ct.FilterSize = []int{3, 3}
	ct.NumFilters = 2
	ct.NumChannels = 3
	ct.ImageSize = Size{4, 5}
	ct.Step = []int{2, 2}
	ct.UnusedEdge = []int{1, 0}
	initAll(t, ct)
	dim, err := ct.GetDim("output")
	// original size: step·(in−1) + k − 2·pad + unused edge.
	if err != nil || !slices.Equal(dim, Size{2, 2*3 + 3 + 1, 2*4 + 3}) {
		t.Fatalf("get_dim('output') = %v, %v", dim, err)
	}
	if !slices.Equal(ct.W.Value().Shape, []int{2, 3, 3, 3}) {
		t.Errorf("W shape %v", ct.W.Value().Shape)
	}
	x := randShared(r, "x", 2, 3, 4, 5)
	y := mustApply(t, ct, "apply", x)
	out := eval(t, nil, nil, y)[0]
	if !slices.Equal(out.Shape, []int{2, 2, 10, 11}) {
		t.Errorf("output shape %v", out.Shape)
	}
	fdCheck(t, "ConvolutionalTranspose", y, []*core.Variable{x, ct.W, ct.B})
}

func TestPoolingBricks(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for k, c := range []struct {
		class   string
		size    []int
		step    []int
		ignore  bool
		padding []int
		incPad  bool
	}{
		{"MaxPooling", []int{2, 2}, nil, true, nil, false},
		{"MaxPooling", []int{2, 2}, nil, false, nil, false},
		{"MaxPooling", []int{3, 2}, []int{1, 2}, true, []int{1, 1}, false},
		{"AveragePooling", []int{2, 2}, nil, false, nil, false},
		{"AveragePooling", []int{3, 3}, []int{2, 2}, true, []int{1, 1}, false},
		{"AveragePooling", []int{3, 3}, []int{2, 2}, true, []int{1, 1}, true},
	} {
		cfg := NewConfig(nd.Float64, 1)
		p, err := NewPooling(cfg, c.class, "")
		if err != nil {
			t.Fatal(err)
		}
		p.PoolingSize = c.size
		if c.step != nil {
			p.Step = c.step
		}
		p.IgnoreBorder = new(c.ignore)
		if c.padding != nil {
			p.Padding = c.padding
		}
		if c.incPad {
			p.IncludePadding = new(true)
		}
		p.InputDim = Size{2, 7, 5}
		x := randShared(r, "x", 3, 2, 7, 5)
		y := mustApply(t, p, "apply", x)
		out := eval(t, nil, nil, y)[0]
		dim, _ := p.GetDim("output")
		if !slices.Equal(out.Shape[1:], dim) {
			t.Errorf("case %d: output shape %v, get_dim('output') %v", k, out.Shape, dim)
		}
		fdCheck(t, fmt.Sprintf("%s case %d", c.class, k), y, []*core.Variable{x})
	}
}

// LeNet's layout: the shapes pushed down a ConvolutionalSequence, then a
// Flattener and an MLP on top; the whole network passes the gradient check.
func TestConvolutionalSequence(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	cfg := NewConfig(nd.Float64, 1)
	c0, c1 := NewConvolutional(cfg, "conv_0"), NewConvolutional(cfg, "conv_1")
	c0.FilterSize = []int{3, 3}
	c0.NumFilters = 4
	c1.FilterSize = []int{2, 2}
	c1.NumFilters = 3
	r0, _ := NewActivation(cfg, "Rectifier", "", 0)
	r1, _ := NewActivation(cfg, "Rectifier", "", 0)
	p0, _ := NewPooling(cfg, "MaxPooling", "pool_0")
	p0.PoolingSize = []int{2, 2}
	p1, _ := NewPooling(cfg, "MaxPooling", "pool_1")
	p1.PoolingSize = []int{2, 2}
	p1.IgnoreBorder = new(false)
	seq := NewConvolutionalSequence(cfg, "", []AppRef{{c0, "apply"}, {r0, "apply"}, {p0, "apply"}, {c1, "apply"}, {r1, "apply"}, {p1, "apply"}})
	seq.NumChannels = 2
	seq.ImageSize = Size{9, 8}
	seq.BorderMode = new(core.Border{Mode: "full"})
	if err := PushAllocationConfig(seq); err != nil {
		t.Fatal(err)
	}
	// full 3×3: 11×10, pool 5×5, full 2×2: 6×6, pool (no ignore) 3×3.
	out, err := seq.GetDim("output")
	if err != nil || !slices.Equal(out, Size{3, 3, 3}) {
		t.Fatalf("get_dim('output') = %v, %v", out, err)
	}
	if nc := c1.NumChannels; nc != 4 {
		t.Errorf("conv_1.num_channels = %d", nc)
	}
	flat := NewFlattener(cfg, "")
	relu, _ := NewActivation(cfg, "Rectifier", "", 0)
	sm := NewSoftmax(cfg, "")
	mlp, _ := NewMLP(cfg, "", []Brick{relu, sm}, []int{27, 5, 4})
	initAll(t, seq)
	initAll(t, mlp)
	x := randShared(r, "x", 2, 2, 9, 8)
	h := mustApply(t, seq, "apply", x)
	y := mustApply(t, mlp, "apply", mustApply(t, flat, "apply", h))
	params := append([]*core.Variable{x}, AllParameters(seq)...)
	params = append(params, AllParameters(mlp)...)
	if len(params) != 9 {
		t.Errorf("%d parameters", len(params))
	}
	fdCheck(t, "LeNet-like", y, params)
}

func TestLinearMaxout(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	cfg := NewConfig(nd.Float64, 1)
	lm := NewLinearMaxout(cfg, "")
	lm.InputDim, lm.OutputDim, lm.NumPieces = 4, 3, 2
	initAll(t, lm)
	x := randShared(r, "x", 5, 4)
	y := mustApply(t, lm, "apply", x)
	got := eval(t, nil, nil, y)[0]
	pre := eval(t, nil, nil, mustApply(t, lm.Linear, "apply", x))[0]
	if !slices.Equal(got.Shape, []int{5, 3}) || !slices.Equal(pre.Shape, []int{5, 6}) {
		t.Fatalf("shapes %v, %v", got.Shape, pre.Shape)
	}
	for i := 0; i < 5; i++ {
		for j := 0; j < 3; j++ {
			if want := math.Max(pre.Flat(i*6+2*j), pre.Flat(i*6+2*j+1)); got.Flat(i*3+j) != want {
				t.Errorf("maxout[%d,%d] = %v, want %v", i, j, got.Flat(i*3+j), want)
			}
		}
	}
	fdCheck(t, "LinearMaxout", y, []*core.Variable{x, lm.Linear.W, lm.Linear.B})
}
