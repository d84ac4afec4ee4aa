package cpu

import (
	"github.com/blocks-go/blocks/internal/vec"
)

// Per-step kernels of the fused LSTM and GRU sequences (rnn.go): the
// elementwise work of one time step over the whole batch in one pass per
// row, and its gradient. The nonlinearities are the Tanh and Sigmoid ops'
// own (elemwise.go: vec.TanhSlice32 and vec.SigmoidSlice32, AVX2 kernels
// with the bits of vec.Tanh32 and vec.Sigmoid32, in float32; math.Tanh and
// sigmoid in float64) and every forward expression is evaluated in the
// order the unfused step graph evaluates it, so the fused forward pass
// gives the same bits as the generic scan of the bricks' step
// (TestFusedLSTMMatchesScan). The LSTM forward row and the LSTM and GRU
// gradients' unmasked float32 rows run internal/vec's AVX2 kernels (the
// loops' bits); the rest is plain Go, the same on every architecture.

// lstmStep finishes one LSTM step for a batch of rows. On entry g (rows ×
// 4d) holds h(t-1)·W; x (rows × 4d) is the step's input, cp (rows × d)
// c(t-1), hp h(t-1). On return g holds the activated gates [i f c̃ o], c
// and h the new cell and state, tc tanh(c) (before the mask), all rows ×
// d. m, when not nil, is the mask per row.
func lstmStep[T float32 | float64](g, x, cp, hp, wci, wcf, wco, m, c, h, tc []T, rows, d int) {
	for b := range rows {
		gr := g[b*4*d : (b+1)*4*d]
		xr := x[b*4*d : (b+1)*4*d]
		cpr := cp[b*d : (b+1)*d]
		cr := c[b*d : (b+1)*d]
		tcr := tc[b*d : (b+1)*d]
		hr := h[b*d : (b+1)*d]
		if g32, ok := any(gr).([]float32); ok {
			lstmRow32(g32, any(xr).([]float32), any(cpr).([]float32), any(wci).([]float32), any(wcf).([]float32),
				any(wco).([]float32), any(cr).([]float32), any(tcr).([]float32), any(hr).([]float32), d)
		} else {
			for j := range gr {
				gr[j] += xr[j] // act = h·W + x
			}
			for j := range d {
				gr[j] += cpr[j] * wci[j]
				gr[d+j] += cpr[j] * wcf[j]
			}
			sigmoidInPlace(gr[:2*d])
			tanhInto(gr[2*d:3*d], gr[2*d:3*d])
			for j := range d {
				cr[j] = gr[d+j]*cpr[j] + gr[j]*gr[2*d+j]
				gr[3*d+j] += cr[j] * wco[j]
			}
			sigmoidInPlace(gr[3*d:])
			tanhInto(tcr, cr)
			for j := range d {
				hr[j] = gr[3*d+j] * tcr[j]
			}
		}
		if m != nil {
			mb := m[b]
			hpr := hp[b*d : (b+1)*d]
			for j := range d {
				hr[j] = mb*hr[j] + (1-mb)*hpr[j]
				cr[j] = mb*cr[j] + (1-mb)*cpr[j]
			}
		}
	}
}

// lstmRow32 is lstmStep's unmasked work on one float32 row, in the same
// operations and order as the generic loop, each pass vectorized
// (internal/vec: the products rounded before each addition, as Go
// computes them).
func lstmRow32(gr, xr, cpr, wci, wcf, wco, cr, tcr, hr []float32, d int) {
	vec.Add32(gr, xr) // act = h·W + x
	vec.MulAdd32(gr[:d], cpr, wci)
	vec.MulAdd32(gr[d:2*d], cpr, wcf)
	vec.SigmoidSlice32(gr[:2*d], gr[:2*d])
	vec.TanhSlice32(gr[2*d:3*d], gr[2*d:3*d])
	vec.Mul32(cr, gr[d:2*d], cpr)         // f·c(t-1)
	vec.MulAdd32(cr, gr[:d], gr[2*d:3*d]) // + i·c̃
	vec.MulAdd32(gr[3*d:], cr, wco)
	vec.SigmoidSlice32(gr[3*d:], gr[3*d:])
	vec.TanhSlice32(tcr, cr)
	vec.Mul32(hr, gr[3*d:], tcr)
}

