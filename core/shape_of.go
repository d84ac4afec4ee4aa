package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// shapeOfOp is Theano's Shape: the int64 vector of its input's shape.
type shapeOfOp struct{}

func (shapeOfOp) String() string { return "Shape" }
func (shapeOfOp) Type(in []*Variable) (nd.DType, int, error) {
	return nd.Int64, 1, nil
}
func (shapeOfOp) Shape(in [][]int) ([]int, error) { return []int{len(in[0])}, nil }
func (shapeOfOp) Run(out *nd.Array, in []*nd.Array) {
	o := out.I64()
	for i, d := range in[0].Shape {
		o[i] = int64(d)
	}
}

// Grad: a shape has no gradient with respect to the values.
func (shapeOfOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

// shapeIOp is Theano's Shape_i: the int64 scalar x.shape[i].
type shapeIOp struct{ i int }

func (o shapeIOp) String() string { return fmt.Sprintf("Shape_i{%d}", o.i) }
func (o shapeIOp) Type(in []*Variable) (nd.DType, int, error) {
	if o.i < 0 || o.i >= in[0].ndim {
		return 0, 0, fmt.Errorf("shape index %d out of range for a %d-d variable", o.i, in[0].ndim)
	}
	return nd.Int64, 0, nil
}
func (shapeIOp) Shape(in [][]int) ([]int, error) { return []int{}, nil }
func (o shapeIOp) Run(out *nd.Array, in []*nd.Array) {
	out.I64()[0] = int64(in[0].Shape[o.i])
}
func (shapeIOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

// ShapeOf is Theano's x.shape: an int64 vector holding x's shape when the
// graph runs.
func ShapeOf(x *Variable) *Variable { return apply(shapeOfOp{}, x) }

// ShapeI is Theano's x.shape[i] (Shape_i): an int64 scalar; a negative i
// counts from the end.
func ShapeI(x *Variable, i int) (*Variable, error) {
	if i < 0 {
		i += x.ndim
	}
	return tryApply(shapeIOp{i}, x)
}
