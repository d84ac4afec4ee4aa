package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Exp32 against float64's exp, in ulps of float32, over the range where
// e^x is a normal float32, and its special values.
func TestExp32(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	worst := 0.0
	check := func(x float32) {
		got, want := float64(Exp32(x)), math.Exp(float64(x))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want))
		if e := math.Abs(got-want) / ulp; e > worst {
			worst = e
			if e > 2 {
				t.Fatalf("Exp32(%v) = %v, want %v: %.2f ulp", x, got, want, e)
			}
		}
	}
	for range 200000 {
		check(float32(r.Float64()*(88.7+87.3) - 87.3))
		check(float32(r.NormFloat64()))
	}
	for _, x := range []float32{0, 1, -1, 0.5, -0.5, 88.7, -87.3, 1e-8, -1e-8, 0.34657359, -0.34657359} {
		check(x)
	}
	t.Logf("worst error %.3f ulp", worst)
	if Exp32(0) != 1 || Exp32(float32(math.Inf(-1))) != 0 || !math.IsInf(float64(Exp32(float32(math.Inf(1)))), 1) ||
		!math.IsInf(float64(Exp32(89)), 1) || Exp32(-88) != 0 || Exp32(float32(math.NaN())) == Exp32(float32(math.NaN())) {
		t.Fatal("special values")
	}
}

func BenchmarkExp32(b *testing.B) {
	x := make([]float32, 2560)
	for i := range x {
		x[i] = -float32(i%97) * 0.1
	}
	var s float32
	for b.Loop() {
		for _, v := range x {
			s += Exp32(v)
		}
	}
	_ = s
}

func BenchmarkExp64(b *testing.B) {
	x := make([]float32, 2560)
	for i := range x {
		x[i] = -float32(i%97) * 0.1
	}
	var s float32
	for b.Loop() {
		for _, v := range x {
			s += float32(math.Exp(float64(v)))
		}
	}
	_ = s
}
