package cpu

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// The fused recurrent sequences' kernels (core/rnn.go): the forward pass
// runs one matrix product per step for all the gates (two for the GRU)
// and one fused elementwise pass (rnn_steps.go); the backward scan one
// product per step for the previous state's gradient (two for the GRU),
// the recurrent weights' gradients after the loop as one product over all
// the steps. A small layer's sequence runs split by batch rows
// (rnn_split.go). The buffers of the graph's layout (core.LSTMLayout, ...)
// live in the ops' outputs, which the executor reuses; the scratch of the
// split (packed weights, the peepholes' partial gradients) is each node's
// kernel's, grown to the largest call's need: nothing is allocated per
// call.

// rnnDims are the sizes of a fused sequence: T steps, B rows, d units.
type rnnDims struct{ T, B, d int }

func (r rnnDims) n() int { return r.B * r.d }

// rnnKernel is a fused sequence node's kernel and scratch.
type rnnKernel struct {
	op  core.Op
	s32 []float32
	s64 []float64
}

func newRNNKernel(op core.Op) kernel { return &rnnKernel{op: op} }

func (k *rnnKernel) String() string { return k.op.String() }

// Run is RunErr, for a caller that cannot take an error (the executor
// calls RunErr).
func (k *rnnKernel) Run(out *nd.Array, in []*nd.Array) {
	if err := k.RunErr(out, in); err != nil {
		panic(err)
	}
}

// RunErr runs the sequence or its gradient; buffers smaller than the
// shapes say are an error.
func (k *rnnKernel) RunErr(out *nd.Array, in []*nd.Array) error {
	switch o := k.op.(type) {
	case *core.LSTMSeqOp:
		switch out.Data.(type) {
		case []float32:
			return lstmForward(o, out, in, &k.s32)
		case []float64:
			return lstmForward(o, out, in, &k.s64)
		}
		return fmt.Errorf("LSTM sequence: %s data", out.DType())
	case *core.LSTMSeqGradOp:
		switch out.Data.(type) {
		case []float32:
			return lstmBackward(o.Forward(), out, in, &k.s32)
		case []float64:
			return lstmBackward(o.Forward(), out, in, &k.s64)
		}
		return fmt.Errorf("LSTM sequence gradient: %s data", out.DType())
	case *core.GRUSeqOp:
		switch out.Data.(type) {
		case []float32:
			return gruForward(o, out, in, &k.s32)
		case []float64:
			return gruForward(o, out, in, &k.s64)
		}
		return fmt.Errorf("GRU sequence: %s data", out.DType())
	case *core.GRUSeqGradOp:
		switch out.Data.(type) {
		case []float32:
			return gruBackward(o.Forward(), out, in, &k.s32)
		case []float64:
			return gruBackward(o.Forward(), out, in, &k.s64)
		}
		return fmt.Errorf("GRU sequence gradient: %s data", out.DType())
	}
	return fmt.Errorf("%s is not a fused sequence", k.op)
}

// grow is the first n elements of *s, reallocated when it is shorter.
func grow[T float32 | float64](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	return (*s)[:n]
}

func rnnData[T float32 | float64](a *nd.Array) []T {
	if a == nil {
		return nil
	}
	return a.Data.([]T)
}

// stepIndex is the input time read by iteration step s.
func stepIndex(s, T int, reverse bool) int {
	if reverse {
		return T - 1 - s
	}
	return s
}

