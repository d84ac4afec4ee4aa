package cpu

import (
	"github.com/blocks-go/blocks/core"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBinLoopAddVectorized: float32 a + b of the same length through the
// vectorized path (8 or more elements) gives each element's Go sum, bit
// for bit (zeros of both signs, infinities, NaNs), and in place into a.
func TestBinLoopAddVectorized(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38, 1e-45}
	for _, n := range []int{7, 8, 10, 17, 64} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range n {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			if r.IntN(4) == 0 {
				a[i] = special[r.IntN(len(special))]
			}
			if r.IntN(4) == 0 {
				b[i] = special[r.IntN(len(special))]
			}
		}
		out := make([]float32, n)
		binLoop(core.ElemAdd, out, 0, a, 1, b, 1, n)
		inPlace := append([]float32(nil), a...)
		binLoop(core.ElemAdd, inPlace, 0, inPlace, 1, b, 1, n)
		for i := range n {
			want := a[i] + b[i]
			for _, got := range []float32{out[i], inPlace[i]} {
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("n=%d: %v + %v = %v, want %v", n, a[i], b[i], got, want)
				}
			}
		}
	}
}

// TestSumToRowVector3D: a 3-d gradient summed to a row vector (a bias
// after a 3-d product) through the columns' split gives the bits of the
// row-by-row walk (each column summed over the rows in order from zero).
func TestSumToRowVector3D(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	a, b, n := 5, 7, 40
	g := make([]float32, a*b*n)
	for i := range g {
		g[i] = float32(r.NormFloat64())
	}
	want := make([]float32, n)
	for row := range a * b {
		for j := range n {
			want[j] += g[row*n+j]
		}
	}
	for _, oshape := range [][]int{{n}, {1, 1, n}, {1, n}} {
		out := make([]float32, n)
		for i := range out {
			out[i] = 99 // overwritten
		}
		sumToKernel(out, oshape, g, []int{a, b, n})
		for j := range n {
			if math.Float32bits(out[j]) != math.Float32bits(want[j]) {
				t.Fatalf("out shape %v: [%d] = %v, want %v", oshape, j, out[j], want[j])
			}
		}
	}
}
