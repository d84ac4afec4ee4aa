package core

import (
	"github.com/blocks-go/blocks/nd"
)

// CastOp converts to another dtype (numpy's astype).
type CastOp struct{ to nd.DType }

func (o CastOp) String() string { return "Elemwise{Cast{" + o.to.String() + "}}" }
func (o CastOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.to, in[0].ndim, nil
}
func (o CastOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

func (o CastOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if !in[0].dtype.IsFloat() || !o.to.IsFloat() {
		return []*Variable{nil}
	}
	return []*Variable{Cast(gz, in[0].dtype)}
}

// Cast converts x to dtype dt (x itself when it already has it).
func Cast(x *Variable, dt nd.DType) *Variable {
	if x.dtype == dt {
		return x
	}
	return apply(CastOp{dt}, x)
}

// SumToOp sums its first input down to the shape of its second (undoing a
// broadcast); a view when the shapes agree.
type SumToOp struct{}

func (SumToOp) String() string { return "SumToShape" }
func (SumToOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[1].ndim, nil
}
func (SumToOp) Shape(in [][]int) ([]int, error) { return in[1], nil }
func (SumToOp) IsView(in [][]int, out []int) bool {
	return nd.Prod(in[0]) == nd.Prod(out)
}
func (SumToOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{broadcastLike(gz, in[0]), nil}
}

// sumTo sums g to x's shape when x has fewer dimensions or was broadcast.
func sumTo(g, x *Variable) *Variable {
	if g.dtype != x.dtype {
		g = Cast(g, x.dtype)
	}
	return apply(SumToOp{}, g, x)
}

// BroadcastLikeOp broadcasts its first input to the shape of its second.
type BroadcastLikeOp struct{}

func (BroadcastLikeOp) String() string { return "BroadcastToShape" }
func (BroadcastLikeOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[1].ndim, nil
}
func (BroadcastLikeOp) Shape(in [][]int) ([]int, error) { return in[1], nil }
func (BroadcastLikeOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{sumTo(gz, in[0]), nil}
}

func broadcastLike(g, x *Variable) *Variable { return apply(BroadcastLikeOp{}, g, x) }
