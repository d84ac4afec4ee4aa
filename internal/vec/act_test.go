package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps is the distance in float32 steps between a and b.
func ulps(a, b float32) float64 {
	if a == b {
		return 0
	}
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < 0x80000000 != (ib < 0x80000000) { // different signs
		return math.Abs(float64(a-b)) / math.Abs(float64(math.Nextafter32(0, 1)))
	}
	return math.Abs(float64(ia - ib))
}

// TestSigmoidTanh32: within 3 ulp of the correctly rounded value over a
// wide range and at the special values; NaN stays NaN, and the limits
// are reached exactly.
func TestSigmoidTanh32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float32{0, -0, 1e-30, -1e-30, 1e-8, 0.1, 0.5, 0.624, 0.625, 0.626, 1, 5, 9, 9.1, 20, 43.9, 44.1, 87, 88.8, 100, 1e30, float32(math.Inf(1))}
	for range 200000 {
		xs = append(xs, float32(r.NormFloat64()*4), float32(r.NormFloat64()*0.3), float32(r.NormFloat64()*30))
	}
	worstS, worstT := 0.0, 0.0
	for _, x := range xs {
		for _, v := range []float32{x, -x} {
			s, ws := Sigmoid32(v), float32(1/(1+math.Exp(-float64(v))))
			if ws < 0x1p-126 { // subnormal: Exp32 flushes to 0
				if s > 0x1p-126 {
					t.Fatalf("Sigmoid32(%v) = %v, want %v", v, s, ws)
				}
				continue
			}
			worstS = math.Max(worstS, ulps(s, ws))
			th, wt := Tanh32(v), float32(math.Tanh(float64(v)))
			worstT = math.Max(worstT, ulps(th, wt))
		}
	}
	if worstS > 3 || worstT > 3 {
		t.Fatalf("worst errors: sigmoid %v ulp, tanh %v ulp (want ≤ 3)", worstS, worstT)
	}
	t.Logf("worst errors: sigmoid %v ulp, tanh %v ulp", worstS, worstT)
	nan := float32(math.NaN())
	if s, th := Sigmoid32(nan), Tanh32(nan); s == s || th == th {
		t.Fatalf("NaN gave %v, %v", s, th)
	}
	if Tanh32(50) != 1 || Tanh32(-50) != -1 || Sigmoid32(200) != 1 || Sigmoid32(-200) != 0 {
		t.Fatal("limits not reached")
	}
}

// TestSigmoidTanhSlices: the AVX2 kernels (sigmoid, tanh, exp) give the
// scalar functions' bits
// (any NaN for a NaN) on random values of every magnitude, the branch
// boundaries, the clamps, infinities and NaN, at every length's tail.
func TestSigmoidTanhSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	special := []float32{0, float32(math.Copysign(0, -1)), 0.625, -0.625, 0.62499994, 44, 44.000004, -44.000004,
		43.99, 88.72284, 88.72285, -87.33654, -87.33655, 1e-40, -1e-40, 1e-20, 127, 200, -200, 1e38, -1e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 44.36, 44.37, 0.3125, 0.15625}
	var xs []float32
	for _, s := range special {
		xs = append(xs, s, -s)
	}
	for range 100000 {
		e := r.IntN(16) - 8
		xs = append(xs, float32(r.NormFloat64()*math.Pow(2, float64(e))))
		xs = append(xs, math.Float32frombits(r.Uint32()))
	}
	same := func(a, b float32) bool {
		return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b)) || a != a && b != b
	}
	for _, n := range []int{len(xs), 7, 8, 9, 17, 31} {
		in := xs[len(xs)-n:]
		sg, th, ex := make([]float32, n), make([]float32, n), make([]float32, n)
		SigmoidSlice32(sg, in)
		TanhSlice32(th, in)
		ExpSlice32(ex, in)
		for i, x := range in {
			if w := Exp32(x); !same(ex[i], w) {
				t.Fatalf("exp(%v [%#x]): kernel %v [%#x], scalar %v [%#x] (AVX2 %v)", x, math.Float32bits(x), ex[i], math.Float32bits(ex[i]), w, math.Float32bits(w), useAVX2)
			}
			if w := Sigmoid32(x); !same(sg[i], w) {
				t.Fatalf("sigmoid(%v [%#x]): kernel %v [%#x], scalar %v [%#x] (AVX2 %v)", x, math.Float32bits(x), sg[i], math.Float32bits(sg[i]), w, math.Float32bits(w), useAVX2)
			}
			if w := Tanh32(x); !same(th[i], w) {
				t.Fatalf("tanh(%v [%#x]): kernel %v [%#x], scalar %v [%#x] (AVX2 %v)", x, math.Float32bits(x), th[i], math.Float32bits(th[i]), w, math.Float32bits(w), useAVX2)
			}
		}
	}
	// In place.
	c := append([]float32(nil), xs[:100]...)
	TanhSlice32(c, c)
	for i, x := range xs[:100] {
		if !same(c[i], Tanh32(x)) {
			t.Fatalf("in place: tanh(%v) = %v", x, c[i])
		}
	}
	c = append(c[:0], xs[:100]...)
	ExpSlice32(c, c)
	for i, x := range xs[:100] {
		if !same(c[i], Exp32(x)) {
			t.Fatalf("in place: exp(%v) = %v", x, c[i])
		}
	}
}

func BenchmarkSigmoidSlice32(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i%200-100) * 0.05
	}
	d := make([]float32, len(x))
	b.SetBytes(int64(4 * len(x)))
	for range b.N {
		SigmoidSlice32(d, x)
	}
}

func BenchmarkSigmoidScalar32(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i%200-100) * 0.05
	}
	d := make([]float32, len(x))
	b.SetBytes(int64(4 * len(x)))
	for range b.N {
		for i, v := range x {
			d[i] = Sigmoid32(v)
		}
	}
}
