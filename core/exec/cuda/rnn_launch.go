package cuda

import "github.com/blocks-go/blocks/core"

// The launch sequences of the fused recurrent sequences (core/rnn.go) on
// the GPU: per time step, the recurrent product(s) and one elementwise
// kernel (kernels.cu's lstm_* and gru_*); after the backward loop, the
// recurrent weights' gradients as one product over all the steps. They
// are written against seqDevice so that the same code drives the GPU
// (dispatch_rnn.go, cuda build) and the kernels' Go mirrors in the tests
// (rnn_launch_test.go, compared with the CPU backend's ops).

// ref addresses a buffer of the op: its index in the op's buffer list
// (the inputs, then the output, then scratch) and an offset in floats;
// buf -1 is a null pointer.
type ref struct{ buf, off int }

var null = ref{-1, 0}

func (r ref) at(off int) ref { return ref{r.buf, r.off + off} }

// seqDevice runs the launches: gemm is a row-major product of contiguous
// operands (C = op(A)·op(B), m × n); kernel launches a kernel over n
// threads with args (ref, int); copy copies n floats; add is dst += src
// over n floats; zero clears n floats.
type seqDevice interface {
	gemm(tA, tB bool, m, n, k int, a, b, c ref) error
	kernel(name string, n int, args ...any) error
	copy(dst, src ref, n int) error
	add(dst, src ref, n int) error
	zero(dst ref, n int) error
}

// rnnSeq is one fused sequence's sizes and flags.
type rnnSeq struct {
	T, B, d       int
	reverse, mask bool
}

func (r rnnSeq) n() int { return r.B * r.d }

func (r rnnSeq) step(s int) int {
	if r.reverse {
		return r.T - 1 - s
	}
	return s
}

func (r rnnSeq) maskAt(mask ref, t int) ref {
	if !r.mask {
		return null
	}
	return mask.at(t * r.B)
}

// LSTM buffers: the inputs x, h0, c0, W, wci, wcf, wco[, mask] then the
// output; for the gradient the packed forward output and the packed (dH,
// dC) follow the inputs, then the output and the scratch (B × 3d).
func (r rnnSeq) lstmForward(dev seqDevice) error {
	n, d := r.n(), r.d
	x, h0, c0, w, wci, wcf, wco := ref{0, 0}, ref{1, 0}, ref{2, 0}, ref{3, 0}, ref{4, 0}, ref{5, 0}, ref{6, 0}
	mask, out := ref{7, 0}, ref{7, 0}
	if r.mask {
		out = ref{8, 0}
	}
	hOff, cOff, gOff, tcOff, _ := core.RNNLayout(false, r.T, r.B, r.d)
	if err := dev.copy(out.at(hOff), h0, n); err != nil {
		return err
	}
	if err := dev.copy(out.at(cOff), c0, n); err != nil {
		return err
	}
	for s := range r.T {
		t := r.step(s)
		hp, cp, g := out.at(hOff+s*n), out.at(cOff+s*n), out.at(gOff+s*4*n)
		if err := dev.gemm(false, false, r.B, 4*d, d, hp, w, g); err != nil {
			return err
		}
		if err := dev.kernel("lstm_fwd_step", n, g, x.at(t*4*n), cp, hp, wci, wcf, wco, r.maskAt(mask, t),
			out.at(cOff+(s+1)*n), out.at(hOff+(s+1)*n), out.at(tcOff+s*n), r.B, d); err != nil {
			return err
		}
	}
	return nil
}

func (r rnnSeq) lstmBackward(dev seqDevice) error {
	n, d, nT := r.n(), r.d, r.T
	w, wci, wcf, wco := ref{3, 0}, ref{4, 0}, ref{5, 0}, ref{6, 0}
	mask, k := ref{7, 0}, 7
	if r.mask {
		k = 8
	}
	p, gz, o, pe := ref{k, 0}, ref{k + 1, 0}, ref{k + 2, 0}, ref{k + 3, 0}
	hOff, cOff, gOff, tcOff, _ := core.RNNLayout(false, r.T, r.B, r.d)
	offs, _ := core.RNNGradLayout(false, r.T, r.B, r.d)
	dX, carryH, carryC, dW, sums := o.at(offs[0]), o.at(offs[1]), o.at(offs[2]), o.at(offs[3]), o.at(offs[4])
	scratch := o.at(offs[6] + d)
	keep := scratch.at(2 * n)
	if err := dev.zero(carryH, n); err != nil {
		return err
	}
	if err := dev.zero(carryC, n); err != nil {
		return err
	}
	if err := dev.zero(sums, 3*d); err != nil {
		return err
	}
	for s := nT - 1; s >= 0; s-- {
		t := r.step(s)
		da := dX.at(s * 4 * n)
		if err := dev.kernel("lstm_bwd_step", n, da, gz.at(s*n), gz.at(nT*n+s*n), carryH, carryC, keep, pe,
			p.at(gOff+s*4*n), p.at(cOff+(s+1)*n), p.at(tcOff+s*n), p.at(cOff+s*n), wci, wcf, wco, r.maskAt(mask, t), r.B, d); err != nil {
			return err
		}
		if err := dev.kernel("colsum_add", 3*d, sums, pe, r.B, 3*d); err != nil {
			return err
		}
		if err := dev.gemm(false, true, r.B, d, 4*d, da, w, carryH); err != nil {
			return err
		}
		if r.mask {
			if err := dev.add(carryH, keep, n); err != nil {
				return err
			}
		}
	}
	// dW = [h0, H(0..T-2)]ᵀ · dA over all the steps at once.
	if err := dev.gemm(true, false, d, 4*d, nT*r.B, p.at(hOff), dX, dW); err != nil {
		return err
	}
	if r.reverse {
		return dev.kernel("reverse_steps", nT/2*4*n, dX, nT, 4*n)
	}
	return nil
}

