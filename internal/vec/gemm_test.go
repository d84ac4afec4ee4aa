package vec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fmaExact is a·b + c computed exactly (math/big) and rounded once to
// float32: an independent reference for FMA32.
func fmaExact(a, b, c float32) float32 {
	if p := float64(a) * float64(b); math.IsInf(p, 0) || math.IsNaN(p) || math.IsInf(float64(c), 0) || math.IsNaN(float64(c)) {
		return float32(p + float64(c)) // infinities and NaNs: no rounding involved
	}
	x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(400).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(400).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// randFloat32 draws float32s of every magnitude and sign, subnormals
// included.
func randFloat32(r *rand.Rand) float32 {
	switch r.IntN(4) {
	case 0:
		return math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(r.IntN(254)+1)<<23) // any finite normal
	case 1:
		return math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal
	}
	return float32(r.NormFloat64())
}

// TestFMA32 compares FMA32 with the exact sum rounded once, on random
// operands and on sums built to fall exactly halfway between two float32s
// in float64 (where rounding the float64 sum again would be wrong).
func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(a, b, c float32) {
		t.Helper()
		got, want := FMA32(a, b, c), fmaExact(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g (%#x), want %g (%#x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	inf := float32(math.Inf(1))
	specials := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0x1p-149, -0x1p-149, 0x1p-126, math.MaxFloat32, -math.MaxFloat32, inf, -inf}
	for _, a := range specials {
		for _, b := range specials {
			for _, c := range specials {
				check(a, b, c)
			}
		}
	}
	ties := 0
	for range 300000 {
		a, b, c := randFloat32(r), randFloat32(r), randFloat32(r)
		check(a, b, c)
		check(float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()))
		// c = 1 and a·b = 2^-24·(1 + tiny): 1 + a·b lies just above
		// the midpoint 1 + 2^-24, which float64 rounds onto.
		m := 1 + float32(r.IntN(1<<10))*0x1p-23
		a, b = m*0x1p-24, 1/m+float32(r.IntN(3)-1)*0x1p-40
		if s := float64(a)*float64(b) + 1; s == 1+0x1p-24 {
			ties++
		}
		check(a, b, 1)
		check(-a, b, -1)
		check(a*0x1p-100, b*0x1p-26, 0x1p-126) // near the subnormals
	}
	if ties == 0 {
		t.Fatal("no operands fell on a float64 tie: the test does not reach the tie branch")
	}
	t.Logf("%d float64 ties", ties)
}

// TestGemm32 checks the vector kernels against the scalar loop bit for
// bit (every shape around the 4×16 blocks, strided operands) and the
// scalar loop against a float64 product.
func TestGemm32(t *testing.T) {
	// the panels' padding columns are never read into C (checked below)
	r := rand.New(rand.NewPCG(5, 6))
	run := func(fast bool, m, n, k int, a []float32, lda int, b []float32, ldb int, ldc int) []float32 {
		defer func(v bool) { useFMA = v }(useFMA)
		useFMA = useFMA && fast
		c := make([]float32, (m-1)*ldc+n)
		for i := range c {
			c[i] = 7 // overwritten where inside C, kept outside
		}
		bp := make([]float32, PanelsSize32(k, n))
		PackPanels32(bp, b, k, n, ldb)
		Gemm32(m, n, k, a, lda, bp, c, ldc)
		return c
	}
	for _, s := range [][3]int{{1, 16, 1}, {4, 16, 3}, {5, 33, 7}, {16, 64, 256}, {9, 48, 1024}, {3, 15, 9}, {8, 48, 1}, {7, 100, 31}, {2, 1, 5}, {6, 0, 3}, {3, 5, 0}} {
		m, n, k := s[0], s[1], s[2]
		lda, ldb, ldc := k+r.IntN(3), n+r.IntN(3), n+r.IntN(3)
		a := make([]float32, max(m*lda, 1))
		b := make([]float32, max(k*ldb, 1))
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		if n == 0 {
			continue
		}
		slow := run(false, m, n, k, a, lda, b, ldb, ldc)
		fast := run(true, m, n, k, a, lda, b, ldb, ldc)
		for i := range m {
			for j := range ldc {
				if i*ldc+j >= len(slow) {
					break
				}
				x, y := slow[i*ldc+j], fast[i*ldc+j]
				if j >= n {
					if x != 7 || y != 7 {
						t.Fatalf("%v: wrote outside C at (%d, %d)", s, i, j)
					}
					continue
				}
				if math.Float32bits(x) != math.Float32bits(y) {
					t.Fatalf("%v: C[%d][%d] = %v with the vector kernels, %v in Go", s, i, j, y, x)
				}
				var want float64
				for p := range k {
					want += float64(a[i*lda+p]) * float64(b[p*ldb+j])
				}
				if math.Abs(float64(x)-want) > 1e-5*float64(k+1) {
					t.Fatalf("%v: C[%d][%d] = %v, float64 product %v", s, i, j, x, want)
				}
			}
		}
	}
	if !useFMA {
		t.Log("no AVX2/FMA here: compared the scalar loop with itself")
	}
}

// TestPackPanelsT32: packing a matrix's transpose gives the panels of the
// transposed matrix.
func TestPackPanelsT32(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range [][2]int{{3, 5}, {16, 32}, {7, 37}} {
		k, n := s[0], s[1]
		ldw := k + 2
		w := make([]float32, n*ldw)
		for i := range w {
			w[i] = float32(r.NormFloat64())
		}
		bt := make([]float32, k*n) // the transpose, k×n
		for p := range k {
			for j := range n {
				bt[p*n+j] = w[j*ldw+p]
			}
		}
		got, want := make([]float32, PanelsSize32(k, n)), make([]float32, PanelsSize32(k, n))
		for i := range got {
			got[i] = 9
		}
		PackPanelsT32(got, w, k, n, ldw)
		PackPanels32(want, bt, k, n, n)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("k=%d n=%d: element %d of the panels is %v, want %v", k, n, i, got[i], want[i])
			}
		}
	}
}

func BenchmarkGemm32(b *testing.B) {
	for _, s := range [][3]int{{16, 1024, 256}, {32, 1024, 256}, {16, 256, 1024}} {
		m, n, k := s[0], s[1], s[2]
		x, w, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range w {
			w[i] = float32(i%7) * 0.1
		}
		wp := make([]float32, PanelsSize32(k, n))
		PackPanels32(wp, w, k, n, n)
		b.Run("", func(b *testing.B) {
			for range b.N {
				Gemm32(m, n, k, x, k, wp, c, n)
			}
			b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
