package core

import (
	"fmt"
	"math"

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
		splitGemm(tA, tB, m, n, k, a.F32(), lda, b.F32(), ldb, c)
	case []float64:
		if m == 0 || n == 0 {
			return
		}
		if k == 0 {
			clear(c)
			return
		}
		splitGemm(tA, tB, m, n, k, a.F64(), lda, b.F64(), ldb, c)
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

// gemmJob is one product C = op(A)·op(B), split by row blocks of C (part
// i computes rows partRange(m, 16, i, parts) with one BLAS call), or by
// column blocks when C has more columns than rows.
type gemmJob[T float32 | float64] struct {
	tA, tB  bool
	m, n, k int
	a       []T
	lda     int
	b       []T
	ldb     int
	c       []T
}

// part is part i of parts: the rows (m) and columns (n) of C it computes
// and where its A, B and C start (C's row stride stays j.n).
func (j *gemmJob[T]) part(i, parts int) (m, n int, a, b, c []T) {
	if j.n > j.m { // C wider than tall: each part packs only its share of B
		lo, hi := partRange(j.n, 16, i, parts)
		if lo >= hi {
			return 0, 0, nil, nil, nil
		}
		if j.tB {
			b = j.b[lo*j.ldb:]
		} else {
			b = j.b[lo:]
		}
		return j.m, hi - lo, j.a, b, j.c[lo:]
	}
	lo, hi := partRange(j.m, 16, i, parts)
	if lo >= hi {
		return 0, 0, nil, nil, nil
	}
	if j.tA {
		a = j.a[lo:]
	} else {
		a = j.a[lo*j.lda:]
	}
	return hi - lo, j.n, a, j.b, j.c[lo*j.n : hi*j.n]
}

// runPart computes part i of parts with one BLAS call.
func (j *gemmJob[T]) runPart(i, parts int) {
	m, n, a, b, c := j.part(i, parts)
	if m == 0 || n == 0 {
		return
	}
	switch a := any(a).(type) {
	case []float32:
		blasImpl.Sgemm(trans(j.tA), trans(j.tB), m, n, j.k, 1, a, j.lda, any(b).([]float32), j.ldb, 0, any(c).([]float32), j.n)
	case []float64:
		blasImpl.Dgemm(trans(j.tA), trans(j.tB), m, n, j.k, 1, a, j.lda, any(b).([]float64), j.ldb, 0, any(c).([]float64), j.n)
	}
}

// gemmParts is how many row blocks a product runs in: one unless it is
// large enough (CPUSettings.MinGemmSplit multiply-adds, 32 rows or more)
// for the split to pay, and only when core threads the products
// (blas.go).
func gemmParts(m, n, k int) int {
	if !gemmSplit || max(m, n) < 32 || m*n*k < cpuSettings().MinGemmSplit {
		return 1
	}
	return maxParts
}

// splitGemm is C = op(A)·op(B) for row-major C (m×n), split into row (or
// column) blocks when large (gemmParts): the two parts run in one cgo call,
// on the calling thread and a C worker thread (gemm_split.go). While
// another split runs, or when the product is small, the parts run here one
// after the other; the partition, and so every result bit, is the same.
func splitGemm[T float32 | float64](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T) {
	checkGemm(tA, tB, m, n, k, lda, ldb, n, len(a), len(b), len(c))
	j := gemmJob[T]{tA, tB, m, n, k, a, lda, b, ldb, c}
	parts := gemmParts(m, n, k)
	if !lockParts(parts) {
		for i := range parts {
			j.runPart(i, parts)
		}
		return
	}
	defer unlockParts()
	if parts == 2 {
		gemm2(&j)
		return
	}
	runGemmParts(&j, parts)
}

// The job of the running split product (guarded by the split lock), so
// that a split allocates nothing.
var (
	gemmJob32 gemmJob[float32]
	gemmJob64 gemmJob[float64]
)

// runGemmParts runs j in parts on the workers; the caller holds the split
// lock.
func runGemmParts[T float32 | float64](j *gemmJob[T], parts int) {
	switch j := any(j).(type) {
	case *gemmJob[float32]:
		gemmJob32 = *j
		runLocked(&gemmJob32, parts)
		gemmJob32 = gemmJob[float32]{}
	case *gemmJob[float64]:
		gemmJob64 = *j
		runLocked(&gemmJob64, parts)
		gemmJob64 = gemmJob[float64]{}
	}
}

// Sgemm computes the float32 product c (m×n, row-major) = op(a)·op(b), op
// transposing when tA/tB, exactly as the Dot op runs it (OpenBLAS, split
// across the workers when large). a is m×k (k×m when tA), b k×n (n×k when
// tB). For benchmarks measuring the machine's matrix-multiply rate.
func Sgemm(tA, tB bool, m, n, k int, a, b, c []float32) {
	lda, ldb := k, n
	if tA {
		lda = m
	}
	if tB {
		ldb = k
	}
	splitGemm(tA, tB, m, n, k, a, lda, b, ldb, c[:m*n])
}