func lstmForward[T float32 | float64](o *core.LSTMSeqOp, out *nd.Array, in []*nd.Array, scratch *[]T) error {
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[1].Shape[1]}
	n, d, B := r.n(), r.d, r.B
	p := out.Data.([]T)
	hOff, cOff, _, _, total := core.LSTMLayout(r.T, r.B, r.d)
	x, w := rnnData[T](in[0]), rnnData[T](in[3])
	wci, wcf, wco := rnnData[T](in[4]), rnnData[T](in[5]), rnnData[T](in[6])
	h0, c0 := rnnData[T](in[1]), rnnData[T](in[2])
	if len(p) < total || len(x) < r.T*4*n || len(w) < 4*d*d || len(wci) < d || len(wcf) < d || len(wco) < d ||
		len(h0) < n || len(c0) < n || (o.Mask() && len(rnnData[T](in[7])) < r.T*B) {
		return fmt.Errorf("LSTM sequence: buffers smaller than the shapes say")
	}
	copy(p[hOff:hOff+n], h0)
	copy(p[cOff:cOff+n], c0)
	j := rnnRowsJob[T]{pass: lstmFwdPass, lstm: o, out: p, in: in, B: B}
	if size := lstmFwdPanels(r); rnnUsePanels[T](size) {
		j.p1 = grow(scratch, size)
		rnnPack(j.p1, w, d, 4*d, false)
	}
	return runRNNRows(j, rnnRowParts(r.T, B, 4*d*d))
}

// lstmForwardRows runs rows [lo, hi) of the batch through every step
// (rnn_split.go); the caller has checked the buffers.
func lstmForwardRows[T float32 | float64](o *core.LSTMSeqOp, p []T, in []*nd.Array, lo, hi int, direct bool, wp []T) error {
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[1].Shape[1]}
	n, d, B := r.n(), r.d, r.B
	hOff, cOff, gOff, tcOff, _ := core.LSTMLayout(r.T, r.B, r.d)
	x, w := rnnData[T](in[0]), rnnData[T](in[3])
	wci, wcf, wco := rnnData[T](in[4]), rnnData[T](in[5]), rnnData[T](in[6])
	var mask []T
	if o.Mask() {
		mask = rnnData[T](in[7])
	}
	rows, a, b := hi-lo, lo*d, hi*d // a step's rows [lo, hi) are elements [a, b) of its (B, d) block
	for s := range r.T {
		t := stepIndex(s, r.T, o.Reverse())
		hp := p[hOff+s*n+a : hOff+s*n+b]
		cp := p[cOff+s*n+a : cOff+s*n+b]
		g := p[gOff+s*4*n+4*a : gOff+s*4*n+4*b]
		if err := rnnProduct(direct, false, rows, 4*d, d, hp, w, wp, g); err != nil {
			return err
		}
		var m []T
		if mask != nil {
			m = mask[t*B+lo : t*B+hi]
		}
		lstmStep(g, x[t*4*n+4*a:t*4*n+4*b], cp, hp, wci, wcf, wco, m,
			p[cOff+(s+1)*n+a:cOff+(s+1)*n+b], p[hOff+(s+1)*n+a:hOff+(s+1)*n+b], p[tcOff+s*n+a:tcOff+s*n+b], rows, d)
	}
	return nil
}

// lstmFwdPanels is the size of W's packed panels in a split sequence's
// forward output (0: none, the products run on OpenBLAS).
func lstmFwdPanels(r rnnDims) int {
	if r.d > rnnMaxPanelK {
		return 0
	}
	return rnnPanelSize(rnnRowParts(r.T, r.B, 4*r.d*r.d), r.d, 4*r.d)
}

// lstmBwdPanels is the size of W's transpose's packed panels at the end
// of a split sequence's gradient (0: none).
func lstmBwdPanels(r rnnDims) int {
	return rnnPanelSize(rnnRowParts(r.T, r.B, 4*r.d*r.d), 4*r.d, r.d)
}