// lstmStepGrad is the gradient of one LSTM step. dh and dc are the
// gradients of the step's (masked) outputs; g, c, tc, cp the forward
// step's gates, new cell (masked), tanh of the unmasked cell and previous
// cell. It writes the gradient of the pre-activations (h(t-1)·W + x) to
// da (rows × 4d), adds the part of the previous state's gradient that
// does not go through W to dhp ((1-m)·dh; dhp is overwritten), the
// previous cell's gradient to dcp, and accumulates the peepholes'
// gradients into sci, scf, sco.
func lstmStepGrad[T float32 | float64](da, dh, dc, g, c, tc, cp, wci, wcf, wco, m, dhp, dcp, sci, scf, sco []T, rows, d int) {
	for b := range rows {
		gr := g[b*4*d : (b+1)*4*d]
		dar := da[b*4*d : (b+1)*4*d]
		dhr, dcr := dh[b*d:(b+1)*d], dc[b*d:(b+1)*d]
		cr, tcr, cpr := c[b*d:(b+1)*d], tc[b*d:(b+1)*d], cp[b*d:(b+1)*d]
		dhpr, dcpr := dhp[b*d:(b+1)*d], dcp[b*d:(b+1)*d]
		var mb T = 1
		if m != nil {
			mb = m[b]
		}
		for j := range d {
			dhn, dcn := dhr[j], dcr[j]
			var keepH, keepC T
			cn := cr[j]
			if m != nil {
				keepH, keepC = (1-mb)*dhn, (1-mb)*dcn
				dhn, dcn = mb*dhn, mb*dcn
				if mb != 1 {
					// the unmasked cell: c = m·cn + (1-m)·cp
					cn = gr[d+j]*cpr[j] + gr[j]*gr[2*d+j]
				}
			}
			i, f, cc, o := gr[j], gr[d+j], gr[2*d+j], gr[3*d+j]
			t := tcr[j]
			do := dhn * t
			dct := dcn + dhn*o*(1-t*t)
			dao := do * o * (1 - o)
			dct += dao * wco[j]
			dai := dct * cc * i * (1 - i)
			daf := dct * cpr[j] * f * (1 - f)
			dag := dct * i * (1 - cc*cc)
			dar[j], dar[d+j], dar[2*d+j], dar[3*d+j] = dai, daf, dag, dao
			dcpr[j] = dct*f + dai*wci[j] + daf*wcf[j] + keepC
			dhpr[j] = keepH
			sci[j] += dai * cpr[j]
			scf[j] += daf * cpr[j]
			sco[j] += dao * cn
		}
	}
}

// lstmStepGradSum is one LSTM step's gradient for a block of rows from
// the incoming gradients: dh = dH + carryH and dc = dC + carryC (the
// step's own output gradients plus what the step after carried back),
// then lstmStepGrad into da, keep (its dhp), carryC (its dcp) and the
// peepholes' sums, dh and dc being its scratch. The unmasked float32 rows
// run internal/vec's AVX2 kernel, sums included, which gives the same
// bits and leaves dh, dc and keep alone (their values are read only under
// a mask).
func lstmStepGradSum[T float32 | float64](da, dH, carryH, dC, carryC, dh, dc, g, c, tc, cp, wci, wcf, wco, m, keep, sci, scf, sco []T, rows, d int) {
	if da32, ok := any(da).([]float32); ok && m == nil {
		f := func(s []T) []float32 { return any(s).([]float32) }
		for b := range rows {
			r, r4 := b*d, b*4*d
			vec.LSTMGrad32(da32[r4:r4+4*d], f(carryC[r:r+d]), f(sci), f(scf), f(sco), f(dH[r:r+d]), f(carryH[r:r+d]),
				f(dC[r:r+d]), f(g[r4:r4+4*d]), f(c[r:r+d]), f(tc[r:r+d]), f(cp[r:r+d]), f(wci), f(wcf), f(wco))
		}
		return
	}
	for j := range dh {
		dh[j] = dH[j] + carryH[j]
		dc[j] = dC[j] + carryC[j]
	}
	lstmStepGrad(da, dh, dc, g, c, tc, cp, wci, wcf, wco, m, keep, carryC, sci, scf, sco, rows, d)
}

// gruGates finishes the first half of a GRU step: on entry g (rows × 2d)
// holds h(t-1)·W_g; it adds the gate inputs xg and applies the sigmoid
// (update, reset), then writes hr = h(t-1)·r.
func gruGates[T float32 | float64](g, xg, hp, hr []T, rows, d int) {
	if g32, ok := any(g).([]float32); ok {
		// The same passes with internal/vec's AVX2 kernels (the loops' bits).
		g32, xg32, hp32, hr32 := g32[:rows*2*d], any(xg).([]float32), any(hp).([]float32), any(hr).([]float32)
		vec.Add32(g32, xg32)
		vec.SigmoidSlice32(g32, g32)
		for b := range rows {
			vec.Mul32(hr32[b*d:(b+1)*d], hp32[b*d:(b+1)*d], g32[b*2*d+d:(b+1)*2*d])
		}
		return
	}
	for j := range g[:rows*2*d] {
		g[j] += xg[j]
	}
	sigmoidInPlace(g[:rows*2*d])
	for b := range rows {
		r := g[b*2*d+d : (b+1)*2*d]
		hpr, hrr := hp[b*d:(b+1)*d], hr[b*d:(b+1)*d]
		for j := range d {
			hrr[j] = hpr[j] * r[j]
		}
	}
}

