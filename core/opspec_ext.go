package core

import "github.com/blocks-go/blocks/nd"

// Ext holds the parameters of the op kinds beyond opspec.go's: the
// convolutions, poolings, fused update kernels, fused recurrent
// sequences, lookups and views at an offset. Kinds (in OpSpec.Kind):
//
//   - "conv2d" (inputs images, filters[, biases]), "conv2d_grad_input"
//     (gz, filters[, a variable shaped like the images]),
//     "conv2d_grad_weights" (images, gz, a variable shaped like the
//     filters): Conv; "map_sum" (the tied biases' gradient: a 4-d
//     (n, f, h, w) summed to (f,));
//   - "pool2d" (x) and "pool2d_grad" (x, the pooled output, gz for max
//     pooling; x, gz otherwise): Pool;
//   - "fused" (a FusedKernel: Func its name, Parts, FullInputs, Consts;
//     FullInputs is -1 for a kernel that does not describe itself);
//   - "view_at": the output is the first input's data from element
//     Offset(input shapes) on (a fused kernel's part, a fused sequence's
//     output or gradient part); "rows" is a "view";
//   - "place": zeros shaped like the output with the first input copied
//     at element Offset (the LSTM's (dH, dC) packing);
//   - "dot_nd" (x·W over x's last axis), "take" (W[indices]) and
//     "take_grad" (inputs W, indices, gz: gz's rows summed into zeros
//     shaped like W), "repeat" (x stacked along a new first axis),
//     "concat" and "concat_grad" (Axis; Part the input), "slice_last" and
//     "slice_last_grad" (Start, Stop);
//   - "shape_value": an op whose result depends on its inputs' shapes
//     only (Count, Shape, Shape_i): its Run reads no data;
//   - "lstm_seq", "lstm_seq_grad", "gru_seq", "gru_seq_grad": the fused
//     recurrent sequences (Reverse, Mask), with the packed layouts of
//     rnn.go (RNNLayout);
//   - "maxout" and "maxout_grad" (inputs x, the output, gz): Pieces;
//     "arg" (an int64 argmax or argmin: ArgMax, Axis, Flat);
//     "subtensor" and "subtensor_grad" (inputs x, gz): Ranges;
//   - "scan", "scan_grad" (a generic Scan and its gradient: the step
//     function runs per time step; their outputs' and gradients' parts are
//     "view_at" and "place"), "random" (draws from the seeded numpy-exact
//     generator), and the CPU planner's own fusions "bias_relu",
//     "scaled_sub".
type Ext struct {
	Conv       ConvSpec
	Pool       PoolOptions
	Parts      int
	FullInputs int
	Consts     []float64
	Offset     func(in [][]int) int
	Axis       int
	Part       int
	Start      int
	Stop       int
	Reverse    bool
	Mask       bool
	// Pieces is maxout's number of pieces; ArgMax, Flat and Axis describe
	// an argmax or argmin; Ranges gives a subtensor's (start, step, count)
	// per axis of the input's shape.
	Pieces int
	ArgMax bool
	Flat   bool
	Ranges func(shape []int) ([][3]int, error)
}

// ConvSpec is a convolution's geometry.
type ConvSpec struct {
	Step [2]int
	Flip bool
	// Border gives the padding (Border.Pads) for the filters' size.
	Border Border
	// ImageSize is conv2d_grad_input's image size when it has no third
	// input.
	ImageSize [2]int
}

// DescribedKernel is a FusedKernel that backends with kernels of their
// own can run: FullInputs is how many of its inputs are arrays shaped like
// the first (the rest are 0-d scalars), Consts the constants its loop
// uses besides its inputs.
type DescribedKernel interface {
	FusedKernel
	FullInputs() int
	Consts() []float64
}

// SpecKinds lists every kind Spec returns.
var SpecKinds = []string{
	"elemwise", "cast", "dot", "softmax", "softmax_grad", "pick", "pick_grad", "reduce", "sum_to",
	"broadcast_to", "relu_grad", "dimshuffle", "view",
	"conv2d", "conv2d_grad_input", "conv2d_grad_weights", "map_sum", "pool2d", "pool2d_grad",
	"fused", "view_at", "place", "rows", "dot_nd", "take", "take_grad", "repeat", "concat", "concat_grad",
	"slice_last", "slice_last_grad", "shape_value", "lstm_seq", "lstm_seq_grad", "gru_seq", "gru_seq_grad",
	"scan", "scan_grad", "random", "subtensor",
	"subtensor_grad", "maxout", "maxout_grad", "arg", "bias_relu", "scaled_sub",
}

