package core

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// dotOp is the matrix product of 1-d and 2-d operands (Theano's dot), with
// optional transposition of 2-d operands folded into the BLAS call.
type dotOp struct{ transA, transB bool }

func (o dotOp) String() string {
	switch {
	case o.transA:
		return "Dot{A.T}"
	case o.transB:
		return "Dot{B.T}"
	}
	return "Dot"
}

func (o dotOp) Type(in []*Variable) (nd.DType, int, error) {
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
func (o dotOp) dims(as, bs []int) (m, k, k2, n int) {
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

func (o dotOp) Shape(in [][]int) ([]int, error) {
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

func (o dotOp) Run(out *nd.Array, in []*nd.Array) {
	a, b := in[0], in[1]
	m, k, _, n := o.dims(a.Shape, b.Shape)
	lda, ldb := k, n
	if o.transA && a.NDim() == 2 {
		lda = m
	}
	if o.transB && b.NDim() == 2 {
		ldb = k
	}
	tA, tB := o.transA && a.NDim() == 2, o.transB && b.NDim() == 2
	switch c := out.Data.(type) {
	case []float32:
		if m == 0 || n == 0 {
			return
		}
		if k == 0 {
			clear(c)
			return
		}
		kernels.SplitGemm(tA, tB, m, n, k, a.F32(), lda, b.F32(), ldb, c)
	case []float64:
		if m == 0 || n == 0 {
			return
		}
		if k == 0 {
			clear(c)
			return
		}
		kernels.SplitGemm(tA, tB, m, n, k, a.F64(), lda, b.F64(), ldb, c)
	default:
		// Integer products: a plain triple loop.
		at := func(i, p int) float64 {
			if tA {
				return a.Flat(p*lda + i)
			}
			return a.Flat(i*lda + p)
		}
		bt := func(p, j int) float64 {
			if tB {
				return b.Flat(j*ldb + p)
			}
			return b.Flat(p*ldb + j)
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					s += at(i, p) * bt(p, j)
				}
				out.SetFlat(i*n+j, s)
			}
		}
	}
}

func (o dotOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
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
				ga = apply(dotOp{transB: true}, b, gz)
			} else {
				ga = apply(dotOp{transA: true, transB: true}, b, gz)
			}
		} else if o.transB {
			ga = apply(dotOp{}, gz, b)
		} else {
			ga = apply(dotOp{transB: true}, gz, b)
		}
		if o.transB {
			if o.transA {
				gb = apply(dotOp{transA: true, transB: true}, gz, a)
			} else {
				gb = apply(dotOp{transA: true}, gz, a)
			}
		} else if o.transA {
			gb = apply(dotOp{}, a, gz)
		} else {
			gb = apply(dotOp{transA: true}, a, gz)
		}
		return []*Variable{ga, gb}
	case a.ndim == 1 && b.ndim == 2:
		// out_j = Σ_p a_p B_pj
		var ga, gb *Variable
		if o.transB {
			ga = apply(dotOp{}, gz, b)
			gb = outer(gz, a)
		} else {
			ga = apply(dotOp{}, b, gz)
			gb = outer(a, gz)
		}
		return []*Variable{ga, gb}
	case a.ndim == 2 && b.ndim == 1:
		// out_i = Σ_p A_ip b_p
		var ga, gb *Variable
		if o.transA {
			ga = outer(b, gz)
			gb = apply(dotOp{}, a, gz)
		} else {
			ga = outer(gz, b)
			gb = apply(dotOp{transA: true}, a, gz)
		}
		return []*Variable{ga, gb}
	}
	return []*Variable{Mul(gz, b), Mul(gz, a)}
}

// outer is the outer product of two vectors.
func outer(u, v *Variable) *Variable {
	return apply(dotOp{}, apply(dimshuffleOp{[]int{0, -1}}, u), apply(dimshuffleOp{[]int{-1, 0}}, v))
}

// Dot is Theano's dot for 1-d and 2-d operands. Mixed dtypes are promoted.
func Dot(a, b *Variable) (*Variable, error) {
	if a.ndim < 1 || a.ndim > 2 || b.ndim < 1 || b.ndim > 2 {
		return nil, fmt.Errorf("dot takes 1-d or 2-d operands, got %s (%d-d) and %s (%d-d)", a, a.ndim, b, b.ndim)
	}
	dt := resultType(a, b)
	return tryApply(dotOp{}, as(a, dt), as(b, dt))
}
