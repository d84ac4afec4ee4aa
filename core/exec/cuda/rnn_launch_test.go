package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// hostSeq runs rnn_launch.go's launch sequences on host slices with the
// Go mirrors of the recurrent kernels (the per-element bodies of
// kernels.cu's lstm_* and gru_* kernels, statement for statement).
type hostSeq struct {
	bufs     [][]float32
	launches map[string]int
}

func (h *hostSeq) sl(r ref) []float32 {
	if r.buf < 0 {
		return nil
	}
	return h.bufs[r.buf][r.off:]
}

func (h *hostSeq) gemm(tA, tB bool, m, n, k int, a, b, c ref) error {
	mGemm(tA, tB, m, n, k, h.sl(a), h.sl(b), h.sl(c))
	return nil
}

func (h *hostSeq) copy(dst, src ref, n int) error { copy(h.sl(dst)[:n], h.sl(src)[:n]); return nil }
func (h *hostSeq) zero(dst ref, n int) error      { clear(h.sl(dst)[:n]); return nil }
func (h *hostSeq) add(dst, src ref, n int) error {
	d, s := h.sl(dst), h.sl(src)
	for i := range n {
		d[i] += s[i]
	}
	return nil
}

func (h *hostSeq) kernel(name string, n int, args ...any) error {
	h.launches[name]++
	f := func(k int) []float32 { return h.sl(args[k].(ref)) }
	iv := func(k int) int { return args[k].(int) }
	switch name {
	case "lstm_fwd_step":
		mLSTMFwd(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8), f(9), f(10), iv(11), iv(12))
	case "lstm_bwd_step":
		mLSTMBwd(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8), f(9), f(10), f(11), f(12), f(13), f(14), iv(15), iv(16))
	case "colsum_add":
		sums, x, rows, cols := f(0), f(1), iv(2), iv(3)
		for j := range cols {
			s := sums[j]
			for r := range rows {
				s += x[r*cols+j]
			}
			sums[j] = s
		}
	case "gru_gates":
		mGRUGates(f(0), f(1), f(2), f(3), iv(4), iv(5))
	case "gru_fwd_step":
		mGRUFwd(f(0), f(1), f(2), f(3), f(4), f(5), iv(6), iv(7))
	case "gru_bwd_n":
		mGRUBwdN(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), iv(8), iv(9))
	case "gru_bwd_r":
		mGRUBwdR(f(0), f(1), f(2), f(3), f(4), iv(5), iv(6))
	case "reverse_steps":
		x, steps, size := f(0), iv(1), iv(2)
		for i := range steps / 2 * size {
			s, j := i/size, i%size
			a, b := s*size+j, (steps-1-s)*size+j
			x[a], x[b] = x[b], x[a]
		}
	default:
		return fmt.Errorf("no mirror of kernel %s", name)
	}
	return nil
}

