package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// special values every kernel sees: zeros of both signs, NaN, infinities,
// subnormals, values whose sum or product rounds.
var special = []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
	1e-45, -1e-45, 1, -1, 0.1, -0.1, 3.4e38, -3.4e38, 1.0000001, 16777217}

func randomSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		if r.IntN(4) == 0 {
			s[i] = special[r.IntN(len(special))]
		} else {
			s[i] = float32(r.NormFloat64())
		}
	}
	return s
}

func sameBits(t *testing.T, name string, n int, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s n=%d: [%d] = %v (%#x), want %v (%#x)", name, n, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestElementwiseKernels checks each AVX2 kernel bit for bit against its
// portable loop on random and special values, for lengths around the
// block of 8, in place and out of place; and a few results against
// closed forms.
func TestElementwiseKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 100, 1001} {
		x, b, g := randomSlice(r, n), randomSlice(r, n), randomSlice(r, n)
		s := float32(r.NormFloat64())

		got, want := make([]float32, n), make([]float32, n)
		BiasRelu32(got, x, b)
		biasRelu32Go(want, x, b)
		sameBits(t, "BiasRelu32", n, got, want)

		ReluGrad32(got, x, g)
		reluGrad32Go(want, x, g)
		sameBits(t, "ReluGrad32", n, got, want)

		ScaledSub32(got, x, g, s)
		scaledSub32Go(want, x, g, s)
		sameBits(t, "ScaledSub32", n, got, want)
		inPlace := append([]float32(nil), x...)
		ScaledSub32(inPlace, inPlace, g, s)
		sameBits(t, "ScaledSub32 in place", n, inPlace, want)

		acc, accWant := append([]float32(nil), x...), append([]float32(nil), x...)
		Add32(acc, g)
		for i := range accWant {
			accWant[i] += g[i]
		}
		sameBits(t, "Add32", n, acc, accWant)

		AddTo32(got, x, g)
		sameBits(t, "AddTo32", n, got, accWant)
		inPlace = append(inPlace[:0], g...)
		AddTo32(inPlace, x, inPlace)
		sameBits(t, "AddTo32 in place", n, inPlace, accWant)
	}
	out := make([]float32, 8)
	BiasRelu32(out, []float32{1, -1, 0, float32(math.NaN()), 2, -3, 0.5, float32(math.Copysign(0, -1))}, []float32{0, 0, 0, 0, -2, 4, -0.25, 0})
	want := []float32{1, 0, 0, 0, 0, 1, 0.25, 0}
	sameBits(t, "BiasRelu32 closed form", 8, out, want)
	ScaledSub32(out, []float32{1, 1, 1, 1, 1, 1, 1, 1}, []float32{1, 2, 3, 4, 5, 6, 7, 8}, 0.5)
	sameBits(t, "ScaledSub32 closed form", 8, out, []float32{0.5, 0, -0.5, -1, -1.5, -2, -2.5, -3})
}

func BenchmarkBiasRelu32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x, bias, out := randomSlice(r, 128*500), randomSlice(r, 128*500), make([]float32, 128*500)
	for b.Loop() {
		BiasRelu32(out, x, bias)
	}
}

func BenchmarkBiasRelu32Go(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x, bias, out := randomSlice(r, 128*500), randomSlice(r, 128*500), make([]float32, 128*500)
	for b.Loop() {
		biasRelu32Go(out, x, bias)
	}
}

func BenchmarkScaledSub32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	w, g := randomSlice(r, 784*500), randomSlice(r, 784*500)
	for b.Loop() {
		ScaledSub32(w, w, g, 1e-9)
	}
}

// Relu32 against its closed form; Sum32's kernel against its portable
// order, and against float64 sums of exactly representable values.
func TestReluAndSum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 8, 9, 31, 32, 33, 64, 100, 577, 2048} {
		x := randomSlice(r, n)
		got, want := make([]float32, n), make([]float32, n)
		Relu32(got, x)
		for i, v := range x {
			if v > 0 {
				want[i] = v
			}
		}
		sameBits(t, "Relu32", n, got, want)

		y := make([]float32, n)
		exact := 0.0
		for i := range y {
			y[i] = float32(r.IntN(1000) - 500)
			exact += float64(y[i])
		}
		if s := Sum32(y); float64(s) != exact {
			t.Fatalf("Sum32 of %d integers = %v, want %v", n, s, exact)
		}
		z := randomSlice(r, n)
		for i := range z {
			if z[i] != z[i] || math.IsInf(float64(z[i]), 0) || math.Abs(float64(z[i])) > 1e30 {
				z[i] = 1
			}
		}
		m := n &^ 31
		if m > 0 {
			if a, b := sum32AVX2Or(z[:m]), sum32Go(z[:m]); math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("Sum32 n=%d: kernel %v, portable %v", m, a, b)
			}
		}
	}
}

func sum32AVX2Or(x []float32) float32 {
	if !useAVX2 {
		return sum32Go(x)
	}
	return sum32AVX2(&x[0], len(x))
}

// TestMul32: Mul32 and MulAdd32's AVX2 kernels against their scalar
// loops, bit for bit, on random and special values, every tail length.
func TestMul32(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for n := 0; n < 40; n++ {
		a, b, acc := randomSlice(r, n), randomSlice(r, n), randomSlice(r, n)
		want, got := make([]float32, n), make([]float32, n)
		wantAcc, gotAcc := append([]float32(nil), acc...), append([]float32(nil), acc...)
		for i := range n {
			want[i] = a[i] * b[i]
			wantAcc[i] += a[i] * b[i]
		}
		Mul32(got, a, b)
		MulAdd32(gotAcc, a, b)
		sameBits(t, "Mul32", n, got, want)
		sameBits(t, "MulAdd32", n, gotAcc, wantAcc)
	}
	// (1+2^-12)² - (1+2^-11) is 2^-24 fused, 0 with the product rounded.
	a := float32(1 + 0x1p-12)
	acc := make([]float32, 8)
	for i := range acc {
		acc[i] = -(1 + 0x1p-11)
	}
	MulAdd32(acc, []float32{a, a, a, a, a, a, a, a}, []float32{a, a, a, a, a, a, a, a})
	if acc[0] != 0 || acc[7] != 0 {
		t.Fatalf("MulAdd32 fused the multiply-add: %v", acc)
	}
}

// TestAddScalar32: the AVX2 kernel against the scalar loop, bit for bit,
// on random and special values, every tail length, in place too; and a
// closed form.
func TestAddScalar32(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for n := 0; n < 40; n++ {
		x := randomSlice(r, n)
		s := float32(r.NormFloat64())
		want, got := make([]float32, n), make([]float32, n)
		for i := range n {
			want[i] = x[i] + s
		}
		AddScalar32(got, x, s)
		sameBits(t, "AddScalar32", n, got, want)
		AddScalar32(x, x, s)
		sameBits(t, "AddScalar32 in place", n, x, want)
	}
	got := make([]float32, 9)
	AddScalar32(got, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.5)
	if got[0] != 1.5 || got[7] != 8.5 || got[8] != 9.5 {
		t.Fatalf("got %v", got)
	}
}