// GRU buffers: x, xg, h0, U, W_g[, mask] then the output; for the
// gradient the packed forward output and dH follow the inputs, then the
// output.
func (r rnnSeq) gruForward(dev seqDevice) error {
	n, d := r.n(), r.d
	x, xg, h0, u, wg := ref{0, 0}, ref{1, 0}, ref{2, 0}, ref{3, 0}, ref{4, 0}
	mask, out := ref{5, 0}, ref{5, 0}
	if r.mask {
		out = ref{6, 0}
	}
	hOff, gOff, nOff, hrOff, _ := core.RNNLayout(true, r.T, r.B, r.d)
	if err := dev.copy(out.at(hOff), h0, n); err != nil {
		return err
	}
	for s := range r.T {
		t := r.step(s)
		hp, g, hr, nn := out.at(hOff+s*n), out.at(gOff+s*2*n), out.at(hrOff+s*n), out.at(nOff+s*n)
		if err := dev.gemm(false, false, r.B, 2*d, d, hp, wg, g); err != nil {
			return err
		}
		if err := dev.kernel("gru_gates", n, g, xg.at(t*2*n), hp, hr, r.B, d); err != nil {
			return err
		}
		if err := dev.gemm(false, false, r.B, d, d, hr, u, nn); err != nil {
			return err
		}
		if err := dev.kernel("gru_fwd_step", n, nn, x.at(t*n), g, hp, r.maskAt(mask, t), out.at(hOff+(s+1)*n), r.B, d); err != nil {
			return err
		}
	}
	return nil
}

func (r rnnSeq) gruBackward(dev seqDevice) error {
	n, d, nT := r.n(), r.d, r.T
	u, wg := ref{3, 0}, ref{4, 0}
	mask, k := ref{5, 0}, 5
	if r.mask {
		k = 6
	}
	p, gz, o := ref{k, 0}, ref{k + 1, 0}, ref{k + 2, 0}
	hOff, gOff, nOff, hrOff, _ := core.RNNLayout(true, r.T, r.B, r.d)
	offs, _ := core.RNNGradLayout(true, r.T, r.B, r.d)
	dX, dXG, carry := o.at(offs[0]), o.at(offs[1]), o.at(offs[2])
	scratch := o.at(offs[4] + 2*d*d)
	dhr, tmp := scratch.at(n), scratch.at(2*n)
	if err := dev.zero(carry, n); err != nil {
		return err
	}
	for s := nT - 1; s >= 0; s-- {
		t := r.step(s)
		g, hp := p.at(gOff+s*2*n), p.at(hOff+s*n)
		dan, dg := dX.at(s*n), dXG.at(s*2*n)
		if err := dev.kernel("gru_bwd_n", n, dan, dg, gz.at(s*n), carry, g, p.at(nOff+s*n), hp, r.maskAt(mask, t), r.B, d); err != nil {
			return err
		}
		if err := dev.gemm(false, true, r.B, d, d, dan, u, dhr); err != nil {
			return err
		}
		if err := dev.kernel("gru_bwd_r", n, dg, dhr, carry, g, hp, r.B, d); err != nil {
			return err
		}
		if err := dev.gemm(false, true, r.B, d, 2*d, dg, wg, tmp); err != nil {
			return err
		}
		if err := dev.add(carry, tmp, n); err != nil {
			return err
		}
	}
	// dU = (h·r)ᵀ·dA_n and dW_g = [h0, H(0..T-2)]ᵀ·dA_g over all the steps.
	if err := dev.gemm(true, false, d, d, nT*r.B, p.at(hrOff), dX, o.at(offs[3])); err != nil {
		return err
	}
	if err := dev.gemm(true, false, d, 2*d, nT*r.B, p.at(hOff), dXG, o.at(offs[4])); err != nil {
		return err
	}
	if r.reverse {
		if err := dev.kernel("reverse_steps", nT/2*n, dX, nT, n); err != nil {
			return err
		}
		return dev.kernel("reverse_steps", nT/2*2*n, dXG, nT, 2*n)
	}
	return nil
}
