package core

import "github.com/blocks-go/blocks/nd"

// OpSpec describes an op to a backend that runs it with kernels of its
// own (core/exec/cuda): what the op computes, with its parameters. Kind
// is "" for an op without a description; such a backend runs that op's
// CPU kernel (cpu.RunOp) on host copies of its inputs, or refuses it.
type OpSpec struct {
	// Kind is one of: "elemwise" (Func, an elementwise function by
	// name, with numpy broadcasting), "cast" (to DType), "dot" (TransA,
	// TransB), "softmax" and "softmax_grad" (Log for the log-softmax;
	// the gradient's inputs are the softmax's output and the incoming
	// gradient), "pick" (x[i, y[i]]) and "pick_grad" (inputs x, y, g),
	// "reduce" (Func one of sum, mean, max, min, prod; Axes, nil for all;
	// Keepdims), "sum_to" (sum the first input down to the second's
	// shape), "broadcast_to" (the first input broadcast to the second's
	// shape), "relu_grad" (inputs: the ReLU's output, the gradient),
	// "dimshuffle" (Pattern, -1 for a new broadcastable axis), "view"
	// (the output is the first input's data under the output's shape).
	Kind     string
	Func     string
	Log      bool
	TransA   bool
	TransB   bool
	Axes     []int
	Keepdims bool
	DType    nd.DType
	Pattern  []int
	// The kinds of opspec_ext.go and their parameters.
	Ext
}

// Spec describes op for a backend other than the CPU's.
func Spec(op Op) OpSpec {
	switch o := op.(type) {
	case ElemOp:
		return OpSpec{Kind: "elemwise", Func: elemNames[o.kind]}
	case CastOp:
		return OpSpec{Kind: "cast", DType: o.to}
	case DotOp:
		return OpSpec{Kind: "dot", TransA: o.transA, TransB: o.transB}
	case SoftmaxOp:
		return OpSpec{Kind: "softmax", Log: o.log}
	case SoftmaxGradOp:
		return OpSpec{Kind: "softmax_grad", Log: o.log}
	case PickOp:
		return OpSpec{Kind: "pick"}
	case PickGradOp:
		return OpSpec{Kind: "pick_grad"}
	case ReduceOp:
		return OpSpec{Kind: "reduce", Func: [...]string{"sum", "mean", "max", "min", "prod"}[o.kind], Axes: o.axes, Keepdims: o.keepdims, DType: o.dtype}
	case SumToOp:
		return OpSpec{Kind: "sum_to"}
	case BroadcastLikeOp:
		return OpSpec{Kind: "broadcast_to"}
	case ReluGradOp:
		return OpSpec{Kind: "relu_grad"}
	case DimshuffleOp:
		return OpSpec{Kind: "dimshuffle", Pattern: o.pattern}
	case CopyOp, ExpandOp, ReshapeOp, ReshapeLikeOp, FlattenOp, CheckedReshapeLikeOp, MergeLeadingOp, SplitLeadingOp:
		return OpSpec{Kind: "view"}
	}
	return specExt(op)
}
