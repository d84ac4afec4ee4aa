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
