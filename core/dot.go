package core

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/nd"
)

// DotOp is the matrix product of 1-d and 2-d operands (Theano's dot), with
// optional transposition of 2-d operands folded into the BLAS call.
type DotOp struct{ transA, transB bool }

func (o DotOp) String() string {
	switch {
	case o.transA:
		return "Dot{A.T}"
	case o.transB:
		return "Dot{B.T}"
	}
	return "Dot"
}

func (o DotOp) Type(in []*Variable) (nd.DType, int, error) {
	a, b := in[0], in[1]
	if a.ndim < 1 || a.ndim > 2 || b.ndim < 1 || b.ndim > 2 {
		return 0, 0, fmt.Errorf("dot takes 1-d or 2-d operands, got %d-d %s and %d-d %s", a.ndim, a, b.ndim, b)
	}
	if a.dtype != b.dtype {
		return 0, 0, fmt.Errorf("dot operands must share a dtype, got %s and %s", a.dtype, b.dtype)
	}
	return a.dtype, a.ndim + b.ndim - 2, nil
}

// dims is (m, k) for a and (k, n) for b after transposition; a 1-d a is a
// row and a 1-d b a column.
func (o DotOp) dims(as, bs []int) (m, k, k2, n int) {
	if len(as) == 1 {
		m, k = 1, as[0]
	} else if o.transA {
		m, k = as[1], as[0]
	} else {
		m, k = as[0], as[1]
	}
	if len(bs) == 1 {
		k2, n = bs[0], 1
	} else if o.transB {
		k2, n = bs[1], bs[0]
	} else {
		k2, n = bs[0], bs[1]
	}
	return
}

func (o DotOp) Shape(in [][]int) ([]int, error) {
	m, k, k2, n := o.dims(in[0], in[1])
	if k != k2 {
		return nil, fmt.Errorf("dot: shapes %s and %s are not aligned: %d (dim %d) != %d (dim 0)",
			nd.ShapeString(in[0]), nd.ShapeString(in[1]), k, len(in[0])-1, k2)
	}
	for _, d := range []int{m, k, n} {
		if d > math.MaxInt32 {
			return nil, fmt.Errorf("dot: shapes %s and %s: dimension %d exceeds the 32-bit limit of BLAS (%d)",
				nd.ShapeString(in[0]), nd.ShapeString(in[1]), d, math.MaxInt32)
		}
	}
	var out []int
	if len(in[0]) == 2 {
		out = append(out, m)
	}
	if len(in[1]) == 2 {
		out = append(out, n)
	}
	return out, nil
}

// Trans says whether the product transposes its 2-d operands.
func (o DotOp) Trans() (a, b bool) { return o.transA, o.transB }

// Dims is (m, k) for a and (k2, n) for b after transposition, for operand
// shapes as and bs; a 1-d a is a row and a 1-d b a column.
func (o DotOp) Dims(as, bs []int) (m, k, k2, n int) { return o.dims(as, bs) }

func (o DotOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	a, b := in[0], in[1]
	if !a.dtype.IsFloat() {
		return []*Variable{nil, nil}
	}
	switch {
	case a.ndim == 2 && b.ndim == 2:
		// out = A·B (with A or B possibly transposed).
		var ga, gb *Variable
		if o.transA {
			if !o.transB { // A is (k, m): dA = B·gzᵀ
				ga = apply(DotOp{transB: true}, b, gz)
			} else {
				ga = apply(DotOp{transA: true, transB: true}, b, gz)
			}
		} else if o.transB {
			ga = apply(DotOp{}, gz, b)
		} else {
			ga = apply(DotOp{transB: true}, gz, b)
		}
		if o.transB {
			if o.transA {
				gb = apply(DotOp{transA: true, transB: true}, gz, a)
			} else {
				gb = apply(DotOp{transA: true}, gz, a)
			}
		} else if o.transA {
			gb = apply(DotOp{}, a, gz)
		} else {
			gb = apply(DotOp{transA: true}, a, gz)
		}
		return []*Variable{ga, gb}
	case a.ndim == 1 && b.ndim == 2:
		// out_j = Σ_p a_p B_pj
		var ga, gb *Variable
		if o.transB {
			ga = apply(DotOp{}, gz, b)
			gb = outer(gz, a)
		} else {
			ga = apply(DotOp{}, b, gz)
			gb = outer(a, gz)
		}
		return []*Variable{ga, gb}
	case a.ndim == 2 && b.ndim == 1:
		// out_i = Σ_p A_ip b_p
		var ga, gb *Variable
		if o.transA {
			ga = outer(b, gz)
			gb = apply(DotOp{}, a, gz)
		} else {
			ga = outer(gz, b)
			gb = apply(DotOp{transA: true}, a, gz)
		}
		return []*Variable{ga, gb}
	}
	return []*Variable{Mul(gz, b), Mul(gz, a)}
}

// outer is the outer product of two vectors.
func outer(u, v *Variable) *Variable {
	return apply(DotOp{}, apply(DimshuffleOp{[]int{0, -1}}, u), apply(DimshuffleOp{[]int{-1, 0}}, v))
}

// Dot is Theano's dot for 1-d and 2-d operands. Mixed dtypes are promoted.
func Dot(a, b *Variable) (*Variable, error) {
	if a.ndim < 1 || a.ndim > 2 || b.ndim < 1 || b.ndim > 2 {
		return nil, fmt.Errorf("dot takes 1-d or 2-d operands, got %s (%d-d) and %s (%d-d)", a, a.ndim, b, b.ndim)
	}
	dt := resultType(a, b)
	return tryApply(DotOp{}, as(a, dt), as(b, dt))
}
