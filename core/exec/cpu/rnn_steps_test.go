package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/internal/vec"
)

// TestGRUStepGradVectorized: the GRU gradient's float32 rows through
// internal/vec's kernels (unmasked) give the bits of the generic loop (the
// same rows under a mask of ones, which takes it), and the reset half the
// bits of its formula.
func TestGRUStepGradVectorized(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	rows, d := 3, 21
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	g, dh, n, hp, dhr := rnd(rows*2*d), rnd(rows*d), rnd(rows*d), rnd(rows*d), rnd(rows*d)
	ones := []float32{1, 1, 1}
	run := func(m []float32) (dan, dg, dhp []float32) {
		dan, dg, dhp = make([]float32, rows*d), make([]float32, rows*2*d), make([]float32, rows*d)
		gruStepGradN(dan, dg, dh, g, n, hp, m, dhp, rows, d)
		return
	}
	dan, dg, dhp := run(nil)
	wdan, wdg, wdhp := run(ones)
	for _, c := range []struct {
		name      string
		got, want []float32
	}{{"dan", dan, wdan}, {"dg", dg, wdg}, {"dhp", dhp, wdhp}} {
		for i := range c.want {
			if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
				t.Fatalf("gruStepGradN %s[%d] = %v, want %v", c.name, i, c.got[i], c.want[i])
			}
		}
	}
	wantDhp := append([]float32(nil), dhp...)
	gruStepGradR(dg, dhr, g, hp, dhp, rows, d)
	for b := range rows {
		for j := range d {
			rj, dr := g[b*2*d+d+j], dhr[b*d+j]
			wantDhp[b*d+j] += dr * rj
			if got, want := dg[b*2*d+d+j], dr*hp[b*d+j]*rj*(1-rj); got != want {
				t.Fatalf("gruStepGradR dg row %d, %d = %v, want %v", b, j, got, want)
			}
			if got, want := dhp[b*d+j], wantDhp[b*d+j]; got != want {
				t.Fatalf("gruStepGradR dhp row %d, %d = %v, want %v", b, j, got, want)
			}
		}
	}
}

// TestLSTMStepGradVectorized: an LSTM step's gradient with its incoming
// sums (lstmStepGradSum) on unmasked float32 rows, which runs
// internal/vec's kernel, gives the bits of the generic loops it replaces
// (the sums, then lstmStepGrad), over three rows and two steps (the cell
// gradient carried, the peepholes' sums accumulated).
func TestLSTMStepGradVectorized(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	rows, d := 3, 21
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	g, c, tc, cp := rnd(rows*4*d), rnd(rows*d), rnd(rows*d), rnd(rows*d)
	dH, dC, carryH, carryC0 := rnd(rows*d), rnd(rows*d), rnd(rows*d), rnd(rows*d)
	w, sums0 := rnd(3*d), rnd(3*d)
	type result struct{ da, carryC, sums []float32 }
	run := func(vectorized bool) result {
		da, carryC, sums := make([]float32, rows*4*d), append([]float32(nil), carryC0...), append([]float32(nil), sums0...)
		dh, dc, keep := make([]float32, rows*d), make([]float32, rows*d), make([]float32, rows*d)
		for range 2 {
			if vectorized {
				lstmStepGradSum(da, dH, carryH, dC, carryC, dh, dc, g, c, tc, cp, w[:d], w[d:2*d], w[2*d:], nil, keep,
					sums[:d], sums[d:2*d], sums[2*d:], rows, d)
				continue
			}
			for j := range dh {
				dh[j] = dH[j] + carryH[j]
				dc[j] = dC[j] + carryC[j]
			}
			lstmStepGrad(da, dh, dc, g, c, tc, cp, w[:d], w[d:2*d], w[2*d:], nil, keep, carryC, sums[:d], sums[d:2*d], sums[2*d:], rows, d)
		}
		return result{da, carryC, sums}
	}
	got, want := run(true), run(false)
	for _, x := range []struct {
		name      string
		got, want []float32
	}{{"da", got.da, want.da}, {"dcp", got.carryC, want.carryC}, {"peephole sums", got.sums, want.sums}} {
		for i := range x.want {
			if math.Float32bits(x.got[i]) != math.Float32bits(x.want[i]) {
				t.Fatalf("lstmStepGradSum %s[%d] = %v, want %v", x.name, i, x.got[i], x.want[i])
			}
		}
	}
}

// TestGRUGatesVectorized: the GRU step's gates in float32 (internal/vec's
// passes) give the bits of the generic loop (copied here).
func TestGRUGatesVectorized(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	rows, d := 3, 21
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64() * 3)
		}
		return s
	}
	g0, xg, hp := rnd(rows*2*d), rnd(rows*2*d), rnd(rows*d)
	g, hr := append([]float32(nil), g0...), make([]float32, rows*d)
	gruGates(g, xg, hp, hr, rows, d)
	wg, whr := append([]float32(nil), g0...), make([]float32, rows*d)
	for j := range wg {
		wg[j] = vec.Sigmoid32(wg[j] + xg[j])
	}
	for b := range rows {
		for j := range d {
			whr[b*d+j] = hp[b*d+j] * wg[b*2*d+d+j]
		}
	}
	for i := range wg {
		if math.Float32bits(g[i]) != math.Float32bits(wg[i]) {
			t.Fatalf("gruGates g[%d] = %v, want %v", i, g[i], wg[i])
		}
	}
	for i := range whr {
		if math.Float32bits(hr[i]) != math.Float32bits(whr[i]) {
			t.Fatalf("gruGates hr[%d] = %v, want %v", i, hr[i], whr[i])
		}
	}
}

// TestGRUStepVectorized: the GRU step's new state in float32 (internal/vec's
// passes), with and without a mask, gives the bits of the generic loop
// (copied here).
func TestGRUStepVectorized(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	rows, d := 3, 21
	rnd := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64() * 3)
		}
		return s
	}
	n0, x, g, hp := rnd(rows*d), rnd(rows*d), rnd(rows*2*d), rnd(rows*d)
	for _, m := range [][]float32{nil, {1, 0, 0.5}} {
		n, h := append([]float32(nil), n0...), make([]float32, rows*d)
		gruStep(n, x, g, hp, m, h, rows, d)
		wn, wh := append([]float32(nil), n0...), make([]float32, rows*d)
		for j := range wn {
			wn[j] = vec.Tanh32(wn[j] + x[j])
		}
		for b := range rows {
			for j := range d {
				u, k := g[b*2*d+j], b*d+j
				wh[k] = wn[k]*u + hp[k]*(1-u)
				if m != nil {
					wh[k] = m[b]*wh[k] + (1-m[b])*hp[k]
				}
			}
		}
		for i := range wh {
			if math.Float32bits(n[i]) != math.Float32bits(wn[i]) || math.Float32bits(h[i]) != math.Float32bits(wh[i]) {
				t.Fatalf("gruStep (mask %v) [%d]: n %v h %v, want %v %v", m, i, n[i], h[i], wn[i], wh[i])
			}
		}
	}
}