// gruStep finishes a GRU step: on entry n holds (h(t-1)·r)·U; it adds the
// inputs x, applies tanh, and writes the new state h = n·u + h(t-1)·(1-u),
// masked.
func gruStep[T float32 | float64](n, x, g, hp, m, h []T, rows, d int) {
	n32, is32 := any(n[:rows*d]).([]float32)
	if is32 {
		vec.Add32(n32, any(x).([]float32))
	} else {
		for j := range n[:rows*d] {
			n[j] += x[j]
		}
	}
	tanhInto(n[:rows*d], n[:rows*d])
	for b := range rows {
		u := g[b*2*d : b*2*d+d]
		nr, hpr, hr := n[b*d:(b+1)*d], hp[b*d:(b+1)*d], h[b*d:(b+1)*d]
		if is32 {
			vec.GRUStep32(any(hr).([]float32), any(nr).([]float32), any(u).([]float32), any(hpr).([]float32))
		} else {
			for j := range d {
				hr[j] = nr[j]*u[j] + hpr[j]*(1-u[j])
			}
		}
		if m != nil {
			mb := m[b]
			for j := range d {
				hr[j] = mb*hr[j] + (1-mb)*hpr[j]
			}
		}
	}
}

// gruStepGradN is the first half of a GRU step's gradient: from dh (the
// masked new state's gradient) it writes the gradient of n's
// pre-activation to dan, the update gate's gradient (before its sigmoid)
// to the first half of dg's rows, and the direct part of the previous
// state's gradient to dhp.
func gruStepGradN[T float32 | float64](dan, dg, dh, g, n, hp, m, dhp []T, rows, d int) {
	for b := range rows {
		u := g[b*2*d : b*2*d+d]
		dgr := dg[b*2*d : b*2*d+d]
		dhr, nr, hpr := dh[b*d:(b+1)*d], n[b*d:(b+1)*d], hp[b*d:(b+1)*d]
		danr, dhpr := dan[b*d:(b+1)*d], dhp[b*d:(b+1)*d]
		if d32, ok := any(danr).([]float32); ok && m == nil {
			vec.GRUGradN32(d32, any(dgr).([]float32), any(dhpr).([]float32), any(dhr).([]float32),
				any(u).([]float32), any(nr).([]float32), any(hpr).([]float32))
			continue
		}
		var mb T = 1
		if m != nil {
			mb = m[b]
		}
		for j := range d {
			dn := dhr[j]
			var keep T
			if m != nil {
				keep = (1 - mb) * dn
				dn = mb * dn
			}
			uj := u[j]
			danr[j] = dn * uj * (1 - nr[j]*nr[j])
			dgr[j] = (dn*nr[j] - dn*hpr[j]) * uj * (1 - uj)
			dhpr[j] = dn*(1-uj) + keep
		}
	}
}

// gruStepGradR is the second half: dhr is the gradient of h(t-1)·r; it
// adds its share to dhp and writes the reset gate's gradient (before its
// sigmoid) to the second half of dg's rows.
func gruStepGradR[T float32 | float64](dg, dhr, g, hp, dhp []T, rows, d int) {
	for b := range rows {
		r := g[b*2*d+d : (b+1)*2*d]
		dgr := dg[b*2*d+d : (b+1)*2*d]
		dr, hpr, dhpr := dhr[b*d:(b+1)*d], hp[b*d:(b+1)*d], dhp[b*d:(b+1)*d]
		if d32, ok := any(dgr).([]float32); ok {
			vec.GRUGradR32(d32, any(dhpr).([]float32), any(dr).([]float32), any(hpr).([]float32), any(r).([]float32))
			continue
		}
		for j := range d {
			rj := r[j]
			dhpr[j] += dr[j] * rj
			dgr[j] = dr[j] * hpr[j] * rj * (1 - rj)
		}
	}
}

// addRows is out = a + b elementwise (out may be a or b): in float32
// internal/vec's AVX2 pass, the loop's bits.
func addRows[T float32 | float64](out, a, b []T) {
	if o32, ok := any(out).([]float32); ok {
		vec.AddTo32(o32, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(out)], b[:len(out)]
	for j := range out {
		out[j] = a[j] + b[j]
	}
}
