package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// Random draws. A random op takes one input, used only for its shape, and
// draws a fresh array of that shape every time a compiled function runs it
// (a new dropout mask per batch), from its own numpyrand generator. The
// draws are numpy's: BinomialLike(x, p) fills the array with what
// RandomState.binomial(1, p, size=x.shape) returns, NormalLike(x, std) with
// RandomState.normal(0, std, size=x.shape), in C order. Blocks drew them from
// Theano's MRG_RandomStreams, a different generator, so the masks cannot be
// bit-identical to Blocks'; what holds is determinism: the same seed gives
// the same sequence of masks in every run.

// randomOp draws binomial(1, p) or normal(0, std) arrays shaped like its
// input. It is a pointer so that every rebuilt copy of a graph node shares
// the one generator.
type randomOp struct {
	normal bool
	p      float64 // success probability (binomial)
	std    float64 // standard deviation (normal)
	dtype  nd.DType
	rng    *numpyrand.RandomState
}

var _ RandomOp = (*randomOp)(nil)

func (o *randomOp) String() string {
	if o.normal {
		return fmt.Sprintf("Normal{0, %g}", o.std)
	}
	return fmt.Sprintf("Binomial{1, %g}", o.p)
}

// RNG is the op's generator.
func (o *randomOp) RNG() *numpyrand.RandomState { return o.rng }

func (o *randomOp) Type(in []*Variable) (nd.DType, int, error) {
	if len(in) != 1 {
		return 0, 0, fmt.Errorf("%s takes one input (for its shape), got %d", o, len(in))
	}
	return o.dtype, in[0].ndim, nil
}

func (o *randomOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

func (o *randomOp) Run(out *nd.Array, in []*nd.Array) {
	n := out.Size()
	switch d := out.Data.(type) {
	case []float32:
		for i := range n {
			d[i] = float32(o.draw())
		}
	case []float64:
		for i := range n {
			d[i] = o.draw()
		}
	default:
		for i := range n {
			out.SetFlat(i, o.draw())
		}
	}
}

func (o *randomOp) draw() float64 {
	if o.normal {
		return o.rng.Normal(0, o.std)
	}
	return float64(o.rng.Binomial(1, o.p))
}

// Grad: a random draw does not depend on its input's values.
func (o *randomOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

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
	return tryApply(&randomOp{p: p, dtype: dt, rng: rng}, x)
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
	return tryApply(&randomOp{normal: true, std: std, dtype: dt, rng: rng}, x)
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
