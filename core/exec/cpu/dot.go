package cpu

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// The products' kernels: float products on BLAS, split across the cores
// when large (kernels.SplitGemm); integer products a plain triple loop.

// dot is core.DotOp's kernel: the product of 1-d and 2-d operands, 2-d
// operands transposed as the op says.
func dot(op core.Op, out *nd.Array, in []*nd.Array) {
	o := op.(core.DotOp)
	a, b := in[0], in[1]
	m, k, _, n := o.Dims(a.Shape, b.Shape)
	transA, transB := o.Trans()
	lda, ldb := k, n
	if transA && a.NDim() == 2 {
		lda = m
	}
	if transB && b.NDim() == 2 {
		ldb = k
	}
	tA, tB := transA && a.NDim() == 2, transB && b.NDim() == 2
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

// dotND is core.DotNDOp's kernel: x·W over x's last axis, as the product
// of x's rows and W.
func dotND(op core.Op, out *nd.Array, in []*nd.Array) {
	x, w := in[0], in[1]
	k := x.Shape[len(x.Shape)-1]
	m := 0
	if k > 0 {
		m = x.Size() / k
	} else {
		m = nd.Prod(x.Shape[:len(x.Shape)-1])
	}
	n := w.Shape[1]
	// float data: the product straight on the buffers (no 2-d views to
	// allocate each call)
	switch c := out.Data.(type) {
	case []float32:
		if a, ok := x.Data.([]float32); ok && gemm(false, false, m, n, k, a, w.F32(), c) == nil {
			return
		}
	case []float64:
		if a, ok := x.Data.([]float64); ok && gemm(false, false, m, n, k, a, w.F64(), c) == nil {
			return
		}
	}
	dot(core.DotOp{}, &nd.Array{Shape: []int{m, n}, Data: out.Data},
		[]*nd.Array{{Shape: []int{m, k}, Data: x.Data}, w})
}

// gemm is c = op(a)·op(b) (m×n) through the Dot op's code path (split
// across the cores when large), after checking that every buffer holds
// what the dimensions say: a bad shape is an error, never a read outside
// a buffer in C.
func gemm[T float32 | float64](tA, tB bool, m, n, k int, a, b, c []T) error {
	if err := gemmCheck(m, n, k, a, b, c); err != nil || m == 0 || n == 0 {
		return err
	}
	if k == 0 {
		clear(c[:m*n])
		return nil
	}
	lda, ldb := k, n
	if tA {
		lda = m
	}
	if tB {
		ldb = k
	}
	kernels.SplitGemm(tA, tB, m, n, k, a[:m*k], lda, b[:k*n], ldb, c[:m*n])
	return nil
}

// gemmCheck says whether the buffers of an (m×k)·(k×n) product hold what
// the dimensions say.
func gemmCheck[T float32 | float64](m, n, k int, a, b, c []T) error {
	if m < 0 || n < 0 || k < 0 || len(a) < m*k || len(b) < k*n || len(c) < m*n {
		return fmt.Errorf("recurrent product (%d×%d)·(%d×%d) with buffers of %d, %d and %d elements", m, k, k, n, len(a), len(b), len(c))
	}
	return nil
}
