package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// Fused recurrent sequences: Blocks' LSTM and GatedRecurrent iterated over
// a whole sequence as one op each, instead of a Scan of their step graph.
// The forward op runs one matrix product per step for all the gates
// (two for the GRU, whose candidate needs the reset gate first) and one
// fused elementwise pass (core/exec/cpu/rnn_steps.go); it keeps the gates for the
// gradient in its packed output. The gradient op runs the backward scan
// with one product per step for the previous state's gradient (two for
// the GRU), writes the pre-activations' gradients straight into the
// inputs' gradient, and computes the recurrent weights' gradients after
// the loop as one product over all the steps (Hᵀ·dA, (d × T·B)·(T·B × 4d)),
// as cuDNN and PyTorch do. The ops' outputs pack what the gradient and
// the views read (lstmLayout, ...), and the backward scan's per-row
// scratch; the kernels are the backends' (core/exec/cpu/rnn.go), which
// keep their own scratch (packed weights, a split's partial sums).
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
	op := &LSTMSeqOp{reverse: reverse, mask: mask != nil}
	packed, err := tryApply(op, in...)
	if err != nil {
		return nil, nil, err
	}
	packed.Name = "lstm.packed"
	return apply(RNNOutOp{lstmKind, 0}, packed, x, h0), apply(RNNOutOp{lstmKind, 1}, packed, x, h0), nil
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
	op := &GRUSeqOp{reverse: reverse, mask: mask != nil}
	packed, err := tryApply(op, in...)
	if err != nil {
		return nil, err
	}
	packed.Name = "gru.packed"
	return apply(RNNOutOp{gruKind, 0}, packed, x, h0), nil
}

type rnnKind int

const (
	lstmKind rnnKind = iota
	gruKind
)

// ---- LSTM ----

// LSTMSeqOp is the fused LSTM sequence (LSTMSequence). Inputs x, h0, c0,
// W, the peepholes and the mask (when Mask); output the packed buffer of
// lstmLayout.
type LSTMSeqOp struct{ reverse, mask bool }

var lstmShapes = [][]int{{-1, -2, -16}, {-2, -3}, {-2, -3}, {-3, -16}, {-3}, {-3}, {-3}}

func (o *LSTMSeqOp) String() string {
	if o.reverse {
		return "LSTMSequence{reverse}"
	}
	return "LSTMSequence"
}

func (o *LSTMSeqOp) Type(in []*Variable) (nd.DType, int, error) {
	dt, err := checkRNNTypes("LSTM sequence", in, []int{3, 2, 2, 2, 1, 1, 1}, o.mask)
	return dt, 1, err
}

// lstmLayout: the packed output holds [h0, H] and [c0, C] ((T+1)·B·d
// each), the activated gates (T·B·4d) and tanh of the unmasked cells
// (T·B·d).
func lstmLayout(r rnnDims) (h, c, g, tc, total int) {
	n := r.n()
	h, c = 0, (r.T+1)*n
	g = 2 * (r.T + 1) * n
	tc = g + 4*r.T*n
	return h, c, g, tc, tc + r.T*n
}

func (o *LSTMSeqOp) Shape(in [][]int) ([]int, error) {
	r, err := checkRNNShapes("LSTM sequence", in, lstmShapes, o.mask, 1)
	if err != nil {
		return nil, err
	}
	_, _, _, _, total := lstmLayout(r)
	return []int{total}, nil
}

// Reverse says whether the sequence runs from its last step; Mask
// whether it has a mask input (the last).
func (o *LSTMSeqOp) Reverse() bool { return o.reverse }

// Mask says whether the sequence has a mask input (the last).
func (o *LSTMSeqOp) Mask() bool { return o.mask }

func (o *LSTMSeqOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := apply(&LSTMSeqGradOp{o}, append(append([]*Variable(nil), in...), out, gz)...)
	grads := make([]*Variable, len(in))
	for k := range 7 {
		grads[k] = apply(RNNGradPartOp{lstmKind, k}, append([]*Variable{g}, in...)...)
	}
	return grads
}

