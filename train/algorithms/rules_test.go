package algorithms

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/nd"
)

// sharedFloatX is Blocks' shared_floatx for tests.
func sharedFloatX(name string, shape []int, xs ...float64) *core.Variable {
	a := nd.New(config.FloatX(), shape...)
	for i, x := range xs {
		a.SetFlat(i, x)
	}
	return core.NewShared(a, name)
}

func setValue(t *testing.T, v *core.Variable, xs ...float64) {
	t.Helper()
	a := nd.New(v.Value().DType(), v.Value().Shape...)
	for i, x := range xs {
		a.SetFlat(i, x)
	}
	if err := v.SetValue(a); err != nil {
		t.Fatal(err)
	}
}

// stepFunction compiles rule's steps for params with gradients grads
// (Blocks' theano.function([], steps, updates=updates)).
func stepFunction(t *testing.T, rule StepRule, params, grads []*core.Variable) func() []*nd.Array {
	t.Helper()
	steps, updates, err := rule.ComputeSteps(params, grads)
	if err != nil {
		t.Fatal(err)
	}
	f, err := core.Compile(nil, steps, updates)
	if err != nil {
		t.Fatal(err)
	}
	return func() []*nd.Array {
		out, err := f.Call(nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

func assertClose(t *testing.T, what string, got *nd.Array, want []float64, rtol float64) {
	t.Helper()
	if got.Size() != len(want) {
		t.Fatalf("%s: got %d values %v, want %v", what, got.Size(), got.Float64s(), want)
	}
	for i, w := range want {
		g := got.Flat(i)
		// numpy's assert_allclose: |g-w| <= atol + rtol*|w|, atol 0.
		if math.Abs(g-w) > rtol*math.Abs(w) && !(g == w) {
			t.Errorf("%s: got %v, want %v (rtol %g)", what, got.Float64s(), want, rtol)
			return
		}
	}
}

// sumOfSquares is Blocks' test setup: a = shared_floatx([3, 4]), cost =
// (a**2).sum(), so the gradient is 2a.
func sumOfSquares() (a, grad *core.Variable) {
	a = sharedFloatX("a", []int{2}, 3, 4)
	g, err := core.Grad(core.SumAll(core.Sqr(a)), []*core.Variable{a}, core.GradOptions{})
	if err != nil {
		panic(err)
	}
	return a, g[0]
}

// TestBlocksVectors reproduces tests/algorithms/test_algorithms.py of
// Blocks: each step rule called three times on the gradient of sum(a²),
// with a changed between calls where Blocks changes it. Blocks' rtol is
// kept (1e-7 by default, 1e-5 or 1e-4 where it says so), loosened to 1e-6
// where float32 arithmetic cannot reach 1e-7.
func TestBlocksVectors(t *testing.T) {
	mustAdaDelta := func(d, e float64) StepRule {
		r, err := NewAdaDelta(nd.Float32, d, e)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	mustRMS := func(lr, d, m float64, basic bool) StepRule {
		if basic {
			r, err := NewBasicRMSProp(nd.Float32, d, m)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		r, err := NewRMSProp(nd.Float32, lr, d, m)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name   string
		rule   StepRule
		values [][]float64 // a before each call (nil: unchanged)
		want   [][]float64
		rtol   float64
	}{
		{"BasicMomentum(0.5)", NewBasicMomentum(nd.Float32, 0.5), nil, [][]float64{{6, 8}, {9, 12}, {10.5, 14}}, 1e-7},
		{"Momentum(0.1, 0.5)", NewMomentum(nd.Float32, 0.1, 0.5), nil, [][]float64{{0.6, 0.8}, {0.9, 1.2}, {1.05, 1.4}}, 1e-6},
		{"AdaDelta(0.5, 1e-7)", mustAdaDelta(0.5, 1e-7), nil,
			[][]float64{{0.00044721, 0.00044721}, {0.0005164, 0.0005164}, {0.00056904, 0.00056904}}, 1e-5},
		{"BasicRMSProp(0.5, 1e5)", mustRMS(0, 0.5, 1e5, true), [][]float64{nil, {2, 3}, {1, 1.5}},
			[][]float64{{1.41421356, 1.41421356}, {0.9701425, 1.02899151}, {0.6172134, 0.64699664}}, 1e-6},
		{"RMSProp(0.1, 0.5, 1e5)", mustRMS(0.1, 0.5, 1e5, false), [][]float64{nil, {2, 3}, {1, 1.5}},
			[][]float64{{0.141421356, 0.141421356}, {0.09701425, 0.102899151}, {0.06172134, 0.064699664}}, 1e-6},
		{"Adam()", NewAdam(nd.Float32, AdamLearningRate, AdamBeta1, AdamBeta2, AdamEpsilon, AdamDecayFactor), [][]float64{nil, {2, 3}, {1, 1.5}},
			[][]float64{{0.002, 0.002}, {0.0019407, 0.00196515}, {0.00178724, 0.0018223}}, 1e-4},
		{"AdaGrad()", NewAdaGrad(nd.Float32, 0.002, 1e-6), [][]float64{nil, {2, 3}, {1, 1.5}},
			[][]float64{{0.002, 0.002}, {0.0011094, 0.0012}, {0.00053452, 0.0005747}}, 1e-4},
	}
	for _, c := range cases {
		a, g := sumOfSquares()
		f := stepFunction(t, c.rule, []*core.Variable{a}, []*core.Variable{g})
		for k, want := range c.want {
			if c.values != nil && c.values[k] != nil {
				setValue(t, a, c.values[k]...)
			}
			assertClose(t, c.name+" call "+string(rune('1'+k)), f()[0], want, c.rtol)
		}
	}
}

func TestBasicRMSPropMaxScaling(t *testing.T) {
	a := sharedFloatX("a", []int{2}, 1e-6, 1e-6)
	g, _ := core.Grad(core.SumAll(core.Sqr(a)), []*core.Variable{a}, core.GradOptions{})
	r, _ := NewBasicRMSProp(nd.Float32, 0.5, 1e5)
	assertClose(t, "max_scaling", stepFunction(t, r, []*core.Variable{a}, g)()[0], []float64{0.2, 0.2}, 1e-6)
}

func TestSanityChecks(t *testing.T) {
	for _, d := range []float64{-1, 2} {
		if _, err := NewAdaDelta(nd.Float32, d, 1e-6); err == nil || !strings.Contains(err.Error(), "decay rate") {
			t.Errorf("AdaDelta(%v): %v", d, err)
		}
		if _, err := NewBasicRMSProp(nd.Float32, d, 1e5); err == nil {
			t.Errorf("BasicRMSProp(%v): no error", d)
		}
	}
	if _, err := NewBasicRMSProp(nd.Float32, 0.5, -1); err == nil || !strings.Contains(err.Error(), "max. scaling") {
		t.Errorf("BasicRMSProp max_scaling -1: %v", err)
	}
	if _, err := NewVariableClipping(nd.Float32, 50, []int{0, 0}); err == nil {
		t.Error("VariableClipping axis (0, 0): no error")
	}
	r, _ := NewVariableClipping(nd.Float32, 10, []int{1, 2})
	p := sharedFloatX("p", []int{1}, 1)
	if _, _, err := r.ComputeSteps([]*core.Variable{p}, []*core.Variable{p}); err == nil || !strings.Contains(err.Error(), "invalid axis") {
		t.Errorf("VariableClipping bad axis: %v", err)
	}
}

func evalAll(t *testing.T, vs []*core.Variable) []*nd.Array {
	t.Helper()
	f, err := core.Compile(nil, vs, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Call(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scalars(xs ...float64) []*core.Variable {
	out := make([]*core.Variable, len(xs))
	for i, x := range xs {
		out[i] = sharedFloatX("s", nil, x)
	}
	return out
}

func TestStepClippingAndComposite(t *testing.T) {
	four, five := 4.0, 5.0
	grads := scalars(3, 4)
	params := scalars(0, 0)
	steps, ups, _ := NewStepClipping(nd.Float32, &four).ComputeSteps(params, grads)
	out := evalAll(t, steps)
	assertClose(t, "StepClipping(4)", out[0], []float64{12 / 5.0}, 1e-6)
	assertClose(t, "StepClipping(4)", out[1], []float64{16 / 5.0}, 1e-6)
	if len(ups) != 0 {
		t.Errorf("updates %v", ups)
	}
	steps, _, _ = NewStepClipping(nd.Float32, &five).ComputeSteps(params, grads)
	out = evalAll(t, steps)
	assertClose(t, "StepClipping(5)", out[0], []float64{3}, 1e-7)
	assertClose(t, "StepClipping(5)", out[1], []float64{4}, 1e-7)
	none := NewStepClipping(nd.Float32, nil)
	steps, ups, _ = none.ComputeSteps(params, grads)
	if none.Threshold != nil || len(ups) != 0 || steps[0] != grads[0] || steps[1] != grads[1] {
		t.Error("StepClipping() changed the steps")
	}
	steps, _, _ = NewCompositeRule(NewStepClipping(nd.Float32, &four), NewScale(nd.Float32, 0.1)).ComputeSteps(params, grads)
	out = evalAll(t, steps)
	assertClose(t, "Composite", out[0], []float64{12 / 50.0}, 1e-6)
	assertClose(t, "Composite", out[1], []float64{16 / 50.0}, 1e-6)
}

func TestVariableClipping(t *testing.T) {
	rule1, _ := NewVariableClipping(nd.Float32, 5, nil)
	params := []*core.Variable{sharedFloatX("p0", []int{2}, 1, 1), sharedFloatX("p1", []int{3}, -1, -1, -1),
		sharedFloatX("p2", []int{1, 4, 1}, 1, -1, 1, -1)}
	grads := []*core.Variable{sharedFloatX("g0", []int{2}, 3, 2), sharedFloatX("g1", []int{1, 3}, 3, 9, 2),
		sharedFloatX("g2", []int{1, 4, 1}, 1, 2, 3, 2)}
	// Blocks' second pair broadcasts a (3,) parameter against a (1, 3)
	// step; here a step has its parameter's shape, so the parameter is
	// (1, 3) too.
	params[1] = sharedFloatX("p1", []int{1, 3}, -1, -1, -1)
	steps, _, err := rule1.ComputeSteps(params, grads)
	if err != nil {
		t.Fatal(err)
	}
	out := evalAll(t, steps)
	assertClose(t, "border", out[0], []float64{3, 2}, 1e-7)
	assertClose(t, "clipped", out[1], []float64{0.78885438, 3.47213595, 0.34164079}, 1e-5)
	assertClose(t, "notclipped", out[2], []float64{1, 2, 3, 2}, 1e-7)

	rule2, _ := NewVariableClipping(nd.Float32, 10, []int{1})
	steps, _, _ = rule2.ComputeSteps([]*core.Variable{sharedFloatX("p", []int{2, 4}, 1, -1, 1, -1, -1, 1, -1, 1)},
		[]*core.Variable{sharedFloatX("g", []int{2, 4}, 1, 2, 3, 4, 5, 6, 7, 8)})
	assertClose(t, "axis=1", evalAll(t, steps)[0],
		[]float64{1, 2, 3, 4, 3.54858826, 4.79049022, 5.06478435, 6.30668631}, 1e-5)

	rule3, _ := NewVariableClipping(nd.Float32, 10, []int{1, 2})
	steps, _, _ = rule3.ComputeSteps([]*core.Variable{sharedFloatX("p", []int{2, 2, 2, 1}, 1, -1, -1, 1, -1, 1, 2, -1)},
		[]*core.Variable{sharedFloatX("g", []int{2, 2, 2, 1}, 1, 2, 3, 4, 5, 6, 7, 8)})
	assertClose(t, "axis=(1, 2)", evalAll(t, steps)[0],
		[]float64{1, 2, 3, 4, 3.6429394, 4.86911616, 5.86911616, 5.96440909}, 1e-5)
}

func TestRemoveNotFinite(t *testing.T) {
	grads := []*core.Variable{sharedFloatX("g1", nil, math.NaN()), sharedFloatX("g2", nil, math.Inf(1)), sharedFloatX("g3", nil, 0.123)}
	params := scalars(1, 2, 3)
	steps, _, _ := NewRemoveNotFinite(0.1).ComputeSteps(params, grads)
	out := evalAll(t, steps)
	assertClose(t, "nan", out[0], []float64{0.9}, 1e-6)
	assertClose(t, "inf", out[1], []float64{1.8}, 1e-6)
	assertClose(t, "finite", out[2], []float64{0.123}, 1e-7)
	steps, _, _ = NewRemoveNotFinite(1).ComputeSteps(params, grads)
	out = evalAll(t, steps)
	assertClose(t, "nan scaler 1", out[0], []float64{0}, 0)
	assertClose(t, "inf scaler 1", out[1], []float64{0}, 0)
}

func TestRestrict(t *testing.T) {
	var params, grads []*core.Variable
	for i := range 6 {
		params = append(params, sharedFloatX("p", nil, float64(i)))
		grads = append(grads, sharedFloatX("g", nil, float64(i*i)))
	}
	steps, ups, _ := NewRestrict(NewScale(nd.Float32, 0.1), []*core.Variable{params[1], params[4]}).ComputeSteps(params, grads)
	out := evalAll(t, steps)
	for i, w := range []float64{0, 0.1, 4, 9, 1.6, 25} {
		assertClose(t, "Restrict", out[i], []float64{w}, 1e-6)
	}
	if len(ups) != 0 {
		t.Errorf("updates %v", ups)
	}
	// A rule with updates: only the restricted parameters get them.
	steps, ups, _ = NewRestrict(NewBasicMomentum(nd.Float32, 0.5), []*core.Variable{params[1], params[4]}).ComputeSteps(params, grads)
	if len(ups) != 2 || ups[0].Shared.Tag.ForParameter != params[1] || ups[1].Shared.Tag.ForParameter != params[4] {
		t.Errorf("Restrict updates %v", ups)
	}
	if steps[0] != grads[0] || steps[5] != grads[5] {
		t.Error("unrestricted steps changed")
	}
}

// reference is a float64 implementation of a step rule written from
// Blocks' formulas, independent of the fused kernels.
type reference interface {
	step(k int, p, g []float64) []float64 // k: parameter index
}

type refState map[int]map[string][]float64

func (s refState) buf(k int, name string, n int) []float64 {
	if s[k] == nil {
		s[k] = map[string][]float64{}
	}
	if s[k][name] == nil {
		s[k][name] = make([]float64, n)
	}
	return s[k][name]
}

type refMomentum struct {
	lr, m float64
	s     refState
}

func (r *refMomentum) step(k int, p, g []float64) []float64 {
	v := r.s.buf(k, "v", len(g))
	out := make([]float64, len(g))
	for i := range g {
		v[i] = r.m*v[i] + r.lr*g[i]
		out[i] = v[i]
	}
	return out
}

type refAdaDelta struct {
	d, eps float64
	s      refState
}

func (r *refAdaDelta) step(k int, p, g []float64) []float64 {
	ms, md := r.s.buf(k, "ms", len(g)), r.s.buf(k, "md", len(g))
	out := make([]float64, len(g))
	for i := range g {
		ms[i] = r.d*ms[i] + (1-r.d)*g[i]*g[i]
		dx := math.Sqrt(md[i]+r.eps) / math.Sqrt(ms[i]+r.eps) * g[i]
		md[i] = r.d*md[i] + (1-r.d)*dx*dx
		out[i] = dx
	}
	return out
}

type refRMSProp struct {
	lr, d, maxScaling float64
	s                 refState
}

func (r *refRMSProp) step(k int, p, g []float64) []float64 {
	ms := r.s.buf(k, "ms", len(g))
	out := make([]float64, len(g))
	for i := range g {
		ms[i] = r.d*ms[i] + (1-r.d)*g[i]*g[i]
		out[i] = r.lr * g[i] / math.Max(math.Sqrt(ms[i]), 1/r.maxScaling)
	}
	return out
}

type refAdaGrad struct {
	lr, eps float64
	s       refState
}

func (r *refAdaGrad) step(k int, p, g []float64) []float64 {
	q := r.s.buf(k, "q", len(g))
	out := make([]float64, len(g))
	for i := range g {
		q[i] += g[i] * g[i]
		out[i] = r.lr * g[i] / (math.Sqrt(q[i]) + r.eps)
	}
	return out
}

type refAdam struct {
	lr, b1, b2, eps, decay float64
	s                      refState
}

func (r *refAdam) step(k int, p, g []float64) []float64 {
	m, v, tm := r.s.buf(k, "m", len(g)), r.s.buf(k, "v", len(g)), r.s.buf(k, "t", 1)
	tm[0]++
	t := tm[0]
	b1 := r.b1 * math.Pow(r.decay, t-1)
	lr := r.lr * math.Sqrt(1-math.Pow(r.b2, t)) / (1 - math.Pow(b1, t))
	out := make([]float64, len(g))
	for i := range g {
		m[i] = b1*m[i] + (1-b1)*g[i]
		v[i] = r.b2*v[i] + (1-r.b2)*g[i]*g[i]
		out[i] = lr * m[i] / (math.Sqrt(v[i]) + r.eps)
	}
	return out
}

// refClipThenScale is CompositeRule(StepClipping(th), Scale(lr)) over all
// parameters together.
type refClip struct{ th, lr float64 }

func (r *refClip) all(gs [][]float64) [][]float64 {
	var ss float64
	for _, g := range gs {
		for _, x := range g {
			ss += x * x
		}
	}
	mult := 1.0
	if n := math.Sqrt(ss); n >= r.th {
		mult = r.th / n
	}
	out := make([][]float64, len(gs))
	for k, g := range gs {
		out[k] = make([]float64, len(g))
		for i := range g {
			out[k][i] = r.lr * g[i] * mult
		}
	}
	return out
}

// TestAgainstFloat64Reference trains two parameters (3×4 and 5) with
// each rule for 6 steps of random gradients, through GradientDescent, and
// compares the parameters with a float64 reference after every step.
// Parameters and buffers are float32 (floatX): the tolerance, 2e-5
// relative to the largest parameter, covers float32 rounding over 6 steps.
func TestAgainstFloat64Reference(t *testing.T) {
	type mk func() (StepRule, reference, *refClip)
	cases := map[string]mk{
		"Scale": func() (StepRule, reference, *refClip) {
			return NewScale(nd.Float32, 0.3), &refMomentum{lr: 0.3, m: 0, s: refState{}}, nil
		},
		"Momentum": func() (StepRule, reference, *refClip) {
			return NewMomentum(nd.Float32, 0.1, 0.9), &refMomentum{lr: 0.1, m: 0.9, s: refState{}}, nil
		},
		"AdaDelta": func() (StepRule, reference, *refClip) {
			r, _ := NewAdaDelta(nd.Float32, 0.95, 1e-6)
			return r, &refAdaDelta{d: 0.95, eps: 1e-6, s: refState{}}, nil
		},
		"RMSProp": func() (StepRule, reference, *refClip) {
			r, _ := NewRMSProp(nd.Float32, 0.01, 0.9, 1e5)
			return r, &refRMSProp{lr: 0.01, d: 0.9, maxScaling: 1e5, s: refState{}}, nil
		},
		"AdaGrad": func() (StepRule, reference, *refClip) {
			return NewAdaGrad(nd.Float32, 0.002, 1e-6), &refAdaGrad{lr: 0.002, eps: 1e-6, s: refState{}}, nil
		},
		"Adam": func() (StepRule, reference, *refClip) {
			return NewAdam(nd.Float32, 0.01, 0.9, 0.999, 1e-8, 0.99), &refAdam{lr: 0.01, b1: 0.9, b2: 0.999, eps: 1e-8, decay: 0.99, s: refState{}}, nil
		},
		"StepClipping+Scale": func() (StepRule, reference, *refClip) {
			th := 1.5
			return NewCompositeRule(NewStepClipping(nd.Float32, &th), NewScale(nd.Float32, 0.5)), nil, &refClip{th: 1.5, lr: 0.5}
		},
	}
	for name, mk := range cases {
		rule, ref, clip := mk()
		rng := rand.New(rand.NewPCG(1, 2))
		shapes := [][]int{{3, 4}, {5}}
		var params, grads []*core.Variable
		var pref [][]float64
		for k, sh := range shapes {
			n := nd.Prod(sh)
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = rng.NormFloat64()
			}
			p := sharedFloatX("p"+string(rune('0'+k)), sh, xs...)
			params = append(params, p)
			// Store the float32-rounded start values in the reference.
			pref = append(pref, p.Value().Float64s())
			grads = append(grads, sharedFloatX("g", sh))
		}
		gs := make([]Gradient, len(params))
		for k := range params {
			gs[k] = Gradient{params[k], grads[k]}
		}
		gd, err := NewGradientDescent(GradientDescentConfig{Gradients: gs, Parameters: params, StepRule: rule})
		if err != nil {
			t.Fatal(name, err)
		}
		if err := gd.Initialize(); err != nil {
			t.Fatal(name, err)
		}
		for step := range 6 {
			var gvals [][]float64
			for k := range params {
				n := nd.Prod(shapes[k])
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = 2 * rng.NormFloat64()
				}
				setValue(t, grads[k], xs...)
				gvals = append(gvals, grads[k].Value().Float64s())
			}
			if err := gd.ProcessBatch(map[string]*nd.Array{}); err != nil {
				t.Fatal(name, err)
			}
			var steps [][]float64
			if clip != nil {
				steps = clip.all(gvals)
			} else {
				for k := range params {
					steps = append(steps, ref.step(k, pref[k], gvals[k]))
				}
			}
			for k := range params {
				got := params[k].Value().Float64s()
				scale := 0.0
				for i := range pref[k] {
					pref[k][i] -= steps[k][i]
					scale = math.Max(scale, math.Abs(pref[k][i]))
				}
				for i := range got {
					if math.Abs(got[i]-pref[k][i]) > 2e-5*scale {
						t.Fatalf("%s step %d parameter %d[%d]: got %v, reference %v", name, step+1, k, i, got[i], pref[k][i])
					}
				}
			}
		}
	}
}

func TestBuffersNamedAndEnumerated(t *testing.T) {
	W := sharedFloatX("W", []int{2, 2}, 1, 2, 3, 4)
	b := sharedFloatX("b", []int{2}, 1, 1)
	W2 := sharedFloatX("W", []int{2}, 1, 1)
	cost := core.Add(core.Add(core.SumAll(core.Sqr(W)), core.SumAll(core.Sqr(b))), core.SumAll(core.Sqr(W2)))
	paths := map[*core.Variable]string{W: "/mlp/linear_0.W", b: "/mlp/linear_0.b", W2: "/mlp/linear_1.W"}
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W, b, W2},
		StepRule:      NewCompositeRule(NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 1), NewBasicMomentum(nd.Float32, 0.5)),
		ParameterName: func(p *core.Variable) string { return paths[p] }})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, buf := range gd.Buffers() {
		if !core.HasRole(buf, core.AlgorithmBuffer) {
			t.Errorf("%s has roles %v", buf.Name, buf.Tag.Roles)
		}
		names = append(names, buf.Name)
	}
	want := "/mlp/linear_0.W_mean /mlp/linear_0.W_variance /mlp/linear_0.W_time /mlp/linear_0.b_mean /mlp/linear_0.b_variance " +
		"/mlp/linear_0.b_time /mlp/linear_1.W_mean /mlp/linear_1.W_variance /mlp/linear_1.W_time " +
		"/mlp/linear_0.W_velocity /mlp/linear_0.b_velocity /mlp/linear_1.W_velocity"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("buffers\n got %s\nwant %s", got, want)
	}
	// Without a naming function, colliding names get the position.
	gd, _ = NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W, b, W2}, StepRule: NewBasicMomentum(nd.Float32, 0.5)})
	names = nil
	for _, buf := range gd.Buffers() {
		names = append(names, buf.Name)
	}
	if got := strings.Join(names, " "); got != "W_0_velocity b_velocity W_2_velocity" {
		t.Errorf("buffers %s", got)
	}
}

func TestUpdatesAlgorithm(t *testing.T) {
	x := core.NewInput("x", nd.Float64, 1)
	acc := core.NewShared(vec(0), "acc")
	ua, err := NewUpdatesAlgorithm([]core.Update{{Shared: acc, Value: core.Add(acc, core.SumAll(x))}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ua.Initialize(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := ua.ProcessBatch(map[string]*nd.Array{"x": vec(1, 2)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := acc.Value().Flat(0); got != 9 {
		t.Errorf("acc = %v, want 9", got)
	}
	err = ua.ProcessBatch(map[string]*nd.Array{"x": vec(1), "y": vec(2)})
	if err == nil || !strings.Contains(err.Error(), "UpdatesAlgorithm") {
		t.Errorf("unused source: %v", err)
	}
	if _, err := NewUpdatesAlgorithm(nil, "shout"); err == nil {
		t.Error("bad on_unused_sources accepted")
	}
}
