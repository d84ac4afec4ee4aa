package core

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/nd"
)

// ReshapeLike gives x the shape of like when the graph runs (Theano's
// x.reshape(like.shape)): a view. The sizes must agree; a mismatch is an
// error when the shapes are known. Its gradient reshapes the output
// gradient back like x.
func ReshapeLike(x, like *Variable) (*Variable, error) {
	if like == nil {
		return nil, fmt.Errorf("reshape_like: no variable to take the shape of")
	}
	return tryApply(CheckedReshapeLikeOp{}, x, like)
}

// CheckedReshapeLikeOp is reshapeLikeOp with a size check (the exported
// face; the gradients use reshapeLikeOp, whose sizes agree by
// construction).
type CheckedReshapeLikeOp struct{}

func (CheckedReshapeLikeOp) String() string { return "ReshapeLike" }
func (CheckedReshapeLikeOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[1].ndim, nil
}
func (CheckedReshapeLikeOp) Shape(in [][]int) ([]int, error) {
	if nd.Prod(in[0]) != nd.Prod(in[1]) {
		return nil, fmt.Errorf("cannot reshape %s like %s: the sizes differ", nd.ShapeString(in[0]), nd.ShapeString(in[1]))
	}
	return in[1], nil
}
func (CheckedReshapeLikeOp) IsView(in [][]int, out []int) bool { return true }
func (CheckedReshapeLikeOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(ReshapeLikeOp{}, gz, in[0]), nil}
}

// MergeLeadingAxes merges x's first n+1 axes into one: a (2, 3, 5, 4)
// input with n=2 becomes (30, 4). It is the input half of Blocks'
// WithExtraDims wrapper (n extra dimensions merged with the first
// non-extra one). A view; n=0 is x itself.
func MergeLeadingAxes(x *Variable, n int) (*Variable, error) {
	if n < 0 {
		return nil, fmt.Errorf("merge leading axes: the number of extra dimensions must be >= 0, got %d", n)
	}
	if n == 0 {
		return x, nil
	}
	if x.ndim < n+1 {
		return nil, fmt.Errorf("merge leading axes: %d extra dimensions need an input of at least %d dimensions, got %d", n, n+1, x.ndim)
	}
	return tryApply(MergeLeadingOp{n}, x)
}

type MergeLeadingOp struct{ n int }

func (o MergeLeadingOp) String() string { return fmt.Sprintf("MergeLeading{%d}", o.n) }
func (o MergeLeadingOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim - o.n, nil
}
func (o MergeLeadingOp) Shape(in [][]int) ([]int, error) {
	s := in[0]
	return append([]int{nd.Prod(s[:o.n+1])}, s[o.n+1:]...), nil
}
func (MergeLeadingOp) IsView(in [][]int, out []int) bool { return true }
func (MergeLeadingOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(ReshapeLikeOp{}, gz, in[0])}
}

// SplitLeadingAxes undoes MergeLeadingAxes on a result: x's first axis is
// split into like's first n axes and what is left of it, and x's other
// axes are kept. A (30, 7) x with a (2, 3, 5, 4) like and n=2 becomes
// (2, 3, 5, 7). The first axis must divide evenly. A view; n=0 is x
// itself.
func SplitLeadingAxes(x, like *Variable, n int) (*Variable, error) {
	if n < 0 {
		return nil, fmt.Errorf("split leading axes: the number of extra dimensions must be >= 0, got %d", n)
	}
	if n == 0 {
		return x, nil
	}
	if x.ndim < 1 {
		return nil, fmt.Errorf("split leading axes: a 0-d result has no axis to split")
	}
	if like.ndim < n {
		return nil, fmt.Errorf("split leading axes: %d extra dimensions, but the input has only %d", n, like.ndim)
	}
	return tryApply(SplitLeadingOp{n}, x, like)
}

type SplitLeadingOp struct{ n int }

func (o SplitLeadingOp) String() string { return fmt.Sprintf("SplitLeading{%d}", o.n) }
func (o SplitLeadingOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim + o.n, nil
}
func (o SplitLeadingOp) Shape(in [][]int) ([]int, error) {
	s, extra := in[0], in[1][:o.n]
	p := nd.Prod(extra)
	if p == 0 || s[0]%p != 0 {
		return nil, fmt.Errorf("cannot split the first axis of %s into %s and the rest", nd.ShapeString(s), nd.ShapeString(extra))
	}
	out := slices.Clone(extra)
	out = append(out, s[0]/p)
	return append(out, s[1:]...), nil
}
func (SplitLeadingOp) IsView(in [][]int, out []int) bool { return true }
func (SplitLeadingOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(ReshapeLikeOp{}, gz, in[0]), nil}
}
