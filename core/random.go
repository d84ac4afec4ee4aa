package core

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// Random draws. A random op draws a fresh array every time a compiled
// function runs it (a new dropout mask per batch, new noise per step),
// from its own numpyrand generator, in C order. The draws are numpy's:
// a normal op fills its array with what RandomState.normal(avg, std,
// size) returns, a uniform op with RandomState.uniform(low, high, size), a
// binomial op with RandomState.binomial(n, p, size), a multinomial op with
// RandomState.multinomial(n, pvals) row after row; each number is computed
// in float64 (int64 for counts) and then converted to the op's dtype, as
// numpy's astype converts it. Blocks drew them from Theano's
// MRG_RandomStreams, a different generator, so dropout masks cannot be
// bit-identical to Blocks'; what holds is determinism: the same seed gives
// the same sequence of draws in every run.
//
// The shape of a draw is either that of its first input (BinomialLike,
// NormalLike: dropout's masks) or computed from a size whose dimensions
// read other variables through their shapes only (RandomDraw:
// (x.shape[0], 10)), known when the graph runs.

// Distribution is what a random op draws.
type Distribution int

// The distributions of random ops.
const (
	// DistBinomial: numpy's binomial(n, p).
	DistBinomial Distribution = iota
	// DistNormal: numpy's normal(avg, std).
	DistNormal
	// DistUniform: numpy's uniform(low, high).
	DistUniform
	// DistMultinomial: numpy's multinomial(n, pvals), one row of counts
	// per distribution.
	DistMultinomial
)

// DrawOp draws arrays of dist. It is a pointer so that every rebuilt
// copy of a graph node shares the one generator.
type DrawOp struct {
	dist Distribution
	// a, b are the distribution's parameters: normal (avg, std), uniform
	// (low, high), binomial (n, p), multinomial (n, unused).
	a, b  float64
	dtype nd.DType
	ndim  int
	// shape computes the draw's shape from the shapes of its leaves (the
	// inputs after pvals for a multinomial); nil: the draw is shaped like
	// its first input (for a multinomial: like pvals).
	shape *symShape
	rng   *numpyrand.RandomState
}

var _ RandomOp = (*DrawOp)(nil)

func (o *DrawOp) String() string {
	switch o.dist {
	case DistNormal:
		return fmt.Sprintf("Normal{%g, %g}", o.a, o.b)
	case DistUniform:
		return fmt.Sprintf("Uniform{%g, %g}", o.a, o.b)
	case DistMultinomial:
		return fmt.Sprintf("Multinomial{%g}", o.a)
	}
	return fmt.Sprintf("Binomial{%g, %g}", o.a, o.b)
}

// RNG is the op's generator.
func (o *DrawOp) RNG() *numpyrand.RandomState { return o.rng }

func (o *DrawOp) Type(in []*Variable) (nd.DType, int, error) {
	switch {
	case o.dist == DistMultinomial:
		if len(in) == 0 || in[0].ndim == 0 {
			return 0, 0, fmt.Errorf("%s: pvals must have at least one dimension", o)
		}
		if o.shape != nil {
			return o.dtype, o.shape.ndim + 1, nil
		}
		return o.dtype, in[0].ndim, nil
	case o.shape != nil:
		return o.dtype, o.shape.ndim, nil
	case len(in) != 1:
		return 0, 0, fmt.Errorf("%s takes one input (for its shape), got %d", o, len(in))
	}
	return o.dtype, in[0].ndim, nil
}

func (o *DrawOp) Shape(in [][]int) ([]int, error) {
	if o.dist == DistMultinomial {
		pv := in[0]
		if o.shape == nil {
			return pv, nil
		}
		s, err := o.shape.eval("multinomial", in[1:])
		if err != nil {
			return nil, err
		}
		if len(pv) > 1 {
			// Theano's multinomial_helper: pvals' leading dimensions
			// broadcast against size's trailing ones.
			lead := pv[:len(pv)-1]
			if len(lead) > len(s) {
				return nil, fmt.Errorf("multinomial: pvals has %d dimensions, more than the size's %d plus one", len(pv), len(s))
			}
			for i, d := range lead {
				if sd := s[len(s)-len(lead)+i]; d != 1 && d != sd {
					return nil, fmt.Errorf("multinomial: pvals of shape %v do not broadcast to the size %v", pv, s)
				}
			}
		}
		return append(s, pv[len(pv)-1]), nil
	}
	if o.shape == nil {
		return in[0], nil
	}
	return o.shape.eval(o.String(), in)
}

// Dist is the distribution the op draws from and its parameters: normal
// (avg, std), uniform (low, high), binomial (n, p), multinomial (n,
// unused).
func (o *DrawOp) Dist() (dist Distribution, a, b float64) { return o.dist, o.a, o.b }

// Check refuses pvals that are not distributions (Checker): entries
// outside [0, 1] or NaN, or rows summing to more than 1 + 1e-5 (numpy
// allows 1e-12 over 1 on the first k-1 entries; a float32 softmax's rows
// can be a few ulps over, which Theano's multinomial_helper tolerates up
// to 1e-5 too).
func (o *DrawOp) Check(in []*nd.Array) error {
	if o.dist != DistMultinomial {
		return nil
	}
	pv := in[0]
	k := pv.Shape[len(pv.Shape)-1]
	if k == 0 {
		return fmt.Errorf("multinomial: pvals has no categories (its last dimension is 0)")
	}
	for r := 0; r*k < pv.Size(); r++ {
		s := 0.0
		for j := range k {
			x := pv.Flat(r*k + j)
			if !(x >= 0 && x <= 1) {
				return fmt.Errorf("multinomial: pvals must be probabilities in [0, 1], got %g in row %d", x, r)
			}
			s += x
		}
		if s > 1+1e-5 {
			return fmt.Errorf("multinomial: the pvals of row %d sum to %g, more than 1", r, s)
		}
	}
	return nil
}

