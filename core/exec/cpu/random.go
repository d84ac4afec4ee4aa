package cpu

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"math"
)

// The random ops' kernel: numpy's legacy draws, from the op's generator
// (the graph's state, which a checkpoint saves).

// draw is core.DrawOp's kernel: numpy's draws from the op's generator, in order.
func draw(op core.Op, out *nd.Array, in []*nd.Array) {
	o := op.(*core.DrawOp)
	dist, pa, pb := o.Dist()
	rng := o.RNG()
	if dist == core.DistMultinomial {
		multinomial(rng, int64(pa), out, in[0])
		return
	}
	n := out.Size()
	switch d := out.Data.(type) {
	case []float32:
		for i := range n {
			d[i] = float32(drawOne(rng, dist, pa, pb))
		}
	case []float64:
		for i := range n {
			d[i] = drawOne(rng, dist, pa, pb)
		}
	default:
		for i := range n {
			out.SetFlat(i, drawOne(rng, dist, pa, pb))
		}
	}
}

// drawOne is one draw from dist with parameters a, b.
func drawOne(rng *numpyrand.RandomState, dist core.Distribution, a, b float64) float64 {
	switch dist {
	case core.DistNormal:
		return rng.Normal(a, b)
	case core.DistUniform:
		return rng.Uniform(a, b)
	}
	return float64(rng.Binomial(int64(a), b))
}

// multinomial fills out row by row: row r holds numpy's
// multinomial(n, p) for p the matching row of pvals (broadcast), as
// Theano's multinomial_helper draws it, with numpy's legacy algorithm: a
// binomial per category on what is left.
func multinomial(rng *numpyrand.RandomState, n int64, out *nd.Array, pvals *nd.Array) {
	k := out.Shape[len(out.Shape)-1]
	rows := 0
	if k > 0 {
		rows = out.Size() / k
	}
	prows := 0
	if k > 0 {
		prows = pvals.Size() / k
	}
	p := make([]float64, k)
	counts := make([]int64, k)
	for r := range rows {
		base := (r % prows) * k
		for j := range k {
			p[j] = pvals.Flat(base + j)
		}
		multinomialRow(rng, n, p, counts)
		for j := range k {
			out.SetFlat(r*k+j, float64(counts[j]))
		}
	}
}

// multinomialRow is numpy's legacy RandomState.multinomial(n, p) for one
// row (mtrand's loop): counts[j] = binomial(left, p[j] / remaining
// probability) until nothing is left, the last category taking the rest.
func multinomialRow(rng *numpyrand.RandomState, n int64, p []float64, counts []int64) {
	for j := range counts {
		counts[j] = 0
	}
	d := len(p)
	sum := 1.0
	left := n
	for j := 0; j < d-1; j++ {
		q := p[j] / sum
		q = math.Min(math.Max(q, 0), 1) // rounding in sum can leave [0, 1] by an ulp
		counts[j] = rng.Binomial(left, q)
		left -= counts[j]
		if left <= 0 {
			break
		}
		sum -= p[j]
	}
	if left > 0 {
		counts[d-1] = left
	}
}
