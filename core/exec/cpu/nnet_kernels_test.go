package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/internal/vec"
)

// TestSoftmaxBatchExp: the float32 softmax, log-softmax and log-softmax
// gradient with the batch's exponentials in one vectorized pass give the
// bits of the row-by-row loops they replace (copied here), on random
// rows with zeros of both signs, infinities, NaNs and large values, for
// row lengths around the vector block (10: the MLPs', 64: the language
// models').
func TestSoftmaxBatchExp(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 88, -88, 3e38, -3e38, 1e-40}
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			if r.IntN(20) == 0 {
				s[i] = special[r.IntN(len(special))]
			} else {
				s[i] = float32(r.NormFloat64() * 4)
			}
		}
		return s
	}
	same := func(name string, got, want []float32) {
		t.Helper()
		for i := range want {
			if got[i] != got[i] && want[i] != want[i] {
				continue
			}
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s[%d] = %v, want %v", name, i, got[i], want[i])
			}
		}
	}
	for _, n := range []int{1, 7, 8, 10, 64} {
		rows := 37
		x, g := rnd(rows*n), rnd(rows*n)
		for _, log := range []bool{false, true} {
			got, want := make([]float32, rows*n), make([]float32, rows*n)
			softmaxKernel(log, got, x, n)
			softmaxLoop32(log, want, x, n)
			same("softmax", got, want)
		}
		s := make([]float32, rows*n)
		softmaxKernel(true, s, x, n)
		got, want := make([]float32, rows*n), make([]float32, rows*n)
		softmaxGradKernel(true, got, s, g, n)
		for r := range rows {
			sr, gr, o := s[r*n:(r+1)*n], g[r*n:(r+1)*n], want[r*n:(r+1)*n]
			acc := 0.0
			for _, v := range gr {
				acc += float64(v)
			}
			for i := range o {
				o[i] = gr[i] - float32(float64(vec.Exp32(sr[i]))*acc)
			}
		}
		same("log-softmax gradient", got, want)
	}
}

// softmaxLoop32 is softmaxKernel's row-by-row loop in float32, as it was
// before the batch's exponentials were vectorized.
func softmaxLoop32(log bool, out, x []float32, n int) {
	for r := 0; r < len(x)/n; r++ {
		row, o := x[r*n:(r+1)*n], out[r*n:(r+1)*n]
		m := row[0]
		for _, v := range row {
			if v > m {
				m = v
			}
		}
		s := 0.0
		for i, v := range row {
			e := vec.Exp32(v - m)
			s += float64(e)
			o[i] = e
		}
		if log {
			ls := float32(math.Log(s))
			for i, v := range row {
				o[i] = v - m - ls
			}
		} else {
			inv := 1 / s
			for i := range o {
				o[i] = float32(float64(o[i]) * inv)
			}
		}
	}
}
