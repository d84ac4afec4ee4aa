package core

import (
	"fmt"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// Fused recurrent sequences: Blocks' LSTM and GatedRecurrent iterated over
// a whole sequence as one op each, instead of a Scan of their step graph.
// The forward op runs one matrix product per step for all the gates
// (two for the GRU, whose candidate needs the reset gate first) and one
// fused elementwise pass (rnn_kernels.go); it keeps the gates for the
// gradient in its packed output. The gradient op runs the backward scan
// with one product per step for the previous state's gradient (two for
// the GRU), writes the pre-activations' gradients straight into the
// inputs' gradient, and computes the recurrent weights' gradients after
// the loop as one product over all the steps (Hᵀ·dA, (d × T·B)·(T·B × 4d)),
// as cuDNN and PyTorch do. Nothing is allocated per call: every buffer,
// scratch included, lives in the ops' outputs, which the executor reuses.
//
// Semantics are the bricks' (bricks/recurrent.go): Blocks' LSTM with its
// diagonal peepholes and GatedRecurrent, Tanh and Logistic activations,
// the mask keeping the previous state where it is 0, outputs in iteration
// order (with Reverse, the first row is the step that read the last
// input). The mask is not differentiated (it is data).

// rnnDims are the sizes of a fused sequence: T steps, B rows, d units.
type rnnDims struct{ T, B, d int }

func (r rnnDims) n() int { return r.B * r.d }

func checkRNNTypes(name string, in []*Variable, ndims []int, mask bool) (nd.DType, error) {
	want := len(ndims)
	if mask {
		want++
	}
	if len(in) != want {
		return 0, fmt.Errorf("%s takes %d inputs, got %d", name, want, len(in))
	}
	dt := in[0].dtype
	if !dt.IsFloat() {
		return 0, fmt.Errorf("%s: the inputs must be floats, got %s %s", name, dt, in[0])
	}
	for i, n := range ndims {
		if in[i].ndim != n || in[i].dtype != dt {
			return 0, fmt.Errorf("%s: input %d (%s) must be %d-d %s, got %s", name, i, in[i], n, dt, in[i].TypeString())
		}
	}
	if mask && (in[len(ndims)].ndim != 2 || in[len(ndims)].dtype != dt) {
		return 0, fmt.Errorf("%s: the mask must be 2-d (time, batch) %s, got %s %s", name, dt, in[len(ndims)], in[len(ndims)].TypeString())
	}
	return dt, nil
}

// checkRNNShapes checks the shapes of a fused sequence's inputs against
// want (-1: T, -2: B, -3: d, -4·k: k·d), d being the initial state's
// (input h0) last dimension, and returns the sizes.
func checkRNNShapes(name string, in [][]int, want [][]int, mask bool, h0 int) (rnnDims, error) {
	x := in[0]
	if len(x) != 3 || len(in[h0]) != 2 {
		return rnnDims{}, fmt.Errorf("%s: the inputs must be (time, batch, features) and the initial state (batch, dim), got %s and %s", name, nd.ShapeString(x), nd.ShapeString(in[h0]))
	}
	r := rnnDims{T: x[0], B: x[1], d: in[h0][1]}
	dim := func(code int) int {
		switch code {
		case -1:
			return r.T
		case -2:
			return r.B
		case -3:
			return r.d
		}
		return -code / 4 * r.d
	}
	for i, w := range want {
		ok := len(in[i]) == len(w)
		for k := 0; ok && k < len(w); k++ {
			ok = in[i][k] == dim(w[k])
		}
		if !ok {
			exp := make([]int, len(w))
			for k := range w {
				exp[k] = dim(w[k])
			}
			return rnnDims{}, fmt.Errorf("%s: input %d has shape %s, want %s", name, i, nd.ShapeString(in[i]), nd.ShapeString(exp))
		}
	}
	if mask {
		if m := in[len(want)]; len(m) != 2 || m[0] != r.T || m[1] != r.B {
			return rnnDims{}, fmt.Errorf("%s: the mask has shape %s, want (%d, %d) (time, batch)", name, nd.ShapeString(m), r.T, r.B)
		}
	}
	return r, nil
}

// LSTMSequence is Blocks' LSTM over a whole sequence, fused: x (T, B, 4d)
// the inputs, h0 and c0 (B, d) the initial states, w (d, 4d) W_state, wci,
// wcf, wco (d) the peepholes, mask (T, B) or nil. It returns the states
// and cells, (T, B, d) each.
func LSTMSequence(x, h0, c0, w, wci, wcf, wco, mask *Variable, reverse bool) (states, cells *Variable, err error) {
	in := []*Variable{x, h0, c0, w, wci, wcf, wco}
	if mask != nil {
		in = append(in, mask)
	}
	op := &lstmSeqOp{reverse: reverse, mask: mask != nil}
	packed, err := tryApply(op, in...)
	if err != nil {
		return nil, nil, err
	}
	packed.Name = "lstm.packed"
	return apply(rnnOutOp{lstmKind, 0}, packed, x, h0), apply(rnnOutOp{lstmKind, 1}, packed, x, h0), nil
}

// GRUSequence is Blocks' GatedRecurrent over a whole sequence, fused: x
// (T, B, d) the inputs, xg (T, B, 2d) the gate inputs, h0 (B, d), u (d, d)
// state_to_state, wg (d, 2d) state_to_gates, mask (T, B) or nil. It
// returns the states (T, B, d).
func GRUSequence(x, xg, h0, u, wg, mask *Variable, reverse bool) (*Variable, error) {
	in := []*Variable{x, xg, h0, u, wg}
	if mask != nil {
		in = append(in, mask)
	}
	op := &gruSeqOp{reverse: reverse, mask: mask != nil}
	packed, err := tryApply(op, in...)
	if err != nil {
		return nil, err
	}
	packed.Name = "gru.packed"
	return apply(rnnOutOp{gruKind, 0}, packed, x, h0), nil
}

type rnnKind int

const (
	lstmKind rnnKind = iota
	gruKind
)

// ---- LSTM ----

type lstmSeqOp struct{ reverse, mask bool }

var lstmShapes = [][]int{{-1, -2, -16}, {-2, -3}, {-2, -3}, {-3, -16}, {-3}, {-3}, {-3}}

func (o *lstmSeqOp) String() string {
	if o.reverse {
		return "LSTMSequence{reverse}"
	}
	return "LSTMSequence"
}

func (o *lstmSeqOp) Type(in []*Variable) (nd.DType, int, error) {
	dt, err := checkRNNTypes("LSTM sequence", in, []int{3, 2, 2, 2, 1, 1, 1}, o.mask)
	return dt, 1, err
}

// lstmLayout: the packed output holds [h0, H] and [c0, C] ((T+1)·B·d
// each), the activated gates (T·B·4d), tanh of the unmasked cells (T·B·d)
// and, last, W's panels (lstmFwdPanels).
func lstmLayout(r rnnDims) (h, c, g, tc, total int) {
	n := r.n()
	h, c = 0, (r.T+1)*n
	g = 2 * (r.T + 1) * n
	tc = g + 4*r.T*n
	return h, c, g, tc, tc + r.T*n + lstmFwdPanels(r)
}

// lstmFwdPanels is the size of W's packed panels in a split sequence's
// forward output (0: none, the products run on OpenBLAS).
func lstmFwdPanels(r rnnDims) int {
	if r.d > rnnMaxPanelK {
		return 0
	}
	return rnnPanelSize(rnnRowParts(r.T, r.B, 4*r.d*r.d), r.d, 4*r.d)
}

func (o *lstmSeqOp) Shape(in [][]int) ([]int, error) {
	r, err := checkRNNShapes("LSTM sequence", in, lstmShapes, o.mask, 1)
	if err != nil {
		return nil, err
	}
	_, _, _, _, total := lstmLayout(r)
	return []int{total}, nil
}

func (o *lstmSeqOp) Run(out *nd.Array, in []*nd.Array) {
	if err := o.RunErr(out, in); err != nil {
		panic(err)
	}
}

func (o *lstmSeqOp) RunErr(out *nd.Array, in []*nd.Array) error {
	switch out.Data.(type) {
	case []float32:
		return lstmForward[float32](o, out, in)
	case []float64:
		return lstmForward[float64](o, out, in)
	}
	return fmt.Errorf("LSTM sequence: %s data", out.DType())
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

func lstmForward[T float32 | float64](o *lstmSeqOp, out *nd.Array, in []*nd.Array) error {
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[1].Shape[1]}
	n, d, B := r.n(), r.d, r.B
	p := out.Data.([]T)
	hOff, cOff, _, _, total := lstmLayout(r)
	x, w := rnnData[T](in[0]), rnnData[T](in[3])
	wci, wcf, wco := rnnData[T](in[4]), rnnData[T](in[5]), rnnData[T](in[6])
	h0, c0 := rnnData[T](in[1]), rnnData[T](in[2])
	if len(p) < total || len(x) < r.T*4*n || len(w) < 4*d*d || len(wci) < d || len(wcf) < d || len(wco) < d ||
		len(h0) < n || len(c0) < n || (o.mask && len(rnnData[T](in[7])) < r.T*B) {
		return fmt.Errorf("LSTM sequence: buffers smaller than the shapes say")
	}
	copy(p[hOff:hOff+n], h0)
	copy(p[cOff:cOff+n], c0)
	j := rnnRowsJob[T]{pass: lstmFwdPass, lstm: o, out: p, in: in, B: B}
	if size := lstmFwdPanels(r); rnnUsePanels[T](size) {
		j.p1 = p[total-size : total]
		rnnPack(j.p1, w, d, 4*d, false)
	}
	return runRNNRows(j, rnnRowParts(r.T, B, 4*d*d))
}

// lstmForwardRows runs rows [lo, hi) of the batch through every step
// (rnn_split.go); the caller has checked the buffers.
func lstmForwardRows[T float32 | float64](o *lstmSeqOp, p []T, in []*nd.Array, lo, hi int, direct bool, wp []T) error {
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[1].Shape[1]}
	n, d, B := r.n(), r.d, r.B
	hOff, cOff, gOff, tcOff, _ := lstmLayout(r)
	x, w := rnnData[T](in[0]), rnnData[T](in[3])
	wci, wcf, wco := rnnData[T](in[4]), rnnData[T](in[5]), rnnData[T](in[6])
	var mask []T
	if o.mask {
		mask = rnnData[T](in[7])
	}
	rows, a, b := hi-lo, lo*d, hi*d // a step's rows [lo, hi) are elements [a, b) of its (B, d) block
	for s := range r.T {
		t := stepIndex(s, r.T, o.reverse)
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

func (o *lstmSeqOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := apply(&lstmSeqGradOp{o}, append(append([]*Variable(nil), in...), out, gz)...)
	grads := make([]*Variable, len(in))
	for k := range 7 {
		grads[k] = apply(rnnGradPartOp{lstmKind, k}, append([]*Variable{g}, in...)...)
	}
	return grads
}

// lstmSeqGradOp is back-propagation through time. Inputs: the sequence's
// inputs, its packed output and the packed gradient of (H, C). Output:
// [dX, dh0, dc0, dW, dwci, dwcf, dwco] then scratch (dh, dc, keep: B·d
// each; the peepholes' gradients of row blocks 1.. of a split sequence:
// 3·d each).
type lstmSeqGradOp struct{ f *lstmSeqOp }

func (o *lstmSeqGradOp) String() string { return "LSTMSequenceGrad" }
func (o *lstmSeqGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 1, nil
}

func lstmGradLayout(r rnnDims) (offs [7]int, total int) {
	n, d := r.n(), r.d
	sizes := [7]int{r.T * 4 * n, n, n, 4 * d * d, d, d, d}
	for k, s := range sizes {
		offs[k] = total
		total += s
	}
	return offs, total + 3*n + (kernels.MaxParts-1)*3*d + lstmBwdPanels(r)
}

// lstmBwdPanels is the size of W's transpose's packed panels at the end
// of a split sequence's gradient (0: none).
func lstmBwdPanels(r rnnDims) int {
	return rnnPanelSize(rnnRowParts(r.T, r.B, 4*r.d*r.d), 4*r.d, r.d)
}

func (o *lstmSeqGradOp) Shape(in [][]int) ([]int, error) {
	k := len(in) - 2
	r, err := checkRNNShapes("LSTM sequence gradient", in[:k], lstmShapes, o.f.mask, 1)
	if err != nil {
		return nil, err
	}
	_, total := lstmGradLayout(r)
	return []int{total}, nil
}

func (o *lstmSeqGradOp) Run(out *nd.Array, in []*nd.Array) {
	if err := o.RunErr(out, in); err != nil {
		panic(err)
	}
}

func (o *lstmSeqGradOp) RunErr(out *nd.Array, in []*nd.Array) error {
	switch out.Data.(type) {
	case []float32:
		return lstmBackward[float32](o.f, out, in)
	case []float64:
		return lstmBackward[float64](o.f, out, in)
	}
	return fmt.Errorf("LSTM sequence gradient: %s data", out.DType())
}

func lstmBackward[T float32 | float64](f *lstmSeqOp, out *nd.Array, in []*nd.Array) error {
	k := len(in) - 2
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[1].Shape[1]}
	n, d, B, nT := r.n(), r.d, r.B, r.T
	p, gz := rnnData[T](in[k]), rnnData[T](in[k+1])
	hOff, _, _, _, total := lstmLayout(r)
	offs, gtotal := lstmGradLayout(r)
	o := out.Data.([]T)
	if len(p) < total || len(gz) < 2*nT*n || len(o) < gtotal || len(rnnData[T](in[3])) < 4*d*d ||
		len(rnnData[T](in[4])) < d || len(rnnData[T](in[5])) < d || len(rnnData[T](in[6])) < d ||
		(f.mask && len(rnnData[T](in[7])) < nT*B) {
		return fmt.Errorf("LSTM sequence gradient: buffers smaller than the shapes say")
	}
	parts := rnnRowParts(nT, B, 4*d*d)
	j := rnnRowsJob[T]{pass: lstmBwdPass, lstm: f, out: o, in: in, B: B}
	if size := lstmBwdPanels(r); rnnUsePanels[T](size) {
		j.p1 = o[gtotal-size : gtotal]
		rnnPack(j.p1, rnnData[T](in[3]), 4*d, d, true)
	}
	if err := runRNNRows(j, parts); err != nil {
		return err
	}
	// The peepholes' gradients of the other row blocks, in order.
	sums := o[offs[4] : offs[4]+3*d]
	for i := 1; i < parts; i++ {
		if lo, hi := rnnRowRange(B, i, parts); lo < hi {
			part := o[offs[6]+d+3*n+(i-1)*3*d:]
			for j := range sums {
				sums[j] += part[j]
			}
		}
	}
	// dW = [h0, H(0..T-2)]ᵀ · dA over all the steps at once.
	dX := o[offs[0] : offs[0]+nT*4*n]
	if err := rnnGemm(true, false, d, 4*d, nT*B, p[hOff:hOff+nT*n], dX, o[offs[3]:offs[3]+4*d*d]); err != nil {
		return err
	}
	reverseSteps(dX, nT, 4*n, f.reverse)
	return nil
}

// lstmBackwardRows runs the backward scan for rows [lo, hi), row block
// part of a split sequence (rnn_split.go); the caller has checked the
// buffers.
func lstmBackwardRows[T float32 | float64](f *lstmSeqOp, o []T, in []*nd.Array, lo, hi, part int, direct bool, wtp []T) error {
	k := len(in) - 2
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[1].Shape[1]}
	n, d, B, nT := r.n(), r.d, r.B, r.T
	p, gz := rnnData[T](in[k]), rnnData[T](in[k+1])
	_, cOff, gOff, tcOff, _ := lstmLayout(r)
	offs, _ := lstmGradLayout(r)
	w := rnnData[T](in[3])
	wci, wcf, wco := rnnData[T](in[4]), rnnData[T](in[5]), rnnData[T](in[6])
	var mask []T
	if f.mask {
		mask = rnnData[T](in[7])
	}
	rows, a, b := hi-lo, lo*d, hi*d
	dX := o[offs[0] : offs[0]+nT*4*n]
	carryH, carryC := o[offs[1]+a:offs[1]+b], o[offs[2]+a:offs[2]+b]
	sums := o[offs[4] : offs[4]+3*d] // wci's, wcf's and wco's, contiguous
	scratch := o[offs[6]+d:]
	if part > 0 {
		sums = scratch[3*n+(part-1)*3*d : 3*n+part*3*d]
	}
	sci, scf, sco := sums[:d], sums[d:2*d], sums[2*d:]
	dh, dc, keep := scratch[a:b], scratch[n+a:n+b], scratch[2*n+a:2*n+b]
	clear(carryH)
	clear(carryC)
	clear(sums)
	dH, dC := gz[:nT*n], gz[nT*n:2*nT*n]
	for s := nT - 1; s >= 0; s-- {
		t := stepIndex(s, nT, f.reverse)
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

func (o *lstmSeqGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// ---- GRU ----

type gruSeqOp struct{ reverse, mask bool }

var gruShapes = [][]int{{-1, -2, -3}, {-1, -2, -8}, {-2, -3}, {-3, -3}, {-3, -8}}

func (o *gruSeqOp) String() string {
	if o.reverse {
		return "GRUSequence{reverse}"
	}
	return "GRUSequence"
}

func (o *gruSeqOp) Type(in []*Variable) (nd.DType, int, error) {
	dt, err := checkRNNTypes("GRU sequence", in, []int{3, 3, 2, 2, 2}, o.mask)
	return dt, 1, err
}

// gruLayout: the packed output holds [h0, H] ((T+1)·B·d), the activated
// gates (T·B·2d), the candidates n (T·B·d) and h(t-1)·r (T·B·d).
func gruLayout(r rnnDims) (h, g, nn, hr, total int) {
	n := r.n()
	g = (r.T + 1) * n
	nn = g + 2*r.T*n
	hr = nn + r.T*n
	return 0, g, nn, hr, hr + r.T*n + gruFwdPanels(r)
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

func (o *gruSeqOp) Shape(in [][]int) ([]int, error) {
	r, err := checkRNNShapes("GRU sequence", in, gruShapes, o.mask, 2)
	if err != nil {
		return nil, err
	}
	_, _, _, _, total := gruLayout(r)
	return []int{total}, nil
}

func (o *gruSeqOp) Run(out *nd.Array, in []*nd.Array) {
	if err := o.RunErr(out, in); err != nil {
		panic(err)
	}
}

func (o *gruSeqOp) RunErr(out *nd.Array, in []*nd.Array) error {
	switch out.Data.(type) {
	case []float32:
		return gruForward[float32](o, out, in)
	case []float64:
		return gruForward[float64](o, out, in)
	}
	return fmt.Errorf("GRU sequence: %s data", out.DType())
}

func gruForward[T float32 | float64](o *gruSeqOp, out *nd.Array, in []*nd.Array) error {
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[2].Shape[1]}
	n, d, B := r.n(), r.d, r.B
	p := out.Data.([]T)
	hOff, _, _, _, total := gruLayout(r)
	h0 := rnnData[T](in[2])
	if len(p) < total || len(rnnData[T](in[0])) < r.T*n || len(rnnData[T](in[1])) < 2*r.T*n || len(h0) < n ||
		len(rnnData[T](in[3])) < d*d || len(rnnData[T](in[4])) < 2*d*d || (o.mask && len(rnnData[T](in[5])) < r.T*B) {
		return fmt.Errorf("GRU sequence: buffers smaller than the shapes say")
	}
	copy(p[hOff:hOff+n], h0)
	j := rnnRowsJob[T]{pass: gruFwdPass, gru: o, out: p, in: in, B: B}
	if size := gruFwdPanels(r); rnnUsePanels[T](size) {
		sg := vec.PanelsSize32(d, 2*d)
		j.p1, j.p2 = p[total-size:total-size+sg], p[total-size+sg:total]
		rnnPack(j.p1, rnnData[T](in[4]), d, 2*d, false)
		rnnPack(j.p2, rnnData[T](in[3]), d, d, false)
	}
	return runRNNRows(j, rnnRowParts(r.T, B, 3*d*d))
}

// gruForwardRows runs rows [lo, hi) of the batch through every step
// (rnn_split.go); the caller has checked the buffers.
func gruForwardRows[T float32 | float64](o *gruSeqOp, p []T, in []*nd.Array, lo, hi int, direct bool, wgp, up []T) error {
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[2].Shape[1]}
	n, d, B := r.n(), r.d, r.B
	hOff, gOff, nOff, hrOff, _ := gruLayout(r)
	x, xg, u, wg := rnnData[T](in[0]), rnnData[T](in[1]), rnnData[T](in[3]), rnnData[T](in[4])
	var mask []T
	if o.mask {
		mask = rnnData[T](in[5])
	}
	rows, a, b := hi-lo, lo*d, hi*d
	for s := range r.T {
		t := stepIndex(s, r.T, o.reverse)
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

func (o *gruSeqOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := apply(&gruSeqGradOp{o}, append(append([]*Variable(nil), in...), out, gz)...)
	grads := make([]*Variable, len(in))
	for k := range 5 {
		grads[k] = apply(rnnGradPartOp{gruKind, k}, append([]*Variable{g}, in...)...)
	}
	return grads
}

// gruSeqGradOp: output [dX, dXG, dh0, dU, dWg] then scratch (dh, dhr,
// tmp: B·d each).
type gruSeqGradOp struct{ f *gruSeqOp }

func (o *gruSeqGradOp) String() string { return "GRUSequenceGrad" }
func (o *gruSeqGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 1, nil
}

func gruGradLayout(r rnnDims) (offs [5]int, total int) {
	n, d := r.n(), r.d
	sizes := [5]int{r.T * n, r.T * 2 * n, n, d * d, 2 * d * d}
	for k, s := range sizes {
		offs[k] = total
		total += s
	}
	return offs, total + 3*n + gruBwdPanels(r)
}

// gruBwdPanels is the size of U's and W_g's transposes' packed panels (in
// that order) at the end of a split sequence's gradient (0: none).
func gruBwdPanels(r rnnDims) int {
	parts := rnnRowParts(r.T, r.B, 3*r.d*r.d)
	return rnnPanelSize(parts, r.d, r.d) + rnnPanelSize(parts, 2*r.d, r.d)
}

func (o *gruSeqGradOp) Shape(in [][]int) ([]int, error) {
	k := len(in) - 2
	r, err := checkRNNShapes("GRU sequence gradient", in[:k], gruShapes, o.f.mask, 2)
	if err != nil {
		return nil, err
	}
	_, total := gruGradLayout(r)
	return []int{total}, nil
}

func (o *gruSeqGradOp) Run(out *nd.Array, in []*nd.Array) {
	if err := o.RunErr(out, in); err != nil {
		panic(err)
	}
}

func (o *gruSeqGradOp) RunErr(out *nd.Array, in []*nd.Array) error {
	switch out.Data.(type) {
	case []float32:
		return gruBackward[float32](o.f, out, in)
	case []float64:
		return gruBackward[float64](o.f, out, in)
	}
	return fmt.Errorf("GRU sequence gradient: %s data", out.DType())
}

func gruBackward[T float32 | float64](f *gruSeqOp, out *nd.Array, in []*nd.Array) error {
	k := len(in) - 2
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[2].Shape[1]}
	n, d, B, nT := r.n(), r.d, r.B, r.T
	p, gz := rnnData[T](in[k]), rnnData[T](in[k+1])
	hOff, _, _, hrOff, total := gruLayout(r)
	offs, gtotal := gruGradLayout(r)
	o := out.Data.([]T)
	if len(p) < total || len(gz) < nT*n || len(o) < gtotal || len(rnnData[T](in[3])) < d*d ||
		len(rnnData[T](in[4])) < 2*d*d || (f.mask && len(rnnData[T](in[5])) < nT*B) {
		return fmt.Errorf("GRU sequence gradient: buffers smaller than the shapes say")
	}
	j := rnnRowsJob[T]{pass: gruBwdPass, gru: f, out: o, in: in, B: B}
	if size := gruBwdPanels(r); rnnUsePanels[T](size) {
		su := vec.PanelsSize32(d, d)
		j.p1, j.p2 = o[gtotal-size:gtotal-size+su], o[gtotal-size+su:gtotal]
		rnnPack(j.p1, rnnData[T](in[3]), d, d, true)
		rnnPack(j.p2, rnnData[T](in[4]), 2*d, d, true)
	}
	if err := runRNNRows(j, rnnRowParts(nT, B, 3*d*d)); err != nil {
		return err
	}
	dX := o[offs[0] : offs[0]+nT*n]
	dXG := o[offs[1] : offs[1]+2*nT*n]
	// dU = (h·r)ᵀ·dA_n and dW_g = [h0, H(0..T-2)]ᵀ·dA_g over all the steps.
	if err := rnnGemm(true, false, d, d, nT*B, p[hrOff:hrOff+nT*n], dX, o[offs[3]:offs[3]+d*d]); err != nil {
		return err
	}
	if err := rnnGemm(true, false, d, 2*d, nT*B, p[hOff:hOff+nT*n], dXG, o[offs[4]:offs[4]+2*d*d]); err != nil {
		return err
	}
	reverseSteps(dX, nT, n, f.reverse)
	reverseSteps(dXG, nT, 2*n, f.reverse)
	return nil
}

// gruBackwardRows runs the backward scan for rows [lo, hi) (rnn_split.go);
// the caller has checked the buffers.
func gruBackwardRows[T float32 | float64](f *gruSeqOp, o []T, in []*nd.Array, lo, hi int, direct bool, utp, wgtp []T) error {
	k := len(in) - 2
	r := rnnDims{T: in[0].Shape[0], B: in[0].Shape[1], d: in[2].Shape[1]}
	n, d, B, nT := r.n(), r.d, r.B, r.T
	p, gz := rnnData[T](in[k]), rnnData[T](in[k+1])
	hOff, gOff, nOff, _, _ := gruLayout(r)
	offs, _ := gruGradLayout(r)
	u, wg := rnnData[T](in[3]), rnnData[T](in[4])
	var mask []T
	if f.mask {
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
		t := stepIndex(s, nT, f.reverse)
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

func (o *gruSeqGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// ---- outputs and gradient parts ----

// rnnOutOp views output k of a fused sequence's packed buffer (LSTM: 0
// the states, 1 the cells; GRU: 0 the states). Inputs: the packed buffer,
// the input sequence and the initial state (for the sizes).
type rnnOutOp struct {
	kind rnnKind
	k    int
}

func (o rnnOutOp) String() string {
	return [][]string{{"LSTMStates", "LSTMCells"}, {"GRUStates"}}[o.kind][o.k]
}
func (o rnnOutOp) Type(in []*Variable) (nd.DType, int, error) { return in[0].dtype, 3, nil }
func (o rnnOutOp) Shape(in [][]int) ([]int, error) {
	return []int{in[1][0], in[1][1], in[2][1]}, nil
}
func (o rnnOutOp) IsView(in [][]int, out []int) bool { return true }
func (o rnnOutOp) Run(out *nd.Array, in []*nd.Array) {
	T, n := in[1].Shape[0], in[2].Size()
	off := (o.k*(T+1) + 1) * n
	setView(out, in[0].Data, off, off+T*n)
}
func (o rnnOutOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(rnnOutGradOp(o), gz, in[1], in[2]), nil, nil}
}

// rnnOutGradOp is the packed gradient of the sequence's outputs: (dH, dC)
// for the LSTM, with zeros for the one not used (the executor sums the
// two when both are), dH for the GRU (a view).
type rnnOutGradOp rnnOutOp

func (o rnnOutGradOp) parts() int {
	if o.kind == lstmKind {
		return 2
	}
	return 1
}
func (o rnnOutGradOp) String() string                             { return rnnOutOp(o).String() + "Grad" }
func (o rnnOutGradOp) Type(in []*Variable) (nd.DType, int, error) { return in[0].dtype, 1, nil }
func (o rnnOutGradOp) Shape(in [][]int) ([]int, error) {
	return []int{o.parts() * nd.Prod(in[0])}, nil
}
func (o rnnOutGradOp) IsView(in [][]int, out []int) bool { return o.parts() == 1 }
func (o rnnOutGradOp) Run(out *nd.Array, in []*nd.Array) {
	if o.parts() == 1 {
		out.Data = in[0].Data
		return
	}
	zero(out)
	n := in[0].Size()
	switch d := out.Data.(type) {
	case []float32:
		if g, ok := in[0].Data.([]float32); ok {
			copy(d[o.k*n:(o.k+1)*n], g)
			return
		}
	case []float64:
		if g, ok := in[0].Data.([]float64); ok {
			copy(d[o.k*n:(o.k+1)*n], g)
			return
		}
	}
	copyInto(view(out, o.k*n, in[0].Shape), in[0])
}
func (o rnnOutGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// rnnGradPartOp views the gradient of input k in a fused sequence's packed
// gradient. Inputs: the packed gradient and the sequence's inputs.
type rnnGradPartOp struct {
	kind rnnKind
	k    int
}

func (o rnnGradPartOp) String() string { return fmt.Sprintf("RNNGradPart{%d}", o.k) }
func (o rnnGradPartOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[1+o.k].dtype, in[1+o.k].ndim, nil
}
func (o rnnGradPartOp) Shape(in [][]int) ([]int, error)   { return in[1+o.k], nil }
func (o rnnGradPartOp) IsView(in [][]int, out []int) bool { return true }
func (o rnnGradPartOp) Run(out *nd.Array, in []*nd.Array) {
	var off int
	if o.kind == lstmKind {
		r := rnnDims{T: in[1].Shape[0], B: in[1].Shape[1], d: in[2].Shape[1]}
		offs, _ := lstmGradLayout(r)
		off = offs[o.k]
	} else {
		r := rnnDims{T: in[1].Shape[0], B: in[1].Shape[1], d: in[3].Shape[1]}
		offs, _ := gruGradLayout(r)
		off = offs[o.k]
	}
	setView(out, in[0].Data, off, off+nd.Prod(out.Shape))
}
func (o rnnGradPartOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// FusionEnabled says whether fusions are on (they are unless the CPU
// settings say NoFuse, for comparisons: core/exec/cpu/kernels.Settings):
// the executor's planning-time fusions and the bricks' fused recurrent
// sequences.
func FusionEnabled() bool { return !kernels.Current().NoFuse }

// setView points out at data[lo:hi], unless it already does: the executor
// reuses its arrays from call to call, so after the first call a view op
// allocates nothing (a new slice in an interface would).
func setView(out *nd.Array, data any, lo, hi int) {
	switch d := data.(type) {
	case []float32:
		if o, ok := out.Data.([]float32); ok && len(o) == hi-lo && hi > lo && &o[0] == &d[lo] {
			return
		}
	case []float64:
		if o, ok := out.Data.([]float64); ok && len(o) == hi-lo && hi > lo && &o[0] == &d[lo] {
			return
		}
	case []int64:
		if o, ok := out.Data.([]int64); ok && len(o) == hi-lo && hi > lo && &o[0] == &d[lo] {
			return
		}
	case []int32:
		if o, ok := out.Data.([]int32); ok && len(o) == hi-lo && hi > lo && &o[0] == &d[lo] {
			return
		}
	}
	out.Data = nd.SliceData(data, lo, hi)
}