func sigm32(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
func tanh32(x float32) float32 { return float32(math.Tanh(float64(x))) }

func mLSTMFwd(g, x, cp, hp, wci, wcf, wco, mask, c, h, tc []float32, B, d int) {
	for i := range B * d {
		b, j := i/d, i%d
		gr, xr := g[b*4*d:], x[b*4*d:]
		cpv := cp[i]
		ai, af, ag, ao := gr[j]+xr[j], gr[d+j]+xr[d+j], gr[2*d+j]+xr[2*d+j], gr[3*d+j]+xr[3*d+j]
		ai += cpv * wci[j]
		af += cpv * wcf[j]
		ig, fg, cc := sigm32(ai), sigm32(af), tanh32(ag)
		cn := fg * cpv
		cn += ig * cc
		ao += cn * wco[j]
		og := sigm32(ao)
		t := tanh32(cn)
		hn := og * t
		gr[j], gr[d+j], gr[2*d+j], gr[3*d+j] = ig, fg, cc, og
		tc[i] = t
		if mask != nil {
			mb := mask[b]
			hn = mb*hn + (1-mb)*hp[i]
			cn = mb*cn + (1-mb)*cpv
		}
		c[i] = cn
		h[i] = hn
	}
}

func mLSTMBwd(da, dH, dC, carryH, carryC, keep, pe, g, c, tc, cp, wci, wcf, wco, mask []float32, B, d int) {
	for i := range B * d {
		b, j := i/d, i%d
		gr, dar := g[b*4*d:], da[b*4*d:]
		dhn, dcn := dH[i]+carryH[i], dC[i]+carryC[i]
		var keepH, keepC float32
		cn, cpv := c[i], cp[i]
		if mask != nil {
			mb := mask[b]
			keepH, keepC = (1-mb)*dhn, (1-mb)*dcn
			dhn, dcn = mb*dhn, mb*dcn
			if mb != 1 {
				cn = gr[d+j]*cpv + gr[j]*gr[2*d+j]
			}
		}
		ig, fg, cc, og := gr[j], gr[d+j], gr[2*d+j], gr[3*d+j]
		t := tc[i]
		dO := dhn * t
		dct := dcn + dhn*og*(1-t*t)
		dao := dO * og * (1 - og)
		dct += dao * wco[j]
		dai := dct * cc * ig * (1 - ig)
		daf := dct * cpv * fg * (1 - fg)
		dag := dct * ig * (1 - cc*cc)
		dar[j], dar[d+j], dar[2*d+j], dar[3*d+j] = dai, daf, dag, dao
		carryC[i] = dct*fg + dai*wci[j] + daf*wcf[j] + keepC
		keep[i] = keepH
		pe[b*3*d+j] = dai * cpv
		pe[b*3*d+d+j] = daf * cpv
		pe[b*3*d+2*d+j] = dao * cn
	}
}

func mGRUGates(g, xg, hp, hr []float32, B, d int) {
	for i := range B * d {
		b, j := i/d, i%d
		gr, xr := g[b*2*d:], xg[b*2*d:]
		u, r := sigm32(gr[j]+xr[j]), sigm32(gr[d+j]+xr[d+j])
		gr[j], gr[d+j] = u, r
		hr[i] = hp[i] * r
	}
}

func mGRUFwd(n, x, g, hp, mask, h []float32, B, d int) {
	for i := range B * d {
		b, j := i/d, i%d
		nv := tanh32(n[i] + x[i])
		n[i] = nv
		u := g[b*2*d+j]
		hv := nv*u + hp[i]*(1-u)
		if mask != nil {
			mb := mask[b]
			hv = mb*hv + (1-mb)*hp[i]
		}
		h[i] = hv
	}
}

func mGRUBwdN(dan, dg, dH, carry, g, n, hp, mask []float32, B, d int) {
	for i := range B * d {
		b, j := i/d, i%d
		dn, keep := dH[i]+carry[i], float32(0)
		if mask != nil {
			mb := mask[b]
			keep = (1 - mb) * dn
			dn = mb * dn
		}
		u, nr := g[b*2*d+j], n[i]
		dan[i] = dn * u * (1 - nr*nr)
		dg[b*2*d+j] = (dn*nr - dn*hp[i]) * u * (1 - u)
		carry[i] = dn*(1-u) + keep
	}
}

func mGRUBwdR(dg, dhr, carry, g, hp []float32, B, d int) {
	for i := range B * d {
		b, j := i/d, i%d
		r := g[b*2*d+d+j]
		carry[i] += dhr[i] * r
		dg[b*2*d+d+j] = dhr[i] * hp[i] * r * (1 - r)
	}
}

// TestRNNLaunchesMatchCPU: the fused LSTM and GRU sequences, forward and
// backward, run by the GPU's launch sequences on the kernels' mirrors,
// against the CPU backend's ops (states, cells, every input's gradient),
// with and without a mask, forwards and reversed.
func TestRNNLaunchesMatchCPU(t *testing.T) {
	for _, gru := range []bool{false, true} {
		for _, masked := range []bool{false, true} {
			for _, reverse := range []bool{false, true} {
				name := fmt.Sprintf("gru=%v mask=%v reverse=%v", gru, masked, reverse)
				t.Run(name, func(t *testing.T) { checkRNNLaunches(t, gru, masked, reverse) })
			}
		}
	}
}

func checkRNNLaunches(t *testing.T, gru, masked, reverse bool) {
	T, B, d := 5, 3, 4
	rng := numpyrand.New(11)
	var shapes [][]int
	if gru {
		shapes = [][]int{{T, B, d}, {T, B, 2 * d}, {B, d}, {d, d}, {d, 2 * d}}
	} else {
		shapes = [][]int{{T, B, 4 * d}, {B, d}, {B, d}, {d, 4 * d}, {d}, {d}, {d}}
	}
	if masked {
		shapes = append(shapes, []int{T, B})
	}
	ins := make([]*core.Variable, len(shapes))
	args := make([]*nd.Array, len(shapes))
	for k, s := range shapes {
		ins[k] = core.NewInput(fmt.Sprint("in", k), nd.Float32, len(s))
		args[k] = randF32(rng, s...)
	}
	if masked {
		m := args[len(args)-1]
		for i := range m.Size() {
			m.SetFlat(i, float64(rng.Randint(0, 2))) // 0 or 1
		}
		m.SetFlat(1, 0.5)
	}
	var mask *core.Variable
	if masked {
		mask = ins[len(ins)-1]
	}
	var outs []*core.Variable
	if gru {
		h, err := core.GRUSequence(ins[0], ins[1], ins[2], ins[3], ins[4], mask, reverse)
		if err != nil {
			t.Fatal(err)
		}
		outs = []*core.Variable{h}
	} else {
		h, c, err := core.LSTMSequence(ins[0], ins[1], ins[2], ins[3], ins[4], ins[5], ins[6], mask, reverse)
		if err != nil {
			t.Fatal(err)
		}
		outs = []*core.Variable{h, c}
	}
	// cost = Σ r_k · out_k with random weights r_k.
	var cost *core.Variable
	var rs []*core.Variable
	for k, o := range outs {
		r := core.NewInput(fmt.Sprint("r", k), nd.Float32, 3)
		rs = append(rs, r)
		c := core.SumAll(core.Mul(o, r))
		if cost == nil {
			cost = c
		} else {
			cost = core.Add(cost, c)
		}
		args = append(args, randF32(rng, T, B, d))
	}
	wrt := ins
	if masked {
		wrt = ins[:len(ins)-1]
	}
	grads, err := core.Grad(cost, wrt, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := cpuRun(t, append(append([]*core.Variable(nil), ins...), rs...), append(append([]*core.Variable(nil), outs...), grads...), args)

	// The forward op, its packed output, then the gradient op on the
	// packed (dH[, dC]) the outputs' weights give.
	r := rnnSeq{T: T, B: B, d: d, reverse: reverse, mask: masked}
	h := &hostSeq{launches: map[string]int{}}
	for _, a := range args[:len(shapes)] {
		h.bufs = append(h.bufs, f32(a))
	}
	_, _, _, _, total := core.RNNLayout(gru, T, B, d)
	packed := make([]float32, total)
	h.bufs = append(h.bufs, packed)
	fwd, bwd := r.lstmForward, r.lstmBackward
	if gru {
		fwd, bwd = r.gruForward, r.gruBackward
	}
	if err := fwd(h); err != nil {
		t.Fatal(err)
	}
	n := B * d
	hOff, cOff := 0, 0
	if !gru {
		hOff, cOff, _, _, _ = core.RNNLayout(false, T, B, d)
	}
	closeTo(t, "states", packed[hOff+n:hOff+(T+1)*n], want[0], 1e-5)
	if !gru {
		closeTo(t, "cells", packed[cOff+n:cOff+(T+1)*n], want[1], 1e-5)
	}
	var gz []float32
	for k := range outs {
		gz = append(gz, f32(args[len(shapes)+k])...)
	}
	offs, gtotal := core.RNNGradLayout(gru, T, B, d)
	gout := make([]float32, gtotal)
	h.bufs = append(h.bufs[:len(shapes)], packed, gz, gout, make([]float32, B*3*d))
	if err := bwd(h); err != nil {
		t.Fatal(err)
	}
	for k := range wrt {
		size := want[len(outs)+k].Size()
		closeTo(t, fmt.Sprintf("gradient of input %d", k), gout[offs[k]:offs[k]+size], want[len(outs)+k], 1e-4)
	}
	if gru && h.launches["gru_fwd_step"] != T || !gru && h.launches["lstm_fwd_step"] != T {
		t.Errorf("launches %v for %d steps", h.launches, T)
	}
}
