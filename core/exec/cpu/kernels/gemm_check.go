package kernels

import (
	"fmt"
	"math"
)

// checkGemm panics unless every dimension of C = op(A)·op(B) fits BLAS's
// 32-bit ints and each buffer holds what the call will touch: the last
// guard before a C call that would otherwise read or write past a Go
// slice (an array whose shape overflowed, a wrong stride). Shapes from
// scripts and files are refused earlier with an error (nd.CheckAlloc, the
// Dot op's Shape); reaching this panic is a bug in the caller.
func checkGemm(tA, tB bool, m, n, k, lda, ldb, ldc, la, lb, lc int) {
	for _, d := range []int{m, n, k, lda, ldb, ldc} {
		if d < 0 || d > math.MaxInt32 {
			panic(fmt.Sprintf("kernels: gemm dimension %d out of BLAS's range (m=%d n=%d k=%d lda=%d ldb=%d ldc=%d)", d, m, n, k, lda, ldb, ldc))
		}
	}
	if m == 0 || n == 0 || k == 0 {
		return
	}
	// Rows and columns of A and B as stored (row-major).
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	// All products below are of numbers under 2^31: no overflow in int64.
	need := func(rows, cols, ld, have int, what string) {
		if ld < cols || (rows-1)*ld+cols > have {
			panic(fmt.Sprintf("kernels: gemm %s buffer too short: %d×%d with stride %d needs %d elements, has %d", what, rows, cols, ld, (rows-1)*ld+cols, have))
		}
	}
	need(ar, ac, lda, la, "A")
	need(br, bc, ldb, lb, "B")
	need(m, n, ldc, lc, "C")
}
