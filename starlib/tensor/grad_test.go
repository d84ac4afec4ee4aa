package tensor_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// TestTensorGradients checks, for each tensor.* function a script calls
// (docs/reference.md's list), the symbolic gradient of the expression as a
// script writes it against central finite differences: cost = Σ w⊙f(x0,
// x1, ...) with w a fixed random weighting, the xi float64 shared
// variables. (core's own gradient tests check its ops the same way, from
// Go.) Values are kept away from kinks (|x| near clip bounds, integers for
// floor) so that the difference quotient is the derivative.
func TestTensorGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 4))
	arr := func(lo, hi float64, shape ...int) *nd.Array {
		a := nd.New(nd.Float64, shape...)
		for i := range a.F64() {
			a.F64()[i] = lo + (hi-lo)*r.Float64()
		}
		return a
	}
	anyv := func(shape ...int) *nd.Array { return arr(-2, 2, shape...) }
	pos := func(shape ...int) *nd.Array { return arr(0.2, 2, shape...) }
	prob := func(shape ...int) *nd.Array { return arr(0.1, 0.9, shape...) }
	vals := func(xs ...float64) *nd.Array { return nd.FromSlice(xs) }
	cases := []struct {
		name, expr string
		vals       []*nd.Array
	}{
		{"concatenate", "T.concatenate([x0, x1], axis=1)", []*nd.Array{anyv(2, 3), anyv(2, 2)}},
		{"concatenate axis 0", "T.concatenate([x0, x1])", []*nd.Array{anyv(2, 3), anyv(1, 3)}},
		{"stack", "T.stack([x0, x1])", []*nd.Array{anyv(3), anyv(3)}},
		{"stack axis 1", "T.stack([x0, x1], axis=1)", []*nd.Array{anyv(2, 3), anyv(2, 3)}},
		{"comparison operator and switch", "T.switch(x0 > 0., x1, -x1)", []*nd.Array{vals(-1, 1, 0.5, -0.5), anyv(4)}},
		{"switch of gt", "T.switch(T.gt(x0, x1), x0, x1 * 2)", []*nd.Array{vals(-1, 1, 0.5), vals(0.5, -1, 2)}},
		{"maximum minimum", "T.maximum(x0, x1) + 2 * T.minimum(x0, x1)", []*nd.Array{vals(-1, 1, 0.5), vals(0.5, -1, 2)}},
		{"clip", "T.clip(x0, -0.5, 0.5)", []*nd.Array{vals(-1, -0.2, 0.3, 0.9)}},
		{"clip variable bounds", "T.clip(x0, x1, x1 + 1)", []*nd.Array{vals(-1, 0.2, 2), vals(-0.5, -0.5, -0.5)}},
		{"sqr sqrt log exp abs_", "T.sqr(x0) + T.sqrt(x1) + T.log(x1) + T.exp(x0) + T.abs_(x0)", []*nd.Array{vals(-1, 0.5, 1.5), pos(3)}},
		{"zeros_like ones_like", "x0 * T.ones_like(x1) + T.zeros_like(x1)", []*nd.Array{anyv(3), anyv(3)}},
		{"cast", "T.cast(x0, 'float64') * 2", []*nd.Array{anyv(3)}},
		{"floor ceil", "x0 * (T.floor(x1) + T.ceil(x1))", []*nd.Array{anyv(4), vals(-1.5, -0.3, 0.4, 1.7)}},
		{"set_subtensor", "T.set_subtensor(x0[1:], x1)", []*nd.Array{anyv(3, 2), anyv(2, 2)}},
		{"set_subtensor broadcast", "T.set_subtensor(x0[':', 0], x1)", []*nd.Array{anyv(3, 2), anyv(1)}},
		{"inc_subtensor", "T.inc_subtensor(x0[0], x1)", []*nd.Array{anyv(3, 2), anyv(2)}},
		{"batched_dot 3x3", "T.batched_dot(x0, x1)", []*nd.Array{anyv(2, 3, 4), anyv(2, 4, 2)}},
		{"batched_dot 3x2", "T.batched_dot(x0, x1)", []*nd.Array{anyv(2, 3, 4), anyv(2, 4)}},
		{"batched_dot 2x3", "T.batched_dot(x0, x1)", []*nd.Array{anyv(2, 4), anyv(2, 4, 3)}},
		{"batched_dot 2x2", "T.batched_dot(x0, x1)", []*nd.Array{anyv(3, 4), anyv(3, 4)}},
		{"roll", "T.roll(x0, 1, axis=1) + T.roll(x0, -1)", []*nd.Array{anyv(2, 3)}},
		{"tile", "T.tile(x0, (2, 3))", []*nd.Array{anyv(2, 2)}},
		{"repeat", "T.repeat(x0, 2, axis=0) + T.extra_ops.repeat(x0, 2, axis=0)", []*nd.Array{anyv(2, 3)}},
		{"cumsum", "T.extra_ops.cumsum(x0, axis=1) + T.cumsum(x0, axis=0)", []*nd.Array{anyv(3, 4)}},
		{"cumsum flat", "T.cumsum(x0)", []*nd.Array{anyv(2, 3)}},
		{"shape_padleft right", "T.shape_padleft(x0) * T.shape_padright(x1)", []*nd.Array{anyv(3), anyv(2)}},
		{"broadcast flags", "T.addbroadcast(x0, 0) + T.unbroadcast(x1, 0) + T.patternbroadcast(x1, (False, False))", []*nd.Array{anyv(1, 3), anyv(2, 3)}},
		{"slices", "x0[1:] * x0[:-1] + x0[::-1][1:]", []*nd.Array{anyv(4)}},
		{"slice of a matrix", "x0[1:][':', 0] * 2", []*nd.Array{anyv(3, 2)}},
		{"symbolic slice bounds", "x0[x0.shape[0] - 2:]", []*nd.Array{anyv(4)}},
		{"symbolic slice bounds in a matrix", "x0[1, 1:x0.shape[1] - 1] * 2 + x0[':', 1:3][0]", []*nd.Array{anyv(2, 4)}},
		{"set_subtensor of a symbolic slice", "T.set_subtensor(x0[x0.shape[0] - 2:], x1)", []*nd.Array{anyv(4), anyv(2)}},
		{"eye", "T.dot(x0, T.eye(3, dtype='float64'))", []*nd.Array{anyv(2, 3)}},
		{"arange", "x0 * T.arange(x0.shape[0])", []*nd.Array{anyv(4)}},
		{"nnet.sigmoid softplus relu", "T.nnet.sigmoid(x0) + T.nnet.softplus(x0) + T.nnet.relu(x0) + T.nnet.relu(x0, 0.1)", []*nd.Array{vals(-1, -0.3, 0.4, 1.7)}},
		{"nnet.softmax", "T.nnet.softmax(x0)", []*nd.Array{anyv(2, 3)}},
		{"nnet.log_softmax", "T.nnet.log_softmax(x0)", []*nd.Array{anyv(2, 3)}},
		{"nnet.binary_crossentropy", "T.nnet.binary_crossentropy(x0, x1)", []*nd.Array{prob(5), prob(5)}},
		{"nnet.binary_crossentropy of a sigmoid", "T.nnet.binary_crossentropy(T.nnet.sigmoid(x0), x1)", []*nd.Array{anyv(5), prob(5)}},
		{"nnet.categorical_crossentropy one-hot", "T.nnet.categorical_crossentropy(T.nnet.softmax(x0), x1)", []*nd.Array{anyv(2, 3), nd.FromSlice([]float64{0, 1, 0, 1, 0, 0}, 2, 3)}},
		{"nnet.hard_sigmoid", "T.nnet.hard_sigmoid(x0)", []*nd.Array{vals(-1, 0.5, 1.5, -4, 4)}},
		{"nnet.ultra_fast_sigmoid", "T.nnet.ultra_fast_sigmoid(x0)", []*nd.Array{anyv(4)}},
		{"nnet.conv2d", "T.nnet.conv2d(x0, x1, border_mode='half', subsample=(1, 1)) + T.nnet.conv2d(x0, x1, filter_flip=False, border_mode=(1, 1))", []*nd.Array{anyv(1, 2, 3, 3), anyv(2, 2, 3, 3)}},
		{"all any feed a switch", "T.switch(T.all(x0 > -3), x0, 0) + T.switch(T.any(x0 > 3), 0, x0)", []*nd.Array{anyv(3)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pre := starlark.StringDict{}
			xs := make([]*core.Variable, len(c.vals))
			for i, v := range c.vals {
				xs[i] = core.NewShared(v, fmt.Sprintf("x%d", i))
				pre[xs[i].Name] = &starlib.Variable{V: xs[i]}
			}
			in, err := starlib.NewInterp(starlib.Options{Library: all.Library(), FloatX: "float64", Predeclared: pre})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.ExecREPL(context.Background(), "T = theano.tensor"); err != nil {
				t.Fatal(err)
			}
			v, err := in.ExecREPL(context.Background(), c.expr)
			if err != nil {
				t.Fatalf("%s: %v", c.expr, err)
			}
			out, ok := v.(*starlib.Variable)
			if !ok {
				t.Fatalf("%s gave %s, want a variable", c.expr, v.Type())
			}
			checkGrad(t, r, out.V, xs)
		})
	}
}

// checkGrad compares the gradient of Σ w⊙out with respect to each of xs
// (float64 shared variables) with central differences: h = 1e-6 gives a
// truncation error O(h²) and a rounding error O(ε/h) ≈ 1e-10 relative to
// the cost, well below the 1e-6 tolerance.
func checkGrad(t *testing.T, r *rand.Rand, out *core.Variable, xs []*core.Variable) {
	t.Helper()
	const h, floor = 1e-6, 1e-3
	if out.DType() != nd.Float64 {
		t.Fatalf("the expression is %s, want float64", out.DType())
	}
	fn0, err := core.Compile(nil, []*core.Variable{out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := fn0.Call(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := nd.New(nd.Float64, o[0].Shape...)
	for i := range w.F64() {
		w.F64()[i] = 0.5 + r.Float64()
	}
	cost := core.SumAll(core.Mul(out, core.NewConstant(w)))
	grads, err := core.Grad(cost, xs, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fn, err := core.Compile(nil, append([]*core.Variable{cost}, grads...), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fn.Call(nil)
	if err != nil {
		t.Fatal(err)
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
				t.Errorf("d/d%s[%d]: symbolic %.10g, numeric %.10g (rel %.2g)", x, i, sym, num, rel)
			}
		}
	}
}
