package core

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/blocks-go/blocks/nd"
)

// Symbolic shapes (Theano's 3 * x.shape[0], tensor.ones(x.shape)): the
// executor knows every shape before it runs an op, from the shapes of the
// inputs, not their values. An int expression that reads other variables
// only through their shapes (Shape, Shape_i, constants and arithmetic on
// them) is therefore known at planning time: shapeExpr evaluates it from
// the shapes of the variables it reads, its leaves.

// shapeExpr is an int expression over the shapes of its leaves.
type shapeExpr struct {
	v      *Variable
	leaves []*Variable
}

// newShapeExpr checks that v reads other variables only through their
// shapes and lists them; what is wrong is reported in terms of what.
func newShapeExpr(what string, v *Variable) (*shapeExpr, error) {
	if v.dtype.IsFloat() {
		return nil, fmt.Errorf("%s must be an int, got a %s variable", what, v.dtype)
	}
	e := &shapeExpr{v: v}
	seen := map[*Variable]bool{}
	var walk func(x *Variable) error
	walk = func(x *Variable) error {
		if seen[x] {
			return nil
		}
		seen[x] = true
		switch x.kind {
		case KindConstant:
			return nil
		case KindOp:
			switch x.op.(type) {
			case ShapeOfOp, ShapeIOp:
				if !slices.Contains(e.leaves, x.inputs[0]) {
					e.leaves = append(e.leaves, x.inputs[0])
				}
				return nil
			}
			if _, ok := x.op.(RandomOp); ok {
				return fmt.Errorf("%s depends on a random draw (%s); it may depend only on shapes", what, x.op)
			}
			for _, in := range x.inputs {
				if err := walk(in); err != nil {
					return err
				}
			}
			return nil
		}
		return fmt.Errorf("%s depends on the value of %s; it may depend only on shapes (x.shape, x.shape[i]) and constants", what, x)
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	return e, nil
}

// eval computes the expression given its leaves' shapes (in the order of
// e.leaves).
func (e *shapeExpr) eval(shapes [][]int) (*nd.Array, error) {
	memo := map[*Variable]*nd.Array{}
	var ev func(x *Variable) (*nd.Array, error)
	ev = func(x *Variable) (*nd.Array, error) {
		if a, ok := memo[x]; ok {
			return a, nil
		}
		var out *nd.Array
		switch {
		case x.kind == KindConstant:
			out = x.value
		default:
			switch op := x.op.(type) {
			case ShapeOfOp:
				s := shapes[slices.Index(e.leaves, x.inputs[0])]
				out = nd.New(nd.Int64, len(s))
				for i, d := range s {
					out.I64()[i] = int64(d)
				}
			case ShapeIOp:
				s := shapes[slices.Index(e.leaves, x.inputs[0])]
				out = nd.New(nd.Int64)
				out.I64()[0] = int64(s[op.i])
			default:
				ins := make([]*nd.Array, len(x.inputs))
				inShapes := make([][]int, len(x.inputs))
				for i, in := range x.inputs {
					a, err := ev(in)
					if err != nil {
						return nil, err
					}
					ins[i], inShapes[i] = a, a.Shape
				}
				s, err := x.op.Shape(inShapes)
				if err != nil {
					return nil, err
				}
				if c, ok := x.op.(Checker); ok {
					if err := c.Check(ins); err != nil {
						return nil, err
					}
				}
				out = nd.New(x.dtype, s...)
				if err := runOnHost(x.op, out, ins); err != nil {
					return nil, err
				}
			}
		}
		memo[x] = out
		return out, nil
	}
	return ev(e.v)
}

// maxShapeDim is the largest dimension a computed shape may have (about 2^51:
// below it, dimensions are exact in the float64 the expression is
// evaluated in).
const maxShapeDim = math.MaxInt32 * float64(1<<20)

// dims evaluates the expression as a list of non-negative dimensions.
func (e *shapeExpr) dims(shapes [][]int) ([]int, error) {
	a, err := e.eval(shapes)
	if err != nil {
		return nil, err
	}
	out := make([]int, a.Size())
	for i := range out {
		f := a.Flat(i)
		prec := 0 // an integral float64 written exactly, not as 4.6e+18
		if f != math.Trunc(f) {
			prec = -1
		}
		switch {
		case f < 0 || f != math.Trunc(f):
			return nil, fmt.Errorf("a dimension must be a non-negative int, got %s", strconv.FormatFloat(f, 'f', prec, 64))
		case f > maxShapeDim:
			return nil, fmt.Errorf("a dimension of %s is more than any array can hold (at most %d)", strconv.FormatFloat(f, 'f', prec, 64), int64(maxShapeDim))
		}
		out[i] = int(f)
	}
	return out, nil
}

// symShape is a shape computed, when the graph runs, from the shapes of
// the variables it reads (its leaves): Theano's size arguments (x.shape,
// (x.shape[0], 10)).
type symShape struct {
	ndim   int
	exprs  []*shapeExpr
	leaves []*Variable
}

// newSymShape reads dims, either one int vector whose length is known when
// the graph is built (x.shape or a constant) or one int scalar per
// dimension (3 * x.shape[0], x.shape[1], or constants); each may read other
// variables through their shapes only. what names the function in errors.
func newSymShape(what string, dims []*Variable) (*symShape, error) {
	if len(dims) == 0 {
		return nil, fmt.Errorf("%s: no dimensions", what)
	}
	sh := &symShape{}
	if len(dims) == 1 && dims[0].ndim == 1 {
		d := dims[0]
		switch _, isShape := d.op.(ShapeOfOp); {
		case d.kind == KindConstant:
			sh.ndim = d.value.Size()
		case d.kind == KindOp && isShape:
			sh.ndim = d.inputs[0].ndim
		default:
			return nil, fmt.Errorf("%s: a shape vector must be x.shape or a constant (its length fixes the number of dimensions); give one int scalar per dimension instead", what)
		}
		e, err := newShapeExpr(what+": the shape", d)
		if err != nil {
			return nil, err
		}
		sh.exprs = []*shapeExpr{e}
	} else {
		for i, d := range dims {
			if d.ndim != 0 {
				return nil, fmt.Errorf("%s: dimension %d must be an int scalar, got a %d-d variable", what, i, d.ndim)
			}
			e, err := newShapeExpr(fmt.Sprintf("%s: dimension %d", what, i), d)
			if err != nil {
				return nil, err
			}
			sh.exprs = append(sh.exprs, e)
		}
		sh.ndim = len(dims)
	}
	for _, e := range sh.exprs {
		for _, l := range e.leaves {
			if !slices.Contains(sh.leaves, l) {
				sh.leaves = append(sh.leaves, l)
			}
		}
	}
	return sh, nil
}

// eval computes the shape from the shapes of the leaves (in the order of
// sh.leaves).
func (sh *symShape) eval(what string, in [][]int) ([]int, error) {
	var out []int
	for _, e := range sh.exprs {
		shapes := make([][]int, len(e.leaves))
		for i, l := range e.leaves {
			shapes[i] = in[slices.Index(sh.leaves, l)]
		}
		d, err := e.dims(shapes)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	if len(out) != sh.ndim {
		return nil, fmt.Errorf("%s: %d dimensions computed, want %d", what, len(out), sh.ndim)
	}
	return out, nil
}

// AllocShaped is Theano's tensor.alloc(value, *shape) (and zeros/ones)
// with a symbolic shape: an array of dtype filled with value. dims is
// either one int vector whose length is known when the graph is built
// (x.shape) or one int scalar per dimension (3 * x.shape[0], x.shape[1],
// or constants); each may read other variables through their shapes only.
// The array's shape is known when the graph runs.
func AllocShaped(value float64, dtype nd.DType, dims []*Variable) (*Variable, error) {
	sh, err := newSymShape("alloc", dims)
	if err != nil {
		return nil, err
	}
	op := &AllocShapedOp{value: value, dtype: dtype, shape: sh}
	return foldOrApply(op, dtype, sh.leaves)
}

// foldOrApply is op applied to leaves, the variables whose shapes it reads;
// with none, the constant array of dtype it computes.
func foldOrApply(op Op, dtype nd.DType, leaves []*Variable) (*Variable, error) {
	if len(leaves) > 0 {
		return tryApply(op, leaves...)
	}
	s, err := op.Shape(nil)
	if err != nil {
		return nil, err
	}
	a := nd.New(dtype, s...)
	if err := runOnHost(op, a, nil); err != nil {
		return nil, err
	}
	return NewConstant(a), nil
}

// AllocShapedOp fills an array whose shape its exprs compute from the
// shapes of its inputs (the leaves).
type AllocShapedOp struct {
	value float64
	dtype nd.DType
	shape *symShape
}

func (o *AllocShapedOp) String() string { return fmt.Sprintf("AllocShaped{%v}", o.value) }
func (o *AllocShapedOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.dtype, o.shape.ndim, nil
}
func (o *AllocShapedOp) Shape(in [][]int) ([]int, error) { return o.shape.eval("alloc", in) }

// Value is the value the op fills its output with.
func (o *AllocShapedOp) Value() float64 { return o.value }

func (o *AllocShapedOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}