func lstmBackward[T float32 | float64](f *core.LSTMSeqOp, out *nd.Array, in []*nd.Array, scratch *[]T) error {
	k := len(in) - 2
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[1].Shape[1]}
	n, d, B, nT := r.n(), r.d, r.B, r.T
	p, gz := rnnData[T](in[k]), rnnData[T](in[k+1])
	hOff, _, _, _, total := core.LSTMLayout(r.T, r.B, r.d)
	offs, gtotal := core.LSTMGradLayout(r.T, r.B, r.d)
	o := out.Data.([]T)
	if len(p) < total || len(gz) < 2*nT*n || len(o) < gtotal || len(rnnData[T](in[3])) < 4*d*d ||
		len(rnnData[T](in[4])) < d || len(rnnData[T](in[5])) < d || len(rnnData[T](in[6])) < d ||
		(f.Mask() && len(rnnData[T](in[7])) < nT*B) {
		return fmt.Errorf("LSTM sequence gradient: buffers smaller than the shapes say")
	}
	parts := rnnRowParts(nT, B, 4*d*d)
	// The backend's scratch: the peepholes' gradients of row blocks 1..
	// (3·d each), then W's transpose's panels.
	nSums := (kernels.MaxParts - 1) * 3 * d
	size := lstmBwdPanels(r)
	if !rnnUsePanels[T](size) {
		size = 0
	}
	extra := grow(scratch, nSums+size)
	j := rnnRowsJob[T]{pass: lstmBwdPass, lstm: f, out: o, in: in, B: B, sums: extra[:nSums]}
	if size > 0 {
		j.p1 = extra[nSums:]
		rnnPack(j.p1, rnnData[T](in[3]), 4*d, d, true)
	}
	if err := runRNNRows(j, parts); err != nil {
		return err
	}
	// The peepholes' gradients of the other row blocks, in order.
	sums := o[offs[4] : offs[4]+3*d]
	for i := 1; i < parts; i++ {
		if lo, hi := rnnRowRange(B, i, parts); lo < hi {
			part := extra[(i-1)*3*d:]
			for j := range sums {
				sums[j] += part[j]
			}
		}
	}
	// dW = [h0, H(0..T-2)]ᵀ · dA over all the steps at once.
	dX := o[offs[0] : offs[0]+nT*4*n]
	if err := gemm(true, false, d, 4*d, nT*B, p[hOff:hOff+nT*n], dX, o[offs[3]:offs[3]+4*d*d]); err != nil {
		return err
	}
	reverseSteps(dX, nT, 4*n, f.Reverse())
	return nil
}

// lstmBackwardRows runs the backward scan for rows [lo, hi), row block
// part of a split sequence (rnn_split.go); the caller has checked the
// buffers.
func lstmBackwardRows[T float32 | float64](f *core.LSTMSeqOp, o []T, in []*nd.Array, lo, hi, part int, direct bool, wtp, partSums []T) error {
	k := len(in) - 2
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[1].Shape[1]}
	n, d, B, nT := r.n(), r.d, r.B, r.T
	p, gz := rnnData[T](in[k]), rnnData[T](in[k+1])
	_, cOff, gOff, tcOff, _ := core.LSTMLayout(r.T, r.B, r.d)
	offs, _ := core.LSTMGradLayout(r.T, r.B, r.d)
	w := rnnData[T](in[3])
	wci, wcf, wco := rnnData[T](in[4]), rnnData[T](in[5]), rnnData[T](in[6])
	var mask []T
	if f.Mask() {
		mask = rnnData[T](in[7])
	}
	rows, a, b := hi-lo, lo*d, hi*d
	dX := o[offs[0] : offs[0]+nT*4*n]
	carryH, carryC := o[offs[1]+a:offs[1]+b], o[offs[2]+a:offs[2]+b]
	sums := o[offs[4] : offs[4]+3*d] // wci's, wcf's and wco's, contiguous
	scratch := o[offs[6]+d:]
	if part > 0 {
		sums = partSums[(part-1)*3*d : part*3*d]
	}
	sci, scf, sco := sums[:d], sums[d:2*d], sums[2*d:]
	dh, dc, keep := scratch[a:b], scratch[n+a:n+b], scratch[2*n+a:2*n+b]
	clear(carryH)
	clear(carryC)
	clear(sums)
	dH, dC := gz[:nT*n], gz[nT*n:2*nT*n]
	for s := nT - 1; s >= 0; s-- {
		t := stepIndex(s, nT, f.Reverse())
		dHs, dCs := dH[s*n+a:s*n+b], dC[s*n+a:s*n+b]
		var m []T
		if mask != nil {
			m = mask[t*B+lo : t*B+hi]
		}
		da := dX[s*4*n+4*a : s*4*n+4*b]
		lstmStepGradSum(da, dHs, carryH, dCs, carryC, dh, dc, p[gOff+s*4*n+4*a:gOff+s*4*n+4*b], p[cOff+(s+1)*n+a:cOff+(s+1)*n+b],
			p[tcOff+s*n+a:tcOff+s*n+b], p[cOff+s*n+a:cOff+s*n+b], wci, wcf, wco, m, keep, sci, scf, sco, rows, d)
		if err := rnnProduct(direct, true, rows, d, 4*d, da, w, wtp, carryH); err != nil {
			return err
		}
		if mask != nil {
			for j := range carryH {
				carryH[j] += keep[j]
			}
		}
	}
	return nil
}

