package graph

import (
	"math"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// mlp2 builds x -> h1 = tanh(x W1) -> h2 = tanh(h1 W2) -> cost = Σ c ⊙ h2,
// in float64, with fixed weights.
type mlp2 struct {
	x, w1, w2, h1, h2, cost *core.Variable
	g                       *ComputationGraph
	xv                      *nd.Array
}

func newMLP2(t *testing.T) *mlp2 {
	t.Helper()
	m := &mlp2{}
	rng := numpyrand.New(5)
	fill := func(shape ...int) *nd.Array {
		a := nd.New(nd.Float64, shape...)
		rng.FillNormal(a.F64(), 0, 1)
		return a
	}
	m.x = core.NewInput("x", nd.Float64, 2)
	m.w1 = core.NewShared(fill(3, 4), "W1")
	m.w2 = core.NewShared(fill(4, 5), "W2")
	core.AddRole(m.w1, core.Weight)
	core.AddRole(m.w2, core.Weight)
	d1, _ := core.Dot(m.x, m.w1)
	m.h1 = core.Tanh(d1)
	m.h1.Name = "h1"
	d2, _ := core.Dot(m.h1, m.w2)
	m.h2 = core.Tanh(d2)
	m.h2.Name = "h2"
	c := core.NewConstant(fill(1, 5))
	m.cost = core.SumAll(core.Mul(m.h2, c))
	m.cost.Name = "cost"
	m.g = New([]*core.Variable{m.cost})
	m.xv = fill(6, 3)
	return m
}

func call(t *testing.T, f *core.Function, args ...*nd.Array) []*nd.Array {
	t.Helper()
	out, err := f.Call(args)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compile(t *testing.T, in []*core.Variable, out []*core.Variable) *core.Function {
	t.Helper()
	f, err := core.Compile(in, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// snapshot records what a graph is made of, to check a transform left it
// alone.
func snapshot(g *ComputationGraph) ([]*core.Variable, []*core.Variable, [][]*core.Variable, [][]*core.Role) {
	var ins [][]*core.Variable
	var roles [][]*core.Role
	for _, v := range g.Variables {
		ins = append(ins, slices.Clone(v.Inputs()))
		roles = append(roles, slices.Clone(v.Tag.Roles))
	}
	return slices.Clone(g.Outputs), slices.Clone(g.Variables), ins, roles
}

func sameSnapshot(t *testing.T, what string, g *ComputationGraph, outs, vars []*core.Variable, ins [][]*core.Variable, roles [][]*core.Role) {
	t.Helper()
	o2, v2, i2, r2 := snapshot(g)
	if !slices.Equal(outs, o2) || !slices.Equal(vars, v2) {
		t.Fatalf("%s changed the original graph's variables", what)
	}
	for k := range ins {
		if !slices.Equal(ins[k], i2[k]) || !slices.Equal(roles[k], r2[k]) {
			t.Fatalf("%s changed %s in the original graph", what, vars[k])
		}
	}
}

func TestApplyDropoutLeavesOriginalAndTagsRole(t *testing.T) {
	m := newMLP2(t)
	outs, vars, ins, roles := snapshot(m.g)
	clean := call(t, compile(t, []*core.Variable{m.x}, m.g.Outputs), m.xv)[0].Flat(0)
	dg, err := ApplyDropout(m.g, []*core.Variable{m.h1, m.h2}, 0.5, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "apply_dropout", m.g, outs, vars, ins, roles)
	if again := call(t, compile(t, []*core.Variable{m.x}, m.g.Outputs), m.xv)[0].Flat(0); again != clean {
		t.Errorf("original graph computes %v after apply_dropout, %v before", again, clean)
	}
	drop, _ := (&VariableFilter{Roles: []*core.Role{core.Dropout}}).Apply(dg.Variables)
	if len(drop) != 2 {
		t.Fatalf("%d DROPOUT variables, want 2", len(drop))
	}
	// h2's replacement is computed from h1's replacement (Blocks replaces
	// in topological order, rewriting later replacements).
	if got := core.RandomOps([]*core.Variable{drop[1]}); len(got) != 2 || got[0].RNG() != got[1].RNG() {
		t.Errorf("random ops above dropout(h2): %d, want 2 sharing one generator", len(got))
	}
	nMasks := 0
	for _, v := range core.Ancestors([]*core.Variable{drop[1]}) {
		if v.Name == "dropout_mask" {
			nMasks++
		}
	}
	if nMasks != 2 {
		t.Errorf("dropout(h2) depends on %d masks, want 2 (its own and h1's)", nMasks)
	}
}

// The masks are numpy's RandomState(seed).binomial(1, 1-p) draws, in the
// order the compiled function meets them, fresh at every call.
func TestDropoutMasksComeFromTheSeed(t *testing.T) {
	x := core.NewInput("x", nd.Float64, 2)
	y := x.Copy()
	g := New([]*core.Variable{y})
	run := func(seed uint32) [][]float64 {
		dg, err := ApplyDropout(g, []*core.Variable{y}, 0.3, seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := compile(t, []*core.Variable{x}, dg.Outputs)
		ones := nd.New(nd.Float64, 4, 5)
		for i := range ones.F64() {
			ones.F64()[i] = 1
		}
		var out [][]float64
		for range 3 {
			out = append(out, slices.Clone(call(t, f, ones)[0].F64()))
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	ref := numpyrand.New(7)
	for k := range a {
		if !slices.Equal(a[k], b[k]) {
			t.Fatalf("call %d: same seed gave different masks", k)
		}
		if slices.Equal(a[k], c[k]) {
			t.Errorf("call %d: seeds 7 and 8 gave the same mask", k)
		}
		for i, v := range a[k] {
			want := float64(ref.Binomial(1, 0.7)) / 0.7
			if v != want {
				t.Fatalf("call %d, element %d: %v, want %v (numpy's binomial draw / 0.7)", k, i, v, want)
			}
		}
	}
	if slices.Equal(a[0], a[1]) {
		t.Error("the mask did not change between calls")
	}
}

// Over many masks the mean of the dropped-out output is the clean output:
// each element is h·B/(1-p), B ~ Bernoulli(1-p), of variance h²p/(1-p); over
// n calls the mean's standard error is |h|·sqrt(p/((1-p)n)). 5 standard
// errors keep the false-failure rate below 1e-6 per element.
func TestDropoutExpectationIsClean(t *testing.T) {
	m := newMLP2(t)
	const p, n = 0.4, 4000
	dg, err := ApplyDropout(m.g, []*core.Variable{m.h1}, p, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The output whose expectation is exact is h1 itself (h2 is nonlinear
	// in h1): look at the dropped-out h1.
	drop, _ := (&VariableFilter{Roles: []*core.Role{core.Dropout}}).Apply(dg.Variables)
	f := compile(t, []*core.Variable{m.x}, []*core.Variable{drop[0], m.h1})
	var sum []float64
	var clean []float64
	for range n {
		o := call(t, f, m.xv)
		if sum == nil {
			sum = make([]float64, o[0].Size())
			clean = o[1].F64()
		}
		for i, v := range o[0].F64() {
			sum[i] += v
		}
	}
	for i := range sum {
		mean := sum[i] / n
		se := math.Abs(clean[i]) * math.Sqrt(p/((1-p)*n))
		if math.Abs(mean-clean[i]) > 5*se+1e-12 {
			t.Errorf("element %d: mean over %d masks %.5f, clean %.5f (standard error %.5f)", i, n, mean, clean[i], se)
		}
	}
}

// Gradients flow only through kept units: with the mask of one call fixed,
// the gradient with respect to W1 matches central finite differences of the
// cost computed in float64 here, and the gradient with respect to h1 is zero
// exactly where the mask dropped a unit.
func TestDropoutGradientOnlyThroughKeptUnits(t *testing.T) {
	m := newMLP2(t)
	const p = 0.5
	dg, err := ApplyDropout(m.g, []*core.Variable{m.h1}, p, 11, nil)
	if err != nil {
		t.Fatal(err)
	}
	cost := dg.Outputs[0]
	var mask *core.Variable
	for _, v := range dg.Variables {
		if v.Name == "dropout_mask" {
			mask = v
		}
	}
	grads, err := core.Grad(cost, []*core.Variable{m.w1, m.h1}, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := compile(t, []*core.Variable{m.x}, []*core.Variable{cost, grads[0], grads[1], mask})
	o := call(t, f, m.xv)
	gw, gh, mv := o[1].F64(), o[2].F64(), o[3].F64()
	kept := 0
	for i, mk := range mv {
		if mk == 0 && gh[i] != 0 {
			t.Errorf("gradient %v reaches dropped unit %d", gh[i], i)
		}
		if mk == 1 {
			kept++
			if gh[i] == 0 {
				t.Errorf("no gradient through kept unit %d", i)
			}
		}
	}
	if kept == 0 || kept == len(mv) {
		t.Fatalf("degenerate mask %v", mv)
	}
	// Reference cost in float64 with the same mask.
	w1 := m.w1.Value().F64()
	w2 := m.w2.Value().F64()
	var cvec []float64
	for _, v := range m.g.Variables {
		if v.IsConstant() && v.NDim() == 2 {
			cvec = v.Value().F64()
		}
	}
	x := m.xv.F64()
	ref := func(w1 []float64) float64 {
		s := 0.0
		for b := range 6 {
			var h1 [4]float64
			for j := range 4 {
				a := 0.0
				for i := range 3 {
					a += x[b*3+i] * w1[i*4+j]
				}
				h1[j] = math.Tanh(a) * mv[b*4+j] / (1 - p)
			}
			for k := range 5 {
				a := 0.0
				for j := range 4 {
					a += h1[j] * w2[j*5+k]
				}
				s += math.Tanh(a) * cvec[k]
			}
		}
		return s
	}
	if c := ref(w1); math.Abs(c-o[0].Flat(0)) > 1e-12 {
		t.Fatalf("cost %v, reference %v", o[0].Flat(0), c)
	}
	// Central differences with h = 1e-6 have truncation error O(h²) ~ 1e-12
	// and rounding error ~ 1e-16/h ~ 1e-10: 1e-7 leaves a wide margin.
	const h = 1e-6
	for i := range w1 {
		wp, wm := slices.Clone(w1), slices.Clone(w1)
		wp[i] += h
		wm[i] -= h
		fd := (ref(wp) - ref(wm)) / (2 * h)
		if math.Abs(fd-gw[i]) > 1e-7 {
			t.Errorf("dC/dW1[%d] = %v, finite differences %v", i, gw[i], fd)
		}
	}
}

func TestApplyNoise(t *testing.T) {
	m := newMLP2(t)
	outs, vars, ins, roles := snapshot(m.g)
	ng, err := ApplyNoise(m.g, []*core.Variable{m.w1, m.w2}, 0.1, 4)
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "apply_noise", m.g, outs, vars, ins, roles)
	var noisy *core.Variable
	for _, v := range ng.Variables {
		if v.Name == "W1_noisy" {
			noisy = v
		}
	}
	if noisy == nil {
		t.Fatal("no W1_noisy in the noisy graph")
	}
	f := compile(t, nil, []*core.Variable{noisy})
	// The first draw of the call is W1's noise: numpy's
	// RandomState(4).normal(0, 0.1, 12).
	ref := numpyrand.New(4)
	got := call(t, f)[0].F64()
	for i, v := range got {
		want := m.w1.Value().F64()[i] + ref.Normal(0, 0.1)
		if v != want {
			t.Fatalf("W1_noisy[%d] = %v, want %v", i, v, want)
		}
	}
	// Over many calls the noise has mean 0 and standard deviation 0.1.
	var s, s2 float64
	const n = 500
	for range n {
		for i, v := range call(t, f)[0].F64() {
			d := v - m.w1.Value().F64()[i]
			s += d
			s2 += d * d
		}
	}
	k := float64(n * 12)
	mean, std := s/k, math.Sqrt(s2/k-(s/k)*(s/k))
	// 6000 draws: the mean's standard error is 0.1/sqrt(6000) ≈ 0.0013,
	// the std's about 0.1/sqrt(12000) ≈ 0.0009.
	if math.Abs(mean) > 0.0065 || math.Abs(std-0.1) > 0.0045 {
		t.Errorf("noise mean %v std %v, want 0 and 0.1", mean, std)
	}
}

func TestCollectParameters(t *testing.T) {
	m := newMLP2(t)
	outs, vars, ins, roles := snapshot(m.g)
	cg, collected, err := CollectParameters(m.g, []*core.Variable{m.w1, m.w2})
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "collect_parameters", m.g, outs, vars, ins, roles)
	if collected.Value().Size() != 12+20 || !core.HasRole(collected, core.Collector) {
		t.Fatalf("collected vector %v", collected.Value().Shape)
	}
	if ps := cg.SharedVariables(); !slices.Contains(ps, collected) || slices.Contains(ps, m.w1) {
		t.Errorf("shared variables of the new graph: %v", ps)
	}
	a := call(t, compile(t, []*core.Variable{m.x}, m.g.Outputs), m.xv)[0].Flat(0)
	b := call(t, compile(t, []*core.Variable{m.x}, cg.Outputs), m.xv)[0].Flat(0)
	if a != b {
		t.Errorf("collected graph computes %v, original %v", b, a)
	}
	coll, _ := (&VariableFilter{Roles: []*core.Role{core.Collected}}).Apply(cg.Variables)
	if len(coll) != 2 {
		t.Errorf("%d COLLECTED variables, want 2", len(coll))
	}
}
