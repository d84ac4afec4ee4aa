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

// randArray fills a float64 array with values in [lo, hi), kept away from
// kinks by the caller's choice of range.
func randArray(r *rand.Rand, lo, hi float64, shape ...int) *nd.Array {
	a := nd.New(nd.Float64, shape...)
	for i := range a.F64() {
		a.F64()[i] = lo + (hi-lo)*r.Float64()
	}
	return a
}

// checkGrad compares the symbolic gradient of cost = Σ w⊙f(params) (w a
// fixed random weighting, so every output entry matters) with central
// finite differences. The inputs are shared float64 variables.
func checkGrad(t *testing.T, name string, f func(xs []*Variable) *Variable, vals ...*nd.Array) {
	t.Helper()
	// Central differences with h = 1e-6: truncation error O(h²) ≈ 1e-12
	// and rounding error O(ε/h) ≈ 1e-10 relative to the cost, well below
	// the 1e-6 relative tolerance.
	checkGradWith(t, name, 1e-6, 1e-3, f, vals...)
}

// checkGradWith is checkGrad with the finite difference step h and the
// floor of the relative error's scale.
func checkGradWith(t *testing.T, name string, h, floor float64, f func(xs []*Variable) *Variable, vals ...*nd.Array) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]*Variable, len(vals))
	for i, v := range vals {
		xs[i] = NewShared(v, fmt.Sprintf("x%d", i))
	}
	out := f(xs)
	fn0, err := Compile(nil, []*Variable{out}, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	o, err := fn0.Call(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w := NewConstant(randArray(r, 0.5, 1.5, o[0].Shape...))
	cost := SumAll(Mul(out, w))
	grads, err := Grad(cost, xs, GradOptions{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	fn, err := Compile(nil, append([]*Variable{cost}, grads...), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	res, err := fn.Call(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	costAt := func() float64 {
		res, err := fn.Call(nil)
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Flat(0)
	}
	for k, x := range xs {
		g := res[1+k]
		data := x.Value().F64()
		for i := range data {
			old := data[i]
			data[i] = old + h
			fp := costAt()
			data[i] = old - h
			fm := costAt()
			data[i] = old
			num := (fp - fm) / (2 * h)
			sym := g.Flat(i)
			if rel := math.Abs(num-sym) / math.Max(floor, math.Abs(num)+math.Abs(sym)); rel > 1e-6 {
				t.Errorf("%s: d/d%s[%d]: symbolic %.10g, numeric %.10g (rel %.2g)", name, x, i, sym, num, rel)
			}
		}
	}
}

func mustVar(v *Variable, err error) *Variable {
	if err != nil {
		panic(err)
	}
	return v
}

func TestGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pos := func(shape ...int) *nd.Array { return randArray(r, 0.5, 2, shape...) }
	any_ := func(shape ...int) *nd.Array { return randArray(r, -2, 2, shape...) }
	cases := []struct {
		name string
		f    func(x []*Variable) *Variable
		vals []*nd.Array
	}{
		{"add broadcast", func(x []*Variable) *Variable { return Add(x[0], x[1]) }, []*nd.Array{any_(3, 4), any_(4)}},
		{"sub", func(x []*Variable) *Variable { return Sub(x[0], x[1]) }, []*nd.Array{any_(3, 1), any_(1, 4)}},
		{"mul", func(x []*Variable) *Variable { return Mul(x[0], x[1]) }, []*nd.Array{any_(2, 3), any_(2, 3)}},
		{"div", func(x []*Variable) *Variable { return Div(x[0], x[1]) }, []*nd.Array{any_(2, 3), pos(3)}},
		{"pow", func(x []*Variable) *Variable { return Pow(x[0], x[1]) }, []*nd.Array{pos(2, 3), any_(2, 3)}},
		{"maximum", func(x []*Variable) *Variable { return Maximum(x[0], x[1]) }, []*nd.Array{nd.FromSlice([]float64{1, -1, 3, 0.5}), nd.FromSlice([]float64{0.2, 0.3, -2, 0.7})}},
		{"minimum", func(x []*Variable) *Variable { return Minimum(x[0], x[1]) }, []*nd.Array{nd.FromSlice([]float64{1, -1, 3, 0.5}), nd.FromSlice([]float64{0.2, 0.3, -2, 0.7})}},
		{"neg", func(x []*Variable) *Variable { return Neg(x[0]) }, []*nd.Array{any_(5)}},
		{"exp", func(x []*Variable) *Variable { return Exp(x[0]) }, []*nd.Array{any_(5)}},
		{"log", func(x []*Variable) *Variable { return Log(x[0]) }, []*nd.Array{pos(5)}},
		{"tanh", func(x []*Variable) *Variable { return Tanh(x[0]) }, []*nd.Array{any_(5)}},
		{"sigmoid", func(x []*Variable) *Variable { return Sigmoid(x[0]) }, []*nd.Array{any_(5)}},
		{"softplus", func(x []*Variable) *Variable { return Softplus(x[0]) }, []*nd.Array{any_(5)}},
		{"sqr", func(x []*Variable) *Variable { return Sqr(x[0]) }, []*nd.Array{any_(5)}},
		{"sqrt", func(x []*Variable) *Variable { return Sqrt(x[0]) }, []*nd.Array{pos(5)}},
		{"abs", func(x []*Variable) *Variable { return Abs(x[0]) }, []*nd.Array{nd.FromSlice([]float64{-1.5, 0.3, 2, -0.2})}},
		{"relu", func(x []*Variable) *Variable { return Relu(x[0]) }, []*nd.Array{nd.FromSlice([]float64{-1.5, 0.3, 2, -0.2})}},
		{"log1p", func(x []*Variable) *Variable { return Log1p(x[0]) }, []*nd.Array{pos(4)}},
		{"inv", func(x []*Variable) *Variable { return Inv(x[0]) }, []*nd.Array{pos(4)}},
		{"switch", func(x []*Variable) *Variable { return Switch(GT(x[0], Const(nd.Float64, 0)), x[1], x[2]) }, []*nd.Array{nd.FromSlice([]float64{-1, 1, 2, -2}), any_(4), any_(4)}},
		{"dot mm", func(x []*Variable) *Variable { return mustVar(Dot(x[0], x[1])) }, []*nd.Array{any_(3, 4), any_(4, 2)}},
		{"dot vm", func(x []*Variable) *Variable { return mustVar(Dot(x[0], x[1])) }, []*nd.Array{any_(4), any_(4, 2)}},
		{"dot mv", func(x []*Variable) *Variable { return mustVar(Dot(x[0], x[1])) }, []*nd.Array{any_(3, 4), any_(4)}},
		{"dot vv", func(x []*Variable) *Variable { return mustVar(Dot(x[0], x[1])) }, []*nd.Array{any_(4), any_(4)}},
		{"dot transposed", func(x []*Variable) *Variable { return mustVar(Dot(Transpose(x[0]), Transpose(x[1]))) }, []*nd.Array{any_(4, 3), any_(2, 4)}},
		{"sum axis", func(x []*Variable) *Variable { return mustVar(Sum(x[0], []int{1}, false, nil)) }, []*nd.Array{any_(3, 4, 2)}},
		{"sum axes keepdims", func(x []*Variable) *Variable { return mustVar(Sum(x[0], []int{0, 2}, true, nil)) }, []*nd.Array{any_(3, 4, 2)}},
		{"mean", func(x []*Variable) *Variable { return mustVar(Mean(x[0], []int{0}, false, nil)) }, []*nd.Array{any_(3, 4)}},
		{"mean all", func(x []*Variable) *Variable { return MeanAll(x[0]) }, []*nd.Array{any_(3, 4)}},
		{"max", func(x []*Variable) *Variable { return mustVar(Max(x[0], []int{1}, false)) }, []*nd.Array{any_(3, 4)}},
		{"min", func(x []*Variable) *Variable { return mustVar(Min(x[0], nil, false)) }, []*nd.Array{any_(3, 4)}},
		{"prod", func(x []*Variable) *Variable { return mustVar(Prod(x[0], []int{1}, false)) }, []*nd.Array{pos(3, 4)}},
		{"softmax", func(x []*Variable) *Variable { return mustVar(Softmax(x[0])) }, []*nd.Array{any_(3, 4)}},
		{"log_softmax", func(x []*Variable) *Variable { return mustVar(LogSoftmax(x[0])) }, []*nd.Array{any_(3, 4)}},
		// Theano's names research code calls (tensor_extra.go); the Starlark
		// face's TestTensorGradients checks them as scripts write them.
		{"stack", func(x []*Variable) *Variable { return mustVar(Stack([]*Variable{x[0], x[1]}, 1)) }, []*nd.Array{any_(2, 3), any_(2, 3)}},
		{"clip", func(x []*Variable) *Variable { return Clip(x[0], Const(nd.Float64, -0.5), Const(nd.Float64, 0.5)) }, []*nd.Array{nd.FromSlice([]float64{-1, -0.2, 0.3, 0.9})}},
		{"inc_subtensor", func(x []*Variable) *Variable {
			return mustVar(IncSubtensor(mustVar(Subtensor(x[0], []Index{{Slice: true, Start: new(1)}})), x[1], false))
		}, []*nd.Array{any_(3, 2), any_(2)}},
		{"set_subtensor", func(x []*Variable) *Variable {
			return mustVar(IncSubtensor(mustVar(Subtensor(x[0], []Index{{I: 1}})), x[1], true))
		}, []*nd.Array{any_(3, 2), any_(2)}},
		{"symbolic slice", func(x []*Variable) *Variable {
			return mustVar(Subtensor(x[0], []Index{{Slice: true, StartVar: Sub(mustVar(ShapeI(x[0], 0)), Const(nd.Int64, 2))}}))
		}, []*nd.Array{any_(4, 2)}},
		{"batched_dot", func(x []*Variable) *Variable { return mustVar(BatchedDot(x[0], x[1])) }, []*nd.Array{any_(2, 3, 4), any_(2, 4, 2)}},
		{"roll", func(x []*Variable) *Variable { return mustVar(Roll(x[0], -1, 1)) }, []*nd.Array{any_(2, 3)}},
		{"repeat", func(x []*Variable) *Variable { return mustVar(Repeat(x[0], 3, 1)) }, []*nd.Array{any_(2, 3)}},
		{"cumsum", func(x []*Variable) *Variable { axis := 0; return mustVar(CumSum(x[0], &axis)) }, []*nd.Array{any_(3, 2)}},
		{"binary_crossentropy", func(x []*Variable) *Variable { return BinaryCrossEntropy(Sigmoid(x[0]), x[1]) }, []*nd.Array{any_(4), randArray(r, 0.1, 0.9, 4)}},
		{"reshape", func(x []*Variable) *Variable { return Sqr(mustVar(Reshape(x[0], []int{2, -1}))) }, []*nd.Array{any_(3, 4)}},
		{"flatten", func(x []*Variable) *Variable { return Sqr(mustVar(Flatten(x[0], 2))) }, []*nd.Array{any_(2, 3, 4)}},
		{"dimshuffle", func(x []*Variable) *Variable { return Sqr(mustVar(Dimshuffle(x[0], []int{2, -1, 0, 1}))) }, []*nd.Array{any_(2, 3, 4)}},
		{"dimshuffle drop", func(x []*Variable) *Variable { return Sqr(mustVar(Dimshuffle(x[0], []int{1}))) }, []*nd.Array{any_(1, 4)}},
		{"subtensor", func(x []*Variable) *Variable {
			one, three, m1 := 1, 3, -1
			return Sqr(mustVar(Subtensor(x[0], []Index{{Slice: true, Start: &one, Stop: &three}, {I: -1}, {Slice: true, Step: &m1}})))
		}, []*nd.Array{any_(4, 3, 5)}},
		{"composite mlp", func(x []*Variable) *Variable {
			h := Relu(Add(mustVar(Dot(x[0], x[1])), x[2]))
			return mustVar(LogSoftmax(mustVar(Dot(h, x[3]))))
		}, []*nd.Array{any_(5, 4), any_(4, 3), nd.FromSlice([]float64{3, 3, 3}), any_(3, 2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c.name, c.f, c.vals...) })
	}
}

func TestGradCrossEntropy(t *testing.T) {
	y := NewConstant(nd.FromSlice([]int64{2, 0, 1}))
	r := rand.New(rand.NewPCG(5, 6))
	checkGrad(t, "categorical cross-entropy of softmax", func(x []*Variable) *Variable {
		return mustVar(CategoricalCrossEntropy(mustVar(Softmax(x[0])).Copy(), y))
	}, randArray(r, -3, 3, 3, 4))
	checkGrad(t, "categorical cross-entropy of probabilities", func(x []*Variable) *Variable {
		return mustVar(CategoricalCrossEntropy(x[0], y))
	}, randArray(r, 0.1, 1, 3, 4))
}

func TestGradCastAndDisconnected(t *testing.T) {
	x := NewShared(nd.FromSlice([]float64{0.5, 0.25, -1}), "x")
	g, err := Grad(SumAll(Cast(x, nd.Float32)), []*Variable{x}, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := Compile(nil, g, nil)
	res, err := fn.Call(nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].DType() != nd.Float64 || !nd.Equal(res[0], nd.FromSlice([]float64{1, 1, 1})) {
		t.Errorf("grad of sum(cast(x)) = %v (%s), want ones in float64", res[0], res[0].DType())
	}
	other := NewShared(nd.FromSlice([]float64{1}), "other")
	if _, err := Grad(SumAll(x), []*Variable{other}, GradOptions{}); err == nil {
		t.Error("grad with respect to a variable outside the graph: no error")
	}
	if gs, err := Grad(SumAll(x), []*Variable{other}, GradOptions{AllowDisconnected: true}); err != nil || gs[0] == nil {
		t.Errorf("AllowDisconnected: %v", err)
	}
}