// reverseSteps puts per-step blocks computed in iteration order back in
// time order when the iteration ran backwards.
func reverseSteps[T float32 | float64](x []T, steps, size int, reverse bool) {
	if !reverse {
		return
	}
	for s := range steps / 2 {
		a := x[s*size : (s+1)*size]
		b := x[(steps-1-s)*size : (steps-s)*size]
		for j := range a {
			a[j], b[j] = b[j], a[j]
		}
	}
}

// gruFwdPanels is the size of W_g's and U's packed panels (in that
// order) at the end of a split sequence's forward output (0: none).
func gruFwdPanels(r rnnDims) int {
	if r.d > rnnMaxPanelK {
		return 0
	}
	parts := rnnRowParts(r.T, r.B, 3*r.d*r.d)
	return rnnPanelSize(parts, r.d, 2*r.d) + rnnPanelSize(parts, r.d, r.d)
}

func gruForward[T float32 | float64](o *core.GRUSeqOp, out *nd.Array, in []*nd.Array, scratch *[]T) error {
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[2].Shape[1]}
	n, d, B := r.n(), r.d, r.B
	p := out.Data.([]T)
	hOff, _, _, _, total := core.GRULayout(r.T, r.B, r.d)
	h0 := rnnData[T](in[2])
	if len(p) < total || len(rnnData[T](in[0])) < r.T*n || len(rnnData[T](in[1])) < 2*r.T*n || len(h0) < n ||
		len(rnnData[T](in[3])) < d*d || len(rnnData[T](in[4])) < 2*d*d || (o.Mask() && len(rnnData[T](in[5])) < r.T*B) {
		return fmt.Errorf("GRU sequence: buffers smaller than the shapes say")
	}
	copy(p[hOff:hOff+n], h0)
	j := rnnRowsJob[T]{pass: gruFwdPass, gru: o, out: p, in: in, B: B}
	if size := gruFwdPanels(r); rnnUsePanels[T](size) {
		sg := vec.PanelsSize32(d, 2*d)
		ps := grow(scratch, size)
		j.p1, j.p2 = ps[:sg], ps[sg:]
		rnnPack(j.p1, rnnData[T](in[4]), d, 2*d, false)
		rnnPack(j.p2, rnnData[T](in[3]), d, d, false)
	}
	return runRNNRows(j, rnnRowParts(r.T, B, 3*d*d))
}

// gruForwardRows runs rows [lo, hi) of the batch through every step
// (rnn_split.go); the caller has checked the buffers.
func gruForwardRows[T float32 | float64](o *core.GRUSeqOp, p []T, in []*nd.Array, lo, hi int, direct bool, wgp, up []T) error {
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[2].Shape[1]}
	n, d, B := r.n(), r.d, r.B
	hOff, gOff, nOff, hrOff, _ := core.GRULayout(r.T, r.B, r.d)
	x, xg, u, wg := rnnData[T](in[0]), rnnData[T](in[1]), rnnData[T](in[3]), rnnData[T](in[4])
	var mask []T
	if o.Mask() {
		mask = rnnData[T](in[5])
	}
	rows, a, b := hi-lo, lo*d, hi*d
	for s := range r.T {
		t := stepIndex(s, r.T, o.Reverse())
		hp := p[hOff+s*n+a : hOff+s*n+b]
		g := p[gOff+s*2*n+2*a : gOff+s*2*n+2*b]
		hr := p[hrOff+s*n+a : hrOff+s*n+b]
		nn := p[nOff+s*n+a : nOff+s*n+b]
		if err := rnnProduct(direct, false, rows, 2*d, d, hp, wg, wgp, g); err != nil {
			return err
		}
		gruGates(g, xg[t*2*n+2*a:t*2*n+2*b], hp, hr, rows, d)
		if err := rnnProduct(direct, false, rows, d, d, hr, u, up, nn); err != nil {
			return err
		}
		var m []T
		if mask != nil {
			m = mask[t*B+lo : t*B+hi]
		}
		gruStep(nn, x[t*n+a:t*n+b], g, hp, m, p[hOff+(s+1)*n+a:hOff+(s+1)*n+b], rows, d)
	}
	return nil
}

