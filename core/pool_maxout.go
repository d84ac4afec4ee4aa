package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// MaxoutOp pools the last axis in groups of k consecutive entries (Blocks'
// Maxout: reshape the last axis d to (d/k, k) and take the maximum over
// the pieces).
type MaxoutOp struct{ k int }

func (o MaxoutOp) String() string { return fmt.Sprintf("Maxout{%d}", o.k) }
func (o MaxoutOp) Type(in []*Variable) (nd.DType, int, error) {
	if in[0].ndim < 1 || !in[0].dtype.IsFloat() {
		return 0, 0, fmt.Errorf("maxout needs a float variable with at least one axis, got %s", in[0].TypeString())
	}
	return in[0].dtype, in[0].ndim, nil
}
func (o MaxoutOp) Shape(in [][]int) ([]int, error) {
	s := append([]int(nil), in[0]...)
	d := s[len(s)-1]
	if d%o.k != 0 {
		return nil, fmt.Errorf("maxout: the last axis (%d, shape %s) is not a multiple of num_pieces=%d", d, nd.ShapeString(in[0]), o.k)
	}
	s[len(s)-1] = d / o.k
	return s, nil
}

// Pieces is the number of pieces each output is the maximum of.
func (o MaxoutOp) Pieces() int { return o.k }

func (o MaxoutOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(MaxoutGradOp(o), in[0], out, gz)}
}

// MaxoutGradOp routes gz to every piece equal to its group's maximum (as
// the gradient of Theano's max).
type MaxoutGradOp struct{ k int }

func (o MaxoutGradOp) String() string { return fmt.Sprintf("MaxoutGrad{%d}", o.k) }
func (o MaxoutGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o MaxoutGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// Pieces is the number of pieces each output is the maximum of.
func (o MaxoutGradOp) Pieces() int { return o.k }

func (o MaxoutGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, nil, nil}
}

// Maxout is Blocks' Maxout application: the maximum over groups of
// numPieces consecutive entries of the last axis.
func Maxout(x *Variable, numPieces int) (*Variable, error) {
	if numPieces < 1 {
		return nil, fmt.Errorf("maxout: num_pieces must be positive, got %d", numPieces)
	}
	return tryApply(MaxoutOp{numPieces}, x)
}