// RNNLayout is the element offsets of a fused sequence's packed forward
// output for T steps, B rows and d units: LSTM h ([h0, H]), c ([c0, C]),
// the activated gates, tanh of the cells and the total; GRU h, the gates
// (first return), the candidates n (second), h(t-1)·r (third), total.
func RNNLayout(gru bool, T, B, d int) (a, b, c, e, total int) {
	r := rnnDims{T: T, B: B, d: d}
	if gru {
		return gruLayout(r)
	}
	return lstmLayout(r)
}

// LSTMLayout and GRULayout are RNNLayout without its interface: an
// LSTM's h, c, gates, tanh(c) offsets and total; a GRU's h, gates,
// candidates, h(t-1)·r offsets and total.
func LSTMLayout(T, B, d int) (h, c, g, tc, total int) { return lstmLayout(rnnDims{T: T, B: B, d: d}) }

// GRULayout is the GRU's RNNLayout.
func GRULayout(T, B, d int) (h, g, nn, hr, total int) { return gruLayout(rnnDims{T: T, B: B, d: d}) }

// LSTMGradLayout and GRUGradLayout are RNNGradLayout without allocating:
// the offsets of the gradients of an LSTM's 7 inputs (a GRU's 5) in its
// packed gradient, and the total, which ends with 3·B·d elements of
// scratch for the backward scan.
func LSTMGradLayout(T, B, d int) ([7]int, int) { return lstmGradLayout(rnnDims{T: T, B: B, d: d}) }

// GRUGradLayout is the GRU's LSTMGradLayout.
func GRUGradLayout(T, B, d int) ([5]int, int) { return gruGradLayout(rnnDims{T: T, B: B, d: d}) }

// RNNGradLayout is the offsets of the gradients in a fused sequence's
// packed gradient (LSTM: dX, dh0, dc0, dW, dwci, dwcf, dwco; GRU: dX,
// dXG, dh0, dU, dWg) and its total.
func RNNGradLayout(gru bool, T, B, d int) ([]int, int) {
	r := rnnDims{T: T, B: B, d: d}
	if gru {
		o, t := gruGradLayout(r)
		return o[:], t
	}
	o, t := lstmGradLayout(r)
	return o[:], t
}

func convSpec(p convParams) ConvSpec { return ConvSpec{Step: p.step, Flip: p.flip, Border: p.border} }

