package core

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/nd"
)

// Slices with symbolic bounds, x[a:b] with a and b int scalars computed
// from shapes (x[x.shape[0] - 2:], Blocks' collect_parameters): like
// tensor.alloc's shapes (shape_expr.go), the bounds are known from the
// shapes of the variables they read, so the executor knows the result's
// shape before it runs the op.

// subtensorShaped is Subtensor for an index with symbolic slice bounds.
func subtensorShaped(x *Variable, idx []Index) (*Variable, error) {
	op := &SubtensorShapedOp{idx: slices.Clone(idx), exprs: make([][2]*shapeExpr, len(idx))}
	for ax, ix := range idx {
		for k, b := range []*Variable{ix.StartVar, ix.StopVar} {
			if b == nil {
				continue
			}
			if b.ndim != 0 {
				return nil, fmt.Errorf("slice bound of axis %d must be an int scalar, got a %d-d variable", ax, b.ndim)
			}
			e, err := newShapeExpr(fmt.Sprintf("the slice bound of axis %d", ax), b)
			if err != nil {
				return nil, err
			}
			op.exprs[ax][k] = e
			for _, l := range e.leaves {
				if !slices.Contains(op.leaves, l) {
					op.leaves = append(op.leaves, l)
				}
			}
		}
	}
	return tryApply(op, append([]*Variable{x}, op.leaves...)...)
}

// SubtensorShapedOp is x[idx] whose bounds its exprs compute from the
// shapes of its inputs after x (the leaves).
type SubtensorShapedOp struct {
	idx    []Index
	exprs  [][2]*shapeExpr // per axis: start, stop (nil: idx's own)
	leaves []*Variable
}

func (o *SubtensorShapedOp) String() string { return "Subtensor" }
func (o *SubtensorShapedOp) Type(in []*Variable) (nd.DType, int, error) {
	return SubtensorOp{o.idx}.Type(in[:1])
}

// concrete is the index with its bounds computed from the leaves' shapes
// (in[1:]).
func (o *SubtensorShapedOp) concrete(in [][]int) (SubtensorOp, error) {
	idx := slices.Clone(o.idx)
	for ax, es := range o.exprs {
		for k, e := range es {
			if e == nil {
				continue
			}
			shapes := make([][]int, len(e.leaves))
			for i, l := range e.leaves {
				shapes[i] = in[1+slices.Index(o.leaves, l)]
			}
			a, err := e.eval(shapes)
			if err != nil {
				return SubtensorOp{}, err
			}
			b := int(a.Flat(0))
			if k == 0 {
				idx[ax].Start, idx[ax].StartVar = &b, nil
			} else {
				idx[ax].Stop, idx[ax].StopVar = &b, nil
			}
		}
	}
	return SubtensorOp{idx}, nil
}

func (o *SubtensorShapedOp) Shape(in [][]int) ([]int, error) {
	c, err := o.concrete(in)
	if err != nil {
		return nil, err
	}
	return c.Shape(in[:1])
}

// Concrete is the indexing the op computes for inputs of these shapes.
func (o *SubtensorShapedOp) Concrete(in [][]int) (SubtensorOp, error) { return o.concrete(in) }

func (o *SubtensorShapedOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := make([]*Variable, len(in))
	if in[0].dtype.IsFloat() {
		g[0] = apply(&SubtensorShapedGradOp{o}, append([]*Variable{in[0], gz}, in[1:]...)...)
	}
	return g
}

// SubtensorShapedGradOp scatters gz into zeros shaped like x: inputs x,
// gz, then the leaves.
type SubtensorShapedGradOp struct{ sub *SubtensorShapedOp }

func (o *SubtensorShapedGradOp) String() string { return "IncSubtensor" }
func (o *SubtensorShapedGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o *SubtensorShapedGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// leafShapes are the op's input shapes as the subtensor saw them: x, then
// the leaves (gz left out).
func leafShapes(in [][]int) [][]int { return append([][]int{in[0]}, in[2:]...) }

// Concrete is the indexing whose gradient the op computes for inputs of
// these shapes (x, gz, the leaves).
func (o *SubtensorShapedGradOp) Concrete(in [][]int) (SubtensorOp, error) {
	return o.sub.concrete(leafShapes(in))
}

func (o *SubtensorShapedGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := make([]*Variable, len(in))
	g[1] = apply(o.sub, append([]*Variable{gz}, in[2:]...)...)
	return g
}
