package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxPool2x2 checks the AVX2 pooling kernels bit for bit against their
// portable loops (ties, NaNs and zeros of both signs included, for output
// widths around the blocks of 4 and 8), and small cases by hand.
func TestMaxPool2x2(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 12, 13, 16, 21} {
		for trial := range 20 {
			x0, x1 := randomSlice(r, 2*n+1), randomSlice(r, 2*n+1)
			if trial%2 == 0 { // many ties
				for i := range x0 {
					x0[i], x1[i] = float32(r.IntN(3)), float32(r.IntN(3))
				}
			}
			got, want := make([]float32, n), make([]float32, n)
			MaxPool2x2Rows32(got, x0, x1)
			maxPool2x2Rows32Go(want, x0, x1)
			sameBits(t, "MaxPool2x2Rows32", n, got, want)

			gz := randomSlice(r, n)
			g0, g1 := make([]float32, 2*n+1), make([]float32, 2*n+1)
			w0, w1 := make([]float32, 2*n+1), make([]float32, 2*n+1)
			g0[2*n], g1[2*n], w0[2*n], w1[2*n] = 7, 7, 7, 7
			MaxPool2x2GradRows32(g0, g1, x0, x1, want, gz)
			maxPool2x2GradRows32Go(w0, w1, x0, x1, want, gz)
			sameBits(t, "MaxPool2x2GradRows32 row 0", n, g0, w0)
			sameBits(t, "MaxPool2x2GradRows32 row 1", n, g1, w1)
		}
	}
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	y := make([]float32, 4)
	MaxPool2x2Rows32(y, []float32{1, 2, nan, nan, negZero, 0, -5, -6}, []float32{3, -1, nan, nan, 0, negZero, -7, -8})
	sameBits(t, "MaxPool2x2Rows32 by hand", 4, y, []float32{3, float32(math.Inf(-1)), negZero, -5})
	g0, g1 := make([]float32, 8), make([]float32, 8)
	MaxPool2x2GradRows32(g0, g1, []float32{1, 3, 0, 0, 2, 2, 1, 1}, []float32{3, 0, 0, 0, 2, 0, 1, 1}, []float32{3, 0, 2, 1}, []float32{10, negZero, 5, 1})
	sameBits(t, "MaxPool2x2GradRows32 by hand, row 0", 8, g0, []float32{0, 10, 0, 0, 5, 5, 1, 1})
	sameBits(t, "MaxPool2x2GradRows32 by hand, row 1", 8, g1, []float32{10, 0, 0, 0, 5, 0, 1, 1})
}