func specExt(op Op) OpSpec {
	var e Ext
	kind := ""
	switch o := op.(type) {
	case Conv2DOp:
		kind, e.Conv = "conv2d", convSpec(o.convParams)
	case Conv2DGradInputOp:
		kind, e.Conv = "conv2d_grad_input", convSpec(o.convParams)
		e.Conv.ImageSize = o.size
	case Conv2DGradWeightsOp:
		kind, e.Conv = "conv2d_grad_weights", convSpec(o.convParams)
	case MapSumOp:
		kind = "map_sum"
	case Pool2DOp:
		kind, e.Pool = "pool2d", o.o
	case PoolGradOp:
		kind, e.Pool = "pool2d_grad", o.o
	case FusedOp:
		kind, e.Parts, e.FullInputs = "fused", o.k.Parts(), -1
		if d, ok := o.k.(DescribedKernel); ok {
			e.FullInputs, e.Consts = d.FullInputs(), d.Consts()
		}
		return OpSpec{Kind: kind, Func: o.k.Name(), Ext: e}
	case FusedPartOp:
		part := o.part
		kind, e.Offset = "view_at", func(in [][]int) int { return part * nd.Prod(in[0][1:]) }
	case RNNOutOp:
		k := o.k
		kind, e.Offset = "view_at", func(in [][]int) int {
			T, n := in[1][0], nd.Prod(in[2])
			return (k*(T+1) + 1) * n
		}
	case RNNOutGradOp:
		if o.parts() == 1 {
			kind = "view"
			break
		}
		k := o.k
		kind, e.Offset = "place", func(in [][]int) int { return k * nd.Prod(in[0]) }
	case RNNGradPartOp:
		rk, k := o.kind, o.k
		kind, e.Offset = "view_at", func(in [][]int) int {
			d := in[2][1] // LSTM: h0 (B, d)
			if rk == gruKind {
				d = in[3][1]
			}
			offs, _ := RNNGradLayout(rk == gruKind, in[1][0], in[1][1], d)
			return offs[k]
		}
	case RowsOp:
		kind = "rows"
	case DotNDOp:
		kind = "dot_nd"
	case TakeOp:
		kind = "take"
	case TakeGradOp:
		kind = "take_grad"
	case RepeatOp:
		kind, e.Axis = "repeat", o.axis
	case ConcatOp:
		kind, e.Axis = "concat", o.axis
	case ConcatGradOp:
		kind, e.Axis, e.Part = "concat_grad", o.axis, o.k
	case SliceLastOp:
		kind, e.Start, e.Stop = "slice_last", o.start, o.stop
	case SliceLastGradOp:
		kind, e.Start, e.Stop = "slice_last_grad", o.s.start, o.s.stop
	case CountOp, ShapeOfOp, ShapeIOp, *AllocShapedOp:
		kind = "shape_value"
	case *LSTMSeqOp:
		kind, e.Reverse, e.Mask = "lstm_seq", o.reverse, o.mask
	case *LSTMSeqGradOp:
		kind, e.Reverse, e.Mask = "lstm_seq_grad", o.f.reverse, o.f.mask
	case *GRUSeqOp:
		kind, e.Reverse, e.Mask = "gru_seq", o.reverse, o.mask
	case *GRUSeqGradOp:
		kind, e.Reverse, e.Mask = "gru_seq_grad", o.f.reverse, o.f.mask
	case *ScanOp:
		kind = "scan"
	case *ScanOutputOp:
		info, k := o.info, o.k
		kind, e.Offset = "view_at", func(in [][]int) int {
			l, _ := info.layout(in[1:])
			return l.Offsets[k]
		}
	case *ScanOutputGradOp:
		info, k := o.info, o.k
		kind, e.Offset = "place", func(in [][]int) int {
			l, _ := info.layout(in[1:])
			return l.Offsets[k]
		}
	case *ScanGradOp:
		kind = "scan_grad"
	case *ScanGradPartOp:
		k := o.k
		kind, e.Offset = "view_at", func(in [][]int) int {
			off, _ := gradLayout(in[1:])
			return off[k]
		}
	case *DrawOp:
		kind = "random"
	case SubtensorOp:
		kind, e.Ranges = "subtensor", o.rangesSpec
	case SubtensorGradOp:
		kind, e.Ranges = "subtensor_grad", o.sub.rangesSpec
	case MaxoutOp:
		kind, e.Pieces = "maxout", o.k
	case MaxoutGradOp:
		kind, e.Pieces = "maxout_grad", o.k
	case ArgOp:
		kind, e.ArgMax, e.Axis, e.Flat = "arg", o.max, o.axis, o.flat
	case BiasReluOp:
		kind = "bias_relu"
	case ScaledSubOp:
		kind = "scaled_sub"
	case RollOp, RepeatNOp, RepeatNGradOp, CumSumOp, *ArangeOp, *SubtensorShapedOp, *SubtensorShapedGradOp:
		// Theano's roll, repeat, cumsum, arange and slices with symbolic
		// bounds (tensor_extra.go, shape_expr_subtensor.go): no kernels of
		// their own on other backends; they run their CPU Run there.
	}
	return OpSpec{Kind: kind, Ext: e}
}

// rangesSpec is ranges as (start, step, count) triples.
func (o SubtensorOp) rangesSpec(shape []int) ([][3]int, error) {
	rs, err := o.ranges(shape)
	if err != nil {
		return nil, err
	}
	out := make([][3]int, len(rs))
	for i, r := range rs {
		out[i] = [3]int{r.start, r.step, r.count}
	}
	return out, nil
}
