package cpu

import (
	"fmt"
	"reflect"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// A Kernel computes op's output out, allocated with the planned shape, from
// in. It panics with a core.DTypeError (core.Unsupported) for a dtype it
// has no loop for.
type Kernel func(op core.Op, out *nd.Array, in []*nd.Array)

// opKernels are the backend's own kernels, by op type: adding an op to
// core means its definition there and its kernel here (or in
// opKernelMakers). TestEveryOpHasAKernel checks that every op of core has
// exactly one; an op defined outside core runs its own Run (core.Runner).
var opKernels = map[reflect.Type]Kernel{
	reflect.TypeFor[core.ReluGradOp]():             reluGrad,
	reflect.TypeFor[core.BiasReluOp]():             biasRelu,
	reflect.TypeFor[core.ScaledSubOp]():            scaledSub,
	reflect.TypeFor[core.MapSumOp]():               mapSum,
	reflect.TypeFor[core.DotOp]():                  dot,
	reflect.TypeFor[core.DotNDOp]():                dotND,
	reflect.TypeFor[core.ElemOp]():                 elem,
	reflect.TypeFor[core.CastOp]():                 cast,
	reflect.TypeFor[core.SumToOp]():                sumTo,
	reflect.TypeFor[core.BroadcastLikeOp]():        broadcastLike,
	reflect.TypeFor[core.CountOp]():                count,
	reflect.TypeFor[core.ArgOp]():                  arg,
	reflect.TypeFor[core.ConcatOp]():               concat,
	reflect.TypeFor[core.ConcatGradOp]():           concatGrad,
	reflect.TypeFor[core.TakeOp]():                 take,
	reflect.TypeFor[core.TakeGradOp]():             takeGrad,
	reflect.TypeFor[core.RepeatOp]():               repeat,
	reflect.TypeFor[core.SliceLastOp]():            sliceLast,
	reflect.TypeFor[core.SliceLastGradOp]():        sliceLastGrad,
	reflect.TypeFor[core.RNNOutOp]():               rnnOut,
	reflect.TypeFor[core.RNNOutGradOp]():           rnnOutGrad,
	reflect.TypeFor[core.RNNGradPartOp]():          rnnGradPart,
	reflect.TypeFor[core.SoftmaxOp]():              softmax,
	reflect.TypeFor[core.SoftmaxGradOp]():          softmaxGrad,
	reflect.TypeFor[core.PickOp]():                 pick,
	reflect.TypeFor[core.PickGradOp]():             pickGrad,
	reflect.TypeFor[core.MaxoutOp]():               maxout,
	reflect.TypeFor[core.MaxoutGradOp]():           maxoutGrad,
	reflect.TypeFor[core.RollOp]():                 roll,
	reflect.TypeFor[core.RepeatNOp]():              repeatN,
	reflect.TypeFor[core.RepeatNGradOp]():          repeatNGrad,
	reflect.TypeFor[core.CumSumOp]():               cumSum,
	reflect.TypeFor[*core.ArangeOp]():              arange,
	reflect.TypeFor[core.DimshuffleOp]():           dimshuffle,
	reflect.TypeFor[core.SubtensorOp]():            subtensor,
	reflect.TypeFor[core.SubtensorGradOp]():        subtensorGrad,
	reflect.TypeFor[*core.SubtensorShapedOp]():     subtensorShaped,
	reflect.TypeFor[*core.SubtensorShapedGradOp](): subtensorShapedGrad,
	reflect.TypeFor[core.ShapeOfOp]():              shapeOf,
	reflect.TypeFor[core.ShapeIOp]():               shapeI,
	reflect.TypeFor[*core.AllocShapedOp]():         allocShaped,
	reflect.TypeFor[*core.DrawOp]():                draw,
	reflect.TypeFor[core.FusedOp]():                fused,
	reflect.TypeFor[core.FusedPartOp]():            fusedPart,
	reflect.TypeFor[*core.ScanOutputOp]():          scanOutput,
	reflect.TypeFor[*core.ScanOutputGradOp]():      scanOutputGrad,
	reflect.TypeFor[*core.ScanGradPartOp]():        scanGradPart,
	// views: the output is the first input's data, reshaped
	reflect.TypeFor[core.CopyOp]():               view,
	reflect.TypeFor[core.ExpandOp]():             view,
	reflect.TypeFor[core.RowsOp]():               view,
	reflect.TypeFor[core.ReshapeOp]():            view,
	reflect.TypeFor[core.ReshapeLikeOp]():        view,
	reflect.TypeFor[core.FlattenOp]():            view,
	reflect.TypeFor[core.CheckedReshapeLikeOp](): view,
	reflect.TypeFor[core.MergeLeadingOp]():       view,
	reflect.TypeFor[core.SplitLeadingOp]():       view,
}

// A kernelMaker makes the kernel of one node of a plan, bound to its op:
// a kernel with scratch of its own (a convolution's workspace, a
// recurrent sequence's packed weights) is made per node, and the backend,
// not the graph, owns the scratch.
type kernelMaker func(op core.Op) kernel

// opKernelMakers are the backend's kernels with scratch, by op type (each
// op type has an entry in opKernels or here, not both).
var opKernelMakers = map[reflect.Type]kernelMaker{
	reflect.TypeFor[core.ReduceOp]():            newReduceKernel,
	reflect.TypeFor[core.Conv2DOp]():            newConvKernel,
	reflect.TypeFor[core.Conv2DGradInputOp]():   newConvKernel,
	reflect.TypeFor[core.Conv2DGradWeightsOp](): newConvKernel,
	reflect.TypeFor[core.Pool2DOp]():            newPoolKernel,
	reflect.TypeFor[core.PoolGradOp]():          newPoolKernel,
	reflect.TypeFor[*core.LSTMSeqOp]():          newRNNKernel,
	reflect.TypeFor[*core.LSTMSeqGradOp]():      newRNNKernel,
	reflect.TypeFor[*core.GRUSeqOp]():           newRNNKernel,
	reflect.TypeFor[*core.GRUSeqGradOp]():       newRNNKernel,
	reflect.TypeFor[*core.ScanOp]():             newScanKernel,
	reflect.TypeFor[*core.ScanGradOp]():         newScanKernel,
}

// opKernel is a registered kernel bound to its op, as a plan's step runs it.
type opKernel struct {
	op core.Op
	k  Kernel
}

func (k opKernel) String() string                    { return k.op.String() }
func (k opKernel) Run(out *nd.Array, in []*nd.Array) { k.k(k.op, out, in) }

// kernelOf is op's CPU kernel: the backend's own, else (an op defined
// outside core) the op's Run.
func kernelOf(op core.Op) (kernel, error) {
	if k, ok := opKernels[reflect.TypeOf(op)]; ok {
		return opKernel{op, k}, nil
	}
	if m, ok := opKernelMakers[reflect.TypeOf(op)]; ok {
		return m(op), nil
	}
	if r, ok := op.(kernel); ok {
		return r, nil
	}
	if r, ok := op.(core.ErrRunner); ok {
		return loopKernel{op, r}, nil
	}
	return nil, fmt.Errorf("the CPU backend has no kernel for %s (%T)", op, op)
}

// loopKernel is an op that runs only through RunErr (a loop's), which the
// executor calls instead of Run.
type loopKernel struct {
	op core.Op
	r  core.ErrRunner
}

func (k loopKernel) String() string                             { return k.op.String() }
func (k loopKernel) RunErr(out *nd.Array, in []*nd.Array) error { return k.r.RunErr(out, in) }
func (k loopKernel) Run(out *nd.Array, in []*nd.Array) {
	panic("cpu: " + k.op.String() + " runs through RunErr")
}

// RunOp runs op's CPU kernel on host arrays: another backend's fallback
// for an op it has no kernel of its own for. It panics with a
// core.DTypeError for a dtype the kernel has no loop for.
func RunOp(op core.Op, out *nd.Array, in []*nd.Array) error {
	k, err := kernelOf(op)
	if err != nil {
		return err
	}
	if r, ok := k.(core.ErrRunner); ok {
		return r.RunErr(out, in)
	}
	k.Run(out, in)
	return nil
}

// RunOp runs op's CPU kernel on host arrays (RunOp): core folds constants
// with it (core.HostRunner).
func (Backend) RunOp(op core.Op, out *nd.Array, in []*nd.Array) error { return RunOp(op, out, in) }

// view is the kernel of the ops whose output is their first input's data
// with another shape (reshape, copy, flatten, ...; core.ViewOp).
func view(op core.Op, out *nd.Array, in []*nd.Array) { out.Data = in[0].Data }

// reluGrad is core.ReluGradOp's kernel: out = gz where y > 0, else +0, by
// a bit mask (kernels.ReluGrad). Inputs y, gz.
func reluGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	switch o := out.Data.(type) {
	case []float32:
		kernels.ReluGrad(o, in[0].Data.([]float32), in[1].Data.([]float32), out.Size())
	case []float64:
		kernels.ReluGrad(o, in[0].Data.([]float64), in[1].Data.([]float64), out.Size())
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}

// biasRelu is core.BiasReluOp's kernel: out = relu(x + b), b broadcast
// along the rows of x (kernels.BiasRelu). Inputs x, b.
func biasRelu(op core.Op, out *nd.Array, in []*nd.Array) {
	n := 1
	if len(out.Shape) > 0 {
		n = out.Shape[len(out.Shape)-1]
	}
	if len(in[1].Shape) > 0 && nd.SameShape(in[1].Shape, out.Shape) {
		n = out.Size() // b as large as x: one "row"
	}
	switch o := out.Data.(type) {
	case []float32:
		kernels.BiasRelu(o, in[0].Data.([]float32), in[1].Data.([]float32), out.Size(), n)
	case []float64:
		kernels.BiasRelu(o, in[0].Data.([]float64), in[1].Data.([]float64), out.Size(), n)
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}

// scaledSub is core.ScaledSubOp's kernel: out = p − s·g, the product
// rounded to the dtype first (kernels.ScaledSub). Inputs p, s (0-d), g.
func scaledSub(op core.Op, out *nd.Array, in []*nd.Array) {
	switch o := out.Data.(type) {
	case []float32:
		kernels.ScaledSub(o, in[0].Data.([]float32), in[1].F32()[0], in[2].Data.([]float32), out.Size())
	case []float64:
		kernels.ScaledSub(o, in[0].Data.([]float64), in[1].F64()[0], in[2].Data.([]float64), out.Size())
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}
