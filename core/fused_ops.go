package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// The fused elementwise ops: ReluGrad, which the ReLU's gradient builds
// (elemwise.go), and BiasRelu and ScaledSub, which a backend's planner
// puts in place of the ops they fuse (the CPU executor's, core/exec/cpu's
// fusion.go: Function.Lower hands them over; core/exec/cuda has kernels
// for them). Each computes bit for bit what the ops it replaces computed
// (same float operations in the same order, every intermediate rounded to
// the dtype), so fusion never changes a result. Their CPU kernels are the
// CPU backend's (core/exec/cpu/kernel.go), which split large tensors
// across the workers with a fixed partition (core/exec/cpu/kernels).

// BiasReluOp is relu(x + b) for x of shape (..., n) and b of shape (n,),
// (1, n) or x's. Inputs x, b.
type BiasReluOp struct{}

func (BiasReluOp) String() string { return "BiasRelu" }
func (BiasReluOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (BiasReluOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (BiasReluOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
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

// ScaledSubOp is p − s·g for a 0-d s (p, g the same shape): Theano's
// sub(p, mul(s, g)) with the product rounded to the dtype first. Inputs
// p, s, g.
type ScaledSubOp struct{}

func (ScaledSubOp) String() string { return "ScaledSub" }
func (ScaledSubOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (ScaledSubOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (ScaledSubOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, 3)
}
