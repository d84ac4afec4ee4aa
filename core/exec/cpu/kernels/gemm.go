package kernels

// Float is the element type of the float kernels.
type Float interface{ ~float32 | ~float64 }

// Gemm is C = op(A)·op(B) + beta·C, one BLAS call (row-major, op
// transposing when tA/tB; lda, ldb, ldc the row strides as stored). It
// panics when a buffer is shorter than the call would touch (a bug in the
// caller: shapes are checked before planning).
func Gemm[T Float](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkGemm(tA, tB, m, n, k, lda, ldb, ldc, len(a), len(b), len(c))
	switch a := any(a).(type) {
	case []float32:
		blasImpl.Sgemm(trans(tA), trans(tB), m, n, k, 1, a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blasImpl.Dgemm(trans(tA), trans(tB), m, n, k, 1, a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// gemmJob is one product C = op(A)·op(B), split by row blocks of C (part
// i computes rows PartRange(m, 16, i, parts) with one BLAS call), or by
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
		lo, hi := PartRange(j.n, 16, i, parts)
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
	lo, hi := PartRange(j.m, 16, i, parts)
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

// RunPart computes part i of parts with one BLAS call.
func (j *gemmJob[T]) RunPart(i, parts int) {
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

// GemmParts is how many row blocks a product runs in: one unless it is
// large enough (Settings.MinGemmSplit multiply-adds, 32 rows or more)
// for the split to pay, and only when the backend threads the products
// itself (blas_cgo.go: not when OPENBLAS_NUM_THREADS is set).
func GemmParts(m, n, k int) int {
	if !gemmSplit || max(m, n) < 32 || m*n*k < current().MinGemmSplit {
		return 1
	}
	return MaxParts
}

// SplitsProducts says whether large products split across the workers
// (GemmParts; false when OpenBLAS threads them itself).
func SplitsProducts() bool { return gemmSplit }

// SplitGemm is C = op(A)·op(B) for row-major C (m×n), split into row (or
// column) blocks when large (GemmParts): the two parts run in one cgo call,
// on the calling thread and a C worker thread (gemm2_cgo.go). While
// another split runs, or when the product is small, the parts run here one
// after the other; the partition, and so every result bit, is the same.
func SplitGemm[T float32 | float64](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T) {
	checkGemm(tA, tB, m, n, k, lda, ldb, n, len(a), len(b), len(c))
	j := gemmJob[T]{tA, tB, m, n, k, a, lda, b, ldb, c}
	parts := GemmParts(m, n, k)
	if !LockParts(parts) {
		for i := range parts {
			j.RunPart(i, parts)
		}
		return
	}
	defer UnlockParts()
	if parts == 2 {
		gemm2(&j)
		return
	}
	runGemmParts(&j, parts)
}

// GemmRows is C = A·op(B) for row-major C (m×n, A m×k), one BLAS call
// computing it as the single part of a product (the row blocks of a split
// recurrent sequence call it from their own part).
func GemmRows[T float32 | float64](tB bool, m, n, k int, a []T, b []T, ldb int, c []T) {
	checkGemm(false, tB, m, n, k, k, ldb, n, len(a), len(b), len(c))
	j := gemmJob[T]{false, tB, m, n, k, a[:m*k], k, b[:k*n], ldb, c[:m*n]}
	j.RunPart(0, 1)
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
		RunLocked(&gemmJob32, parts)
		gemmJob32 = gemmJob[float32]{}
	case *gemmJob[float64]:
		gemmJob64 = *j
		RunLocked(&gemmJob64, parts)
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
	SplitGemm(tA, tB, m, n, k, a, lda, b, ldb, c[:m*n])
}