// LSTMSeqGradOp is back-propagation through time. Inputs: the sequence's
// inputs, its packed output and the packed gradient of (H, C). Output:
// [dX, dh0, dc0, dW, dwci, dwcf, dwco] then scratch (dh, dc, keep: B·d
// each; the peepholes' gradients of row blocks 1.. of a split sequence:
// 3·d each).
type LSTMSeqGradOp struct{ f *LSTMSeqOp }

func (o *LSTMSeqGradOp) String() string { return "LSTMSequenceGrad" }
func (o *LSTMSeqGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 1, nil
}

// lstmGradLayout: the packed gradient holds dX, dh0, dc0, dW, dwci,
// dwcf, dwco, then a backend's scratch for the backward scan: dh, dc and
// keep (B·d each).
func lstmGradLayout(r rnnDims) (offs [7]int, total int) {
	n, d := r.n(), r.d
	sizes := [7]int{r.T * 4 * n, n, n, 4 * d * d, d, d, d}
	for k, s := range sizes {
		offs[k] = total
		total += s
	}
	return offs, total + 3*n
}

func (o *LSTMSeqGradOp) Shape(in [][]int) ([]int, error) {
	k := len(in) - 2
	r, err := checkRNNShapes("LSTM sequence gradient", in[:k], lstmShapes, o.f.mask, 1)
	if err != nil {
		return nil, err
	}
	_, total := lstmGradLayout(r)
	return []int{total}, nil
}

// Forward is the sequence whose gradient the op computes.
func (o *LSTMSeqGradOp) Forward() *LSTMSeqOp { return o.f }