// Grad: a random draw does not depend on its inputs' values.
func (o *DrawOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// BinomialLike returns a variable holding, at every call of a compiled
// function, a fresh array shaped like x of binomial(1, p) draws (1 with
// probability p) of dtype dt, drawn from rng.
func BinomialLike(x *Variable, p float64, dt nd.DType, rng *numpyrand.RandomState) (*Variable, error) {
	if !(p >= 0 && p <= 1) {
		return nil, fmt.Errorf("binomial: p must be in [0, 1], got %g", p)
	}
	if rng == nil {
		return nil, fmt.Errorf("binomial: no generator")
	}
	return tryApply(&DrawOp{dist: DistBinomial, a: 1, b: p, dtype: dt, rng: rng}, x)
}

// NormalLike returns a variable holding, at every call, a fresh array
// shaped like x of normal(0, std) draws of dtype dt, drawn from rng.
func NormalLike(x *Variable, std float64, dt nd.DType, rng *numpyrand.RandomState) (*Variable, error) {
	if !(std >= 0) {
		return nil, fmt.Errorf("normal: std must be >= 0, got %g", std)
	}
	if rng == nil {
		return nil, fmt.Errorf("normal: no generator")
	}
	return tryApply(&DrawOp{dist: DistNormal, b: std, dtype: dt, rng: rng}, x)
}

// RandomDraw returns a variable holding, at every call of a compiled
// function, a fresh array of dtype dt drawn from rng: normal(a, b),
// uniform(a, b) or binomial(n=a, p=b), numpy's. size gives the shape as
// AllocShaped's dims do (x.shape, or one int scalar per dimension that
// reads other variables through their shapes only, or constants); an
// empty size draws a 0-d array.
func RandomDraw(dist Distribution, a, b float64, dt nd.DType, size []*Variable, rng *numpyrand.RandomState) (*Variable, error) {
	if rng == nil {
		return nil, fmt.Errorf("random draw: no generator")
	}
	op := &DrawOp{dist: dist, a: a, b: b, dtype: dt, rng: rng}
	switch dist {
	case DistNormal:
		if math.IsNaN(b) || math.Signbit(b) || math.IsInf(a, 0) || math.IsNaN(a) || math.IsInf(b, 0) {
			return nil, fmt.Errorf("normal: want a finite avg and a finite std >= 0, got avg=%g, std=%g", a, b)
		}
	case DistUniform:
		if r := b - a; math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, fmt.Errorf("uniform: high - low must be finite, got low=%g, high=%g", a, b)
		}
	case DistBinomial:
		if a < 0 || a != math.Trunc(a) || a > math.MaxInt32 {
			return nil, fmt.Errorf("binomial: n must be an int >= 0, got %g", a)
		}
		if !(b >= 0 && b <= 1) {
			return nil, fmt.Errorf("binomial: p must be in [0, 1], got %g", b)
		}
	default:
		return nil, fmt.Errorf("random draw: use Multinomial for a multinomial")
	}
	sh, leaves, err := drawShape(op.String(), size)
	if err != nil {
		return nil, err
	}
	op.shape = sh
	return tryApply(op, leaves...)
}

// Multinomial returns a variable holding, at every call, fresh counts of n
// draws from the distributions of pvals (its last axis: the categories),
// of dtype dt, drawn from rng. With no size the counts are shaped like
// pvals (Theano's MRG_RandomStreams.multinomial: one row of counts per row
// of pvals); with a size they have shape size + (k,), pvals' leading
// dimensions broadcasting against size's trailing ones (Theano's
// RandomStreams.multinomial).
func Multinomial(n int64, pvals *Variable, dt nd.DType, size []*Variable, rng *numpyrand.RandomState) (*Variable, error) {
	if rng == nil {
		return nil, fmt.Errorf("multinomial: no generator")
	}
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("multinomial: n must be an int >= 0, got %d", n)
	}
	if pvals.ndim == 0 {
		return nil, fmt.Errorf("multinomial: pvals must have at least one dimension (the categories), got a 0-d variable")
	}
	if !pvals.dtype.IsFloat() {
		pvals = Cast(pvals, nd.Float64)
	}
	op := &DrawOp{dist: DistMultinomial, a: float64(n), dtype: dt, rng: rng}
	ins := []*Variable{pvals}
	if size != nil {
		sh, leaves, err := drawShape("multinomial", size)
		if err != nil {
			return nil, err
		}
		op.shape = sh
		ins = append(ins, leaves...)
	}
	return tryApply(op, ins...)
}

// drawShape reads a draw's size: the symbolic shape and its leaves.
func drawShape(what string, size []*Variable) (*symShape, []*Variable, error) {
	if len(size) == 0 {
		return &symShape{}, nil, nil
	}
	sh, err := newSymShape(what, size)
	if err != nil {
		return nil, nil, err
	}
	return sh, sh.leaves, nil
}

// RandomOps lists the random ops among vars' ancestors, each once, in
// topological order (for checkpoints: their generators' states).
func RandomOps(vars []*Variable) []RandomOp {
	var out []RandomOp
	seen := map[RandomOp]bool{}
	for _, v := range Ancestors(vars) {
		if r, ok := v.op.(RandomOp); ok && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
