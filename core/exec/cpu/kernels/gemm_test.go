package kernels

import (
	"math"
	"testing"
)

// TestGemmSplitMatchesReference: products large enough to be split (by
// rows when C is tall, by columns when wide), every transposition, against
// a float64 triple loop.
func TestGemmSplitMatchesReference(t *testing.T) {
	for _, sh := range [][3]int{{300, 100, 200}, {64, 500, 300}, {33, 40, 2000}} {
		m, n, k := sh[0], sh[1], sh[2]
		if GemmParts(m, n, k) < 2 && gemmSplit {
			t.Fatalf("%v is not split", sh)
		}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				a, b := make([]float32, m*k), make([]float32, k*n)
				for i := range a {
					a[i] = float32((i*7)%13) - 6
				}
				for i := range b {
					b[i] = float32((i*5)%11) - 5
				}
				c := make([]float32, m*n)
				Sgemm(tA, tB, m, n, k, a, b, c)
				at := func(i, p int) float64 {
					if tA {
						return float64(a[p*m+i])
					}
					return float64(a[i*k+p])
				}
				bt := func(p, j int) float64 {
					if tB {
						return float64(b[j*k+p])
					}
					return float64(b[p*n+j])
				}
				for i := 0; i < m; i += 7 {
					for j := range n {
						s := 0.0
						for p := range k {
							s += at(i, p) * bt(p, j)
						}
						if math.Abs(s-float64(c[i*n+j])) > 1e-3*math.Max(1, math.Abs(s)) {
							t.Fatalf("%v tA=%v tB=%v: c[%d,%d] = %g, want %g", sh, tA, tB, i, j, c[i*n+j], s)
						}
					}
				}
			}
		}
	}
}
