package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// ShapeOfOp is Theano's Shape: the int64 vector of its input's shape.
type ShapeOfOp struct{}

func (ShapeOfOp) String() string { return "Shape" }
func (ShapeOfOp) Type(in []*Variable) (nd.DType, int, error) {
	return nd.Int64, 1, nil
}
func (ShapeOfOp) Shape(in [][]int) ([]int, error) { return []int{len(in[0])}, nil }

// Grad: a shape has no gradient with respect to the values.
func (ShapeOfOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

// ShapeIOp is Theano's Shape_i: the int64 scalar x.shape[i].
type ShapeIOp struct{ i int }

func (o ShapeIOp) String() string { return fmt.Sprintf("Shape_i{%d}", o.i) }
func (o ShapeIOp) Type(in []*Variable) (nd.DType, int, error) {
	if o.i < 0 || o.i >= in[0].ndim {
		return 0, 0, fmt.Errorf("shape index %d out of range for a %d-d variable", o.i, in[0].ndim)
	}
	return nd.Int64, 0, nil
}
func (ShapeIOp) Shape(in [][]int) ([]int, error) { return []int{}, nil }

// Axis is the axis whose length the op gives.
func (o ShapeIOp) Axis() int { return o.i }

func (ShapeIOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

// ShapeOf is Theano's x.shape: an int64 vector holding x's shape when the
// graph runs.
func ShapeOf(x *Variable) *Variable { return apply(ShapeOfOp{}, x) }

// ShapeI is Theano's x.shape[i] (Shape_i): an int64 scalar; a negative i
// counts from the end.
func ShapeI(x *Variable, i int) (*Variable, error) {
	if i < 0 {
		i += x.ndim
	}
	return tryApply(ShapeIOp{i}, x)
}
