package core

import (
	"fmt"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// reluGradOp is the ReLU's backward: gz where the ReLU's output y is
// positive, else 0 (Theano's switch(x > 0, gz, 0): y > 0 exactly when
// x > 0, NaN included), without branches.
type reluGradOp struct{}

func (reluGradOp) String() string { return "ReluGrad" }
func (reluGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[1].dtype, in[1].ndim, nil
}
func (reluGradOp) Shape(in [][]int) ([]int, error) {
	if !nd.SameShape(in[0], in[1]) {
		return nil, fmt.Errorf("relu grad: output %s and gradient %s differ", nd.ShapeString(in[0]), nd.ShapeString(in[1]))
	}
	return in[0], nil
}
func (reluGradOp) Run(out *nd.Array, in []*nd.Array) {
	switch o := out.Data.(type) {
	case []float32:
		kernels.ReluGrad(o, in[0].Data.([]float32), in[1].Data.([]float32), out.Size())
	case []float64:
		kernels.ReluGrad(o, in[0].Data.([]float64), in[1].Data.([]float64), out.Size())
	}
}
func (reluGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, apply(reluGradOp{}, in[0], gz)}
}