func (o *LSTMSeqGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// ---- GRU ----

// GRUSeqOp is the fused GRU sequence (GRUSequence). Inputs x, xg, h0, U,
// W_g and the mask (when Mask); output the packed buffer of gruLayout.
type GRUSeqOp struct{ reverse, mask bool }

var gruShapes = [][]int{{-1, -2, -3}, {-1, -2, -8}, {-2, -3}, {-3, -3}, {-3, -8}}

func (o *GRUSeqOp) String() string {
	if o.reverse {
		return "GRUSequence{reverse}"
	}
	return "GRUSequence"
}

func (o *GRUSeqOp) Type(in []*Variable) (nd.DType, int, error) {
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
	return 0, g, nn, hr, hr + r.T*n
}

func (o *GRUSeqOp) Shape(in [][]int) ([]int, error) {
	r, err := checkRNNShapes("GRU sequence", in, gruShapes, o.mask, 2)
	if err != nil {
		return nil, err
	}
	_, _, _, _, total := gruLayout(r)
	return []int{total}, nil
}

// Reverse says whether the sequence runs from its last step.
func (o *GRUSeqOp) Reverse() bool { return o.reverse }

// Mask says whether the sequence has a mask input (the last).
func (o *GRUSeqOp) Mask() bool { return o.mask }

func (o *GRUSeqOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := apply(&GRUSeqGradOp{o}, append(append([]*Variable(nil), in...), out, gz)...)
	grads := make([]*Variable, len(in))
	for k := range 5 {
		grads[k] = apply(RNNGradPartOp{gruKind, k}, append([]*Variable{g}, in...)...)
	}
	return grads
}

// gruSeqGradOp: output [dX, dXG, dh0, dU, dWg] then scratch (dh, dhr,
// tmp: B·d each).
type GRUSeqGradOp struct{ f *GRUSeqOp }

func (o *GRUSeqGradOp) String() string { return "GRUSequenceGrad" }
func (o *GRUSeqGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 1, nil
}

// gruGradLayout: the packed gradient holds dX, dXG, dh0, dU, dWg, then a
// backend's scratch for the backward scan: dh, dhr and tmp (B·d each).
func gruGradLayout(r rnnDims) (offs [5]int, total int) {
	n, d := r.n(), r.d
	sizes := [5]int{r.T * n, r.T * 2 * n, n, d * d, 2 * d * d}
	for k, s := range sizes {
		offs[k] = total
		total += s
	}
	return offs, total + 3*n
}

func (o *GRUSeqGradOp) Shape(in [][]int) ([]int, error) {
	k := len(in) - 2
	r, err := checkRNNShapes("GRU sequence gradient", in[:k], gruShapes, o.f.mask, 2)
	if err != nil {
		return nil, err
	}
	_, total := gruGradLayout(r)
	return []int{total}, nil
}

// Forward is the sequence whose gradient the op computes.
func (o *GRUSeqGradOp) Forward() *GRUSeqOp { return o.f }

func (o *GRUSeqGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// ---- outputs and gradient parts ----

// RNNOutOp views output k of a fused sequence's packed buffer (LSTM: 0
// the states, 1 the cells; GRU: 0 the states). Inputs: the packed buffer,
// the input sequence and the initial state (for the sizes).
type RNNOutOp struct {
	kind rnnKind
	k    int
}

func (o RNNOutOp) String() string {
	return [][]string{{"LSTMStates", "LSTMCells"}, {"GRUStates"}}[o.kind][o.k]
}
func (o RNNOutOp) Type(in []*Variable) (nd.DType, int, error) { return in[0].dtype, 3, nil }
func (o RNNOutOp) Shape(in [][]int) ([]int, error) {
	return []int{in[1][0], in[1][1], in[2][1]}, nil
}
func (o RNNOutOp) IsView(in [][]int, out []int) bool { return true }

// Part is the output the op views: 0 the states, 1 the LSTM's cells.
func (o RNNOutOp) Part() int { return o.k }

func (o RNNOutOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(RNNOutGradOp(o), gz, in[1], in[2]), nil, nil}
}

// RNNOutGradOp is the packed gradient of the sequence's outputs: (dH, dC)
// for the LSTM, with zeros for the one not used (the executor sums the
// two when both are), dH for the GRU (a view).
type RNNOutGradOp RNNOutOp

func (o RNNOutGradOp) parts() int {
	if o.kind == lstmKind {
		return 2
	}
	return 1
}
func (o RNNOutGradOp) String() string                             { return RNNOutOp(o).String() + "Grad" }
func (o RNNOutGradOp) Type(in []*Variable) (nd.DType, int, error) { return in[0].dtype, 1, nil }
func (o RNNOutGradOp) Shape(in [][]int) ([]int, error) {
	return []int{o.parts() * nd.Prod(in[0])}, nil
}
func (o RNNOutGradOp) IsView(in [][]int, out []int) bool { return o.parts() == 1 }

// Parts is the number of outputs in the packed gradient (2 for the
// LSTM, 1 for the GRU); Part is the one this gradient is of.
func (o RNNOutGradOp) Parts() int { return o.parts() }

// Part is the output whose gradient the op packs.
func (o RNNOutGradOp) Part() int { return o.k }

func (o RNNOutGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// RNNGradPartOp views the gradient of input k in a fused sequence's packed
// gradient. Inputs: the packed gradient and the sequence's inputs.
type RNNGradPartOp struct {
	kind rnnKind
	k    int
}

func (o RNNGradPartOp) String() string { return fmt.Sprintf("RNNGradPart{%d}", o.k) }
func (o RNNGradPartOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[1+o.k].dtype, in[1+o.k].ndim, nil
}
func (o RNNGradPartOp) Shape(in [][]int) ([]int, error)   { return in[1+o.k], nil }
func (o RNNGradPartOp) IsView(in [][]int, out []int) bool { return true }

// Part is the input whose gradient the op views, and GRU whether the
// sequence is a GRU (else an LSTM).
func (o RNNGradPartOp) Part() (k int, gru bool) { return o.k, o.kind == gruKind }

func (o RNNGradPartOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}
