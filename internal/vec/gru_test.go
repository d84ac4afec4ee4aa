package vec

import (
	"math/rand/v2"
	"testing"
)

// TestGRUGrad: the AVX2 kernels of the GRU step's gradient give the
// portable loops' bits on random and special values, for lengths around
// the block of 8; and one entry against the formulas in float64.
func TestGRUGrad(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 23, 40} {
		dh, u, nn, hp := randomSlice(r, n), randomSlice(r, n), randomSlice(r, n), randomSlice(r, n)
		dr, rg, dhp0 := randomSlice(r, n), randomSlice(r, n), randomSlice(r, n)
		var outs [2][5][]float32
		for k, avx := range []bool{useAVX2, false} {
			saved := useAVX2
			useAVX2 = avx
			dan, dg, dhp := make([]float32, n), make([]float32, n), make([]float32, n)
			GRUGradN32(dan, dg, dhp, dh, u, nn, hp)
			dgR, dhpR := make([]float32, n), append([]float32(nil), dhp0...)
			GRUGradR32(dgR, dhpR, dr, hp, rg)
			outs[k] = [5][]float32{dan, dg, dhp, dgR, dhpR}
			useAVX2 = saved
		}
		var steps [2][]float32
		for k, avx := range []bool{useAVX2, false} {
			saved := useAVX2
			useAVX2 = avx
			steps[k] = make([]float32, n)
			GRUStep32(steps[k], nn, u, hp)
			useAVX2 = saved
		}
		sameBitsOrNaN(t, "GRUStep32", n, steps[0], steps[1])
		for i, name := range []string{"GRUGradN32 dan", "GRUGradN32 dg", "GRUGradN32 dhp", "GRUGradR32 dg", "GRUGradR32 dhp"} {
			sameBits(t, name, n, outs[0][i], outs[1][i])
		}
	}
	dan, dg, dhp := make([]float32, 9), make([]float32, 9), make([]float32, 9)
	one := func(v float32) []float32 {
		s := make([]float32, 9)
		for i := range s {
			s[i] = v
		}
		return s
	}
	GRUGradN32(dan, dg, dhp, one(0.5), one(0.25), one(0.75), one(2))
	// dan = 0.5·0.25·(1−0.5625), dg = (0.375 − 1)·0.25·0.75, dhp = 0.5·0.75.
	if dan[0] != 0.0546875 || dg[0] != -0.1171875 || dhp[0] != 0.375 || dan[8] != dan[0] {
		t.Errorf("GRUGradN32: dan %v, dg %v, dhp %v", dan[0], dg[0], dhp[0])
	}
	h := make([]float32, 9)
	GRUStep32(h, one(0.5), one(0.25), one(2))
	// h = 0.5·0.25 + 2·0.75.
	if h[0] != 1.625 || h[8] != 1.625 {
		t.Errorf("GRUStep32: %v, %v", h[0], h[8])
	}
	dgR, dhpR := make([]float32, 9), one(1)
	GRUGradR32(dgR, dhpR, one(0.5), one(2), one(0.25))
	// dhp = 1 + 0.125, dg = 0.5·2·0.25·0.75.
	if dhpR[0] != 1.125 || dgR[0] != 0.1875 || dgR[8] != dgR[0] {
		t.Errorf("GRUGradR32: dg %v, dhp %v", dgR[0], dhpR[0])
	}
}

// BenchmarkGRUGrad: both halves on a row of 512 (gru-lm's), with the
// AVX2 kernels and with the portable loops.
func BenchmarkGRUGrad(b *testing.B) {
	r := rand.New(rand.NewPCG(33, 34))
	const d = 512
	dh, u, nn, hp, dr, rg := randomSlice(r, d), randomSlice(r, d), randomSlice(r, d), randomSlice(r, d), randomSlice(r, d), randomSlice(r, d)
	dan, dg, dhp := make([]float32, d), make([]float32, d), make([]float32, d)
	for _, avx := range []bool{true, false} {
		name := "avx2"
		if !avx {
			name = "portable"
		}
		b.Run(name, func(b *testing.B) {
			saved := useAVX2
			useAVX2 = avx && saved
			defer func() { useAVX2 = saved }()
			for range b.N {
				GRUGradN32(dan, dg, dhp, dh, u, nn, hp)
				GRUGradR32(dg, dhp, dr, hp, rg)
			}
		})
	}
}