// gruBwdPanels is the size of U's and W_g's transposes' packed panels (in
// that order) at the end of a split sequence's gradient (0: none).
func gruBwdPanels(r rnnDims) int {
	parts := rnnRowParts(r.T, r.B, 3*r.d*r.d)
	return rnnPanelSize(parts, r.d, r.d) + rnnPanelSize(parts, 2*r.d, r.d)
}

func gruBackward[T float32 | float64](f *core.GRUSeqOp, out *nd.Array, in []*nd.Array, scratch *[]T) error {
	k := len(in) - 2
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[2].Shape[1]}
	n, d, B, nT := r.n(), r.d, r.B, r.T
	p, gz := rnnData[T](in[k]), rnnData[T](in[k+1])
	hOff, _, _, hrOff, total := core.GRULayout(r.T, r.B, r.d)
	offs, gtotal := core.GRUGradLayout(r.T, r.B, r.d)
	o := out.Data.([]T)
	if len(p) < total || len(gz) < nT*n || len(o) < gtotal || len(rnnData[T](in[3])) < d*d ||
		len(rnnData[T](in[4])) < 2*d*d || (f.Mask() && len(rnnData[T](in[5])) < nT*B) {
		return fmt.Errorf("GRU sequence gradient: buffers smaller than the shapes say")
	}
	j := rnnRowsJob[T]{pass: gruBwdPass, gru: f, out: o, in: in, B: B}
	if size := gruBwdPanels(r); rnnUsePanels[T](size) {
		su := vec.PanelsSize32(d, d)
		ps := grow(scratch, size)
		j.p1, j.p2 = ps[:su], ps[su:]
		rnnPack(j.p1, rnnData[T](in[3]), d, d, true)
		rnnPack(j.p2, rnnData[T](in[4]), 2*d, d, true)
	}
	if err := runRNNRows(j, rnnRowParts(nT, B, 3*d*d)); err != nil {
		return err
	}
	dX := o[offs[0] : offs[0]+nT*n]
	dXG := o[offs[1] : offs[1]+2*nT*n]
	// dU = (h·r)ᵀ·dA_n and dW_g = [h0, H(0..T-2)]ᵀ·dA_g over all the steps.
	if err := gemm(true, false, d, d, nT*B, p[hrOff:hrOff+nT*n], dX, o[offs[3]:offs[3]+d*d]); err != nil {
		return err
	}
	if err := gemm(true, false, d, 2*d, nT*B, p[hOff:hOff+nT*n], dXG, o[offs[4]:offs[4]+2*d*d]); err != nil {
		return err
	}
	reverseSteps(dX, nT, n, f.Reverse())
	reverseSteps(dXG, nT, 2*n, f.Reverse())
	return nil
}

