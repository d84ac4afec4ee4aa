package core_test

import (
	"math"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// The gradient passes through a reparameterized sample z = mu +
// exp(log_sigma) * eps, eps a stream's normal draw with a symbolic size
// (x.shape[0], 3): the symbolic gradient of cost = sum(z^2 * x) with
// respect to mu and log_sigma equals central finite differences of the
// compiled cost, each evaluated with the generator put back where it was,
// so that every evaluation draws the same eps.
func TestRandomStreamsReparameterizedGradient(t *testing.T) {
	s := core.NewRandomStreams(42)
	x := core.NewInput("x", nd.Float64, 2)
	mu := core.NewShared(nd.FromSlice([]float64{0.3, -0.2, 0.1}, 3), "mu")
	ls := core.NewShared(nd.FromSlice([]float64{-0.5, 0.2, 0.0}, 3), "log_sigma")
	n, err := core.ShapeI(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := s.Draw(core.DistNormal, 0, 1, nd.Float64, []*core.Variable{n, core.Const(nd.Int64, 3)})
	if err != nil {
		t.Fatal(err)
	}
	z := core.Add(mu, core.Mul(core.Exp(ls), eps))
	cost := core.SumAll(core.Mul(core.Sqr(z), x))
	grads, err := core.Grad(cost, []*core.Variable{mu, ls}, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := core.Compile([]*core.Variable{x}, []*core.Variable{cost, grads[0], grads[1], eps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	costOnly, err := core.Compile([]*core.Variable{x}, []*core.Variable{cost}, nil)
	if err != nil {
		t.Fatal(err)
	}
	xv := nd.FromSlice([]float64{1, 2, 0.5, 1.5, 1, 3, 0.25, 1, 2, 1, 1, 1}, 4, 3)
	gen := s.Generators()[0]
	st := gen.State()
	out, err := f.Call([]*nd.Array{xv})
	if err != nil {
		t.Fatal(err)
	}
	if out[3].Shape[0] != 4 || out[3].Shape[1] != 3 {
		t.Fatalf("eps has shape %v, want [4 3]", out[3].Shape)
	}
	// eps is numpy's RandomState(RandomState(42).randint(2**30)).normal(size=(4, 3)).
	want := numpyrand.New(uint32(numpyrand.New(42).Randint(0, 1<<30)))
	for i, e := range out[3].F64() {
		if w := want.Normal(0, 1); e != w {
			t.Fatalf("eps[%d] = %v, numpy's %v", i, e, w)
		}
	}
	symbolic := [][]float64{out[1].F64(), out[2].F64()}
	for k, p := range []*core.Variable{mu, ls} {
		for i := range 3 {
			eval := func(d float64) float64 {
				v := p.Value().F64()
				old := v[i]
				v[i] = old + d
				defer func() { v[i] = old }()
				gen.SetState(st)
				o, err := costOnly.Call([]*nd.Array{xv})
				if err != nil {
					t.Fatal(err)
				}
				return o[0].Flat(0)
			}
			// Central differences in float64: error O(h^2) ~ 1e-10 here.
			const h = 1e-5
			fd := (eval(h) - eval(-h)) / (2 * h)
			if g := symbolic[k][i]; math.Abs(g-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("d cost / d %s[%d] = %v, finite differences %v", p.Name, i, g, fd)
			}
		}
	}
	// The gradient with respect to log_sigma is not zero: the sample
	// depends on it.
	if symbolic[1][0] == 0 {
		t.Error("the gradient does not reach log_sigma")
	}
	// The next call draws new numbers.
	gen.SetState(st)
	a, _ := f.Call([]*nd.Array{xv})
	b, _ := f.Call([]*nd.Array{xv})
	if a[3].F64()[0] == b[3].F64()[0] {
		t.Error("two calls drew the same eps")
	}
}

// Each draw of a stream has its own generator, seeded as Theano's
// RandomStreams seeds it: RandomState(seedgen.randint(2**30)), seedgen =
// RandomState(seed); Reseed restarts them as Theano's seed() does.
func TestRandomStreamsGenerators(t *testing.T) {
	s := core.NewRandomStreams(7)
	for range 3 {
		if _, err := s.Draw(core.DistUniform, 0, 1, nd.Float32, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Draw(core.DistBinomial, 1, 2, nd.Int64, nil); err == nil {
		t.Error("binomial p=2 accepted")
	}
	gens := s.Generators()
	if len(gens) != 3 {
		t.Fatalf("%d generators after 3 draws and a refused one, want 3", len(gens))
	}
	seedgen := numpyrand.New(7)
	for i, g := range gens {
		if g.State() != numpyrand.New(uint32(seedgen.Randint(0, 1<<30))).State() {
			t.Errorf("draw %d's generator is not seeded as Theano's", i)
		}
	}
	gens[0].Uniform(0, 1)
	s.Reseed(9)
	seedgen = numpyrand.New(9)
	for i, g := range gens {
		if g.State() != numpyrand.New(uint32(seedgen.Randint(0, 1<<30))).State() {
			t.Errorf("draw %d after Reseed(9) is not RandomState(RandomState(9).randint(2**30))", i)
		}
	}
}
