package core

import (
	"fmt"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// The fused elementwise ops: ReluGrad, which the ReLU's gradient builds
// (elemwise.go), and BiasRelu and ScaledSub, which a backend's planner
// puts in place of the ops they fuse (the CPU executor's, core/exec/cpu's
// fusion.go: cpuGraph hands them over; core/exec/cuda has kernels for
// them). Each computes bit for bit what the ops it replaces computed (same
// float operations in the same order, every intermediate rounded to the
// dtype), so fusion never changes a result. Their kernels split large
// tensors across the workers with a fixed partition
// (core/exec/cpu/kernels).

// biasReluOp is relu(x + b) for x of shape (..., n) and b of shape (n,),
// (1, n) or x's.
type biasReluOp struct{}

func (biasReluOp) String() string { return "BiasRelu" }
func (biasReluOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (biasReluOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (biasReluOp) Run(out *nd.Array, in []*nd.Array) {
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
		panic(Unsupported(biasReluOp{}, out.DType()))
	}
}
func (biasReluOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := apply(ReluGradOp{}, out, gz)
	return []*Variable{g, sumTo(g, in[1])}
}

// ReluGradOp is the ReLU's backward: gz where the ReLU's output y is
// positive, else 0 (Theano's switch(x > 0, gz, 0): y > 0 exactly when
// x > 0, NaN included), without branches. Inputs: the ReLU's output y and
// gz. Its CPU kernel is the CPU backend's (core/exec/cpu).
type ReluGradOp struct{}

func (ReluGradOp) String() string { return "ReluGrad" }
func (ReluGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[1].dtype, in[1].ndim, nil
}
func (ReluGradOp) Shape(in [][]int) ([]int, error) {
	if !nd.SameShape(in[0], in[1]) {
		return nil, fmt.Errorf("relu grad: output %s and gradient %s differ", nd.ShapeString(in[0]), nd.ShapeString(in[1]))
	}
	return in[0], nil
}
func (ReluGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, apply(ReluGradOp{}, in[0], gz)}
}

// scaledSubOp is p − s·g for a 0-d s (p, g the same shape): Theano's
// sub(p, mul(s, g)) with the product rounded to the dtype first.
type scaledSubOp struct{}

func (scaledSubOp) String() string { return "ScaledSub" }
func (scaledSubOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (scaledSubOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (scaledSubOp) Run(out *nd.Array, in []*nd.Array) {
	switch o := out.Data.(type) {
	case []float32:
		kernels.ScaledSub(o, in[0].Data.([]float32), in[1].F32()[0], in[2].Data.([]float32), out.Size())
	case []float64:
		kernels.ScaledSub(o, in[0].Data.([]float64), in[1].F64()[0], in[2].Data.([]float64), out.Size())
	default:
		panic(Unsupported(scaledSubOp{}, out.DType()))
	}
}
func (scaledSubOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, 3)
}