// gruBackwardRows runs the backward scan for rows [lo, hi) (rnn_split.go);
// the caller has checked the buffers.
func gruBackwardRows[T float32 | float64](f *core.GRUSeqOp, o []T, in []*nd.Array, lo, hi int, direct bool, utp, wgtp []T) error {
	k := len(in) - 2
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[2].Shape[1]}
	n, d, B, nT := r.n(), r.d, r.B, r.T
	p, gz := rnnData[T](in[k]), rnnData[T](in[k+1])
	hOff, gOff, nOff, _, _ := core.GRULayout(r.T, r.B, r.d)
	offs, _ := core.GRUGradLayout(r.T, r.B, r.d)
	u, wg := rnnData[T](in[3]), rnnData[T](in[4])
	var mask []T
	if f.Mask() {
		mask = rnnData[T](in[5])
	}
	rows, a, b := hi-lo, lo*d, hi*d
	dX := o[offs[0] : offs[0]+nT*n]
	dXG := o[offs[1] : offs[1]+2*nT*n]
	carry := o[offs[2]+a : offs[2]+b]
	scratch := o[offs[4]+2*d*d:]
	dh, dhr, tmp := scratch[a:b], scratch[n+a:n+b], scratch[2*n+a:2*n+b]
	clear(carry)
	for s := nT - 1; s >= 0; s-- {
		t := stepIndex(s, nT, f.Reverse())
		addRows(dh, gz[s*n+a:s*n+b], carry)
		var m []T
		if mask != nil {
			m = mask[t*B+lo : t*B+hi]
		}
		g := p[gOff+s*2*n+2*a : gOff+s*2*n+2*b]
		hp := p[hOff+s*n+a : hOff+s*n+b]
		dan := dX[s*n+a : s*n+b]
		dg := dXG[s*2*n+2*a : s*2*n+2*b]
		gruStepGradN(dan, dg, dh, g, p[nOff+s*n+a:nOff+s*n+b], hp, m, carry, rows, d)
		if err := rnnProduct(direct, true, rows, d, d, dan, u, utp, dhr); err != nil {
			return err
		}
		gruStepGradR(dg, dhr, g, hp, carry, rows, d)
		if err := rnnProduct(direct, true, rows, d, 2*d, dg, wg, wgtp, tmp); err != nil {
			return err
		}
		addRows(carry, carry, tmp)
	}
	return nil
}

// rnnOut is core.RNNOutOp's kernel: a view of output k (the states, the
// LSTM's cells) in the packed buffer. Inputs: the packed buffer, the
// input sequence and the initial state.
func rnnOut(op core.Op, out *nd.Array, in []*nd.Array) {
	k := op.(core.RNNOutOp).Part()
	T, n := in[1].Shape[0], in[2].Size()
	off := (k*(T+1) + 1) * n
	setView(out, in[0].Data, off, off+T*n)
}

// rnnOutGrad is core.RNNOutGradOp's kernel: the packed gradient of the
// sequence's outputs, zeros for the one not used (a view for the GRU).
func rnnOutGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	o := op.(core.RNNOutGradOp)
	if o.Parts() == 1 {
		out.Data = in[0].Data
		return
	}
	k := o.Part()
	zero(out)
	n := in[0].Size()
	switch d := out.Data.(type) {
	case []float32:
		if g, ok := in[0].Data.([]float32); ok {
			copy(d[k*n:(k+1)*n], g)
			return
		}
	case []float64:
		if g, ok := in[0].Data.([]float64); ok {
			copy(d[k*n:(k+1)*n], g)
			return
		}
	}
	copyInto(part(out, k*n, in[0].Shape), in[0])
}

// rnnGradPart is core.RNNGradPartOp's kernel: a view of input k's
// gradient in the packed gradient. Inputs: the packed gradient and the
// sequence's inputs.
func rnnGradPart(op core.Op, out *nd.Array, in []*nd.Array) {
	k, gru := op.(core.RNNGradPartOp).Part()
	var off int
	if !gru {
		offs, _ := core.LSTMGradLayout(in[1].Shape[0], in[1].Shape[1], in[2].Shape[1])
		off = offs[k]
	} else {
		offs, _ := core.GRUGradLayout(in[1].Shape[0], in[1].Shape[1], in[3].Shape[1])
		off = offs[k]
	}
	setView(out, in[0].Data, off, off+nd.Prod(out.Shape))
}

// FusionEnabled says whether fusions are on (they are unless the settings
// say NoFuse, for comparisons: kernels.Settings): the executor's
// planning-time fusions and the bricks' fused recurrent sequences.
func FusionEnabled() bool { return !kernels.Current().NoFuse }
