package core

import (
	"fmt"
	"math"
	"slices"

	"github.com/blocks-go/blocks/nd"
)

// More of Theano's tensor namespace, as research code calls it (the
// survey in docs/reference.md): most are compositions of the ops above,
// so their gradients are those ops' gradients.

// Stack joins variables of one number of dimensions along a new axis
// (Theano's tensor.stack(tensors, axis=0)).
func Stack(xs []*Variable, axis int) (*Variable, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("stack: nothing to stack")
	}
	n := xs[0].ndim
	if axis < 0 {
		axis += n + 1
	}
	if axis < 0 || axis > n {
		return nil, fmt.Errorf("stack: axis out of range for %d-d variables", n)
	}
	pattern := make([]int, 0, n+1)
	for i := 0; i < n; i++ {
		if i == axis {
			pattern = append(pattern, -1)
		}
		pattern = append(pattern, i)
	}
	if axis == n {
		pattern = append(pattern, -1)
	}
	parts := make([]*Variable, len(xs))
	for i, x := range upcastAll(xs) {
		if x.ndim != n {
			return nil, fmt.Errorf("stack: all inputs must have the same number of dimensions: input 0 is %d-d, input %d is %d-d", n, i, x.ndim)
		}
		p, err := Dimshuffle(x, pattern)
		if err != nil {
			return nil, err
		}
		parts[i] = p
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return tryApply(ConcatOp{axis}, parts...)
}

// Clip is Theano's tensor.clip(x, lo, hi): lo where x < lo, hi where
// x > hi, x elsewhere; the gradient flows to x inside [lo, hi].
func Clip(x, lo, hi *Variable) *Variable {
	return Minimum(Maximum(x, lo), hi)
}

// Floor is the largest integral value not above x, in x's dtype (an
// integer x is its own floor); its gradient is zero.
func Floor(x *Variable) *Variable {
	if !x.dtype.IsFloat() {
		return x
	}
	t := Cast(Cast(x, nd.Int64), x.dtype) // truncation towards zero
	return Sub(t, Cast(LT(x, t), x.dtype))
}

// Ceil is the smallest integral value not below x: -floor(-x).
func Ceil(x *Variable) *Variable {
	if !x.dtype.IsFloat() {
		return x
	}
	return Neg(Floor(Neg(x)))
}

// subtensorOf returns the variable x of sub = x[idx], a basic index
// (Theano's set_subtensor and inc_subtensor take the subtensor), and
// scatter, which puts a value of sub's shape into zeros of x's shape.
func subtensorOf(what string, sub *Variable) (x *Variable, scatter func(v *Variable) *Variable, err error) {
	if sub.kind == KindOp {
		switch o := sub.op.(type) {
		case SubtensorOp:
			x = sub.inputs[0]
			return x, func(v *Variable) *Variable { return apply(SubtensorGradOp{o}, x, v) }, nil
		case *SubtensorShapedOp:
			x = sub.inputs[0]
			return x, func(v *Variable) *Variable {
				return apply(&SubtensorShapedGradOp{o}, append([]*Variable{x, v}, sub.inputs[1:]...)...)
			}, nil
		}
	}
	return nil, nil, fmt.Errorf("%s: the first argument must be a subtensor of a variable (x[1:3], x[:, 0]), got %s", what, sub)
}

// IncSubtensor is Theano's inc_subtensor(x[idx], y): x with y (broadcast to
// x[idx]'s shape) added at idx. With set, SetSubtensor: y replaces x at idx.
func IncSubtensor(sub, y *Variable, set bool) (*Variable, error) {
	what := "inc_subtensor"
	if set {
		what = "set_subtensor"
	}
	x, scatter, err := subtensorOf(what, sub)
	if err != nil {
		return nil, err
	}
	if y.ndim > sub.ndim {
		return nil, fmt.Errorf("%s: y has %d dimensions, more than the subtensor's %d", what, y.ndim, sub.ndim)
	}
	if !x.dtype.IsFloat() {
		return nil, fmt.Errorf("%s: x must be a float variable, got %s", what, x.dtype)
	}
	y = Cast(y, x.dtype)
	// y broadcast to the subtensor's shape: switch(c, y, y) is y
	// everywhere (NaN included) with the shape of c.
	yb := Switch(GE(sub, Const(x.dtype, 0)), y, y)
	scattered := scatter(yb)
	if !set {
		return Add(x, scattered), nil
	}
	ones := Switch(GE(sub, Const(x.dtype, 0)), Const(x.dtype, 1), Const(x.dtype, 1))
	mask := GT(scatter(ones), Const(x.dtype, 0))
	return Switch(mask, scattered, x), nil
}

// BatchedDot is Theano's batched_dot(a, b): for each i of the first axis,
// dot(a[i], b[i]). a and b are 2- or 3-d: (B, n, m)·(B, m, p) is (B, n, p),
// (B, n, m)·(B, m) is (B, n), (B, m)·(B, m, p) is (B, p), (B, m)·(B, m) is
// (B,).
func BatchedDot(a, b *Variable) (*Variable, error) {
	if a.ndim < 2 || a.ndim > 3 || b.ndim < 2 || b.ndim > 3 {
		return nil, fmt.Errorf("batched_dot: want 2- or 3-d operands, got %d-d %s and %d-d %s", a.ndim, a, b.ndim, b)
	}
	// a as (B, n, m, 1) and b as (B, 1, m, p), multiplied and summed over m.
	var pa, pb []int
	if a.ndim == 3 {
		pa = []int{0, 1, 2, -1}
	} else {
		pa = []int{0, -1, 1, -1}
	}
	if b.ndim == 3 {
		pb = []int{0, -1, 1, 2}
	} else {
		pb = []int{0, -1, 1, -1}
	}
	da, err := Dimshuffle(a, pa)
	if err != nil {
		return nil, err
	}
	db, err := Dimshuffle(b, pb)
	if err != nil {
		return nil, err
	}
	s, err := Sum(Mul(da, db), []int{2}, false, nil)
	if err != nil {
		return nil, err
	}
	// Drop the axes the 2-d operands did not have: (B, n, p) has n of a
	// 3-d a and p of a 3-d b.
	keep := []int{0}
	if a.ndim == 3 {
		keep = append(keep, 1)
	}
	if b.ndim == 3 {
		keep = append(keep, 2)
	}
	return tryApply(DimshuffleOp{keep}, s)
}

// BinaryCrossEntropy is Theano's nnet.binary_crossentropy(output, target):
// -(target log(output) + (1 - target) log(1 - output)), elementwise.
func BinaryCrossEntropy(output, target *Variable) *Variable {
	one := Const(output.dtype, 1)
	return Neg(Add(Mul(target, Log(output)), Mul(Sub(one, target), Log(Sub(one, output)))))
}

// HardSigmoid is Theano's nnet.hard_sigmoid: clip(0.2 x + 0.5, 0, 1).
func HardSigmoid(x *Variable) *Variable {
	dt := x.dtype
	return Clip(Add(Mul(Const(dt, 0.2), x), Const(dt, 0.5)), Const(dt, 0), Const(dt, 1))
}

// Roll is Theano's roll(x, shift, axis): x's entries moved shift places
// along axis (numpy.roll), for an int shift.
func Roll(x *Variable, shift, axis int) (*Variable, error) {
	if axis < 0 {
		axis += x.ndim
	}
	if axis < 0 || axis >= x.ndim {
		return nil, fmt.Errorf("roll: axis out of range for a %d-d variable", x.ndim)
	}
	// x[-s:] then x[:-s] along axis, with s taken modulo the length when
	// the graph runs (the length is not known here): the op does it.
	return tryApply(RollOp{shift, axis}, x)
}

// RollOp is numpy.roll along one axis.
type RollOp struct{ shift, axis int }

func (o RollOp) String() string { return fmt.Sprintf("Roll{%d, %d}", o.shift, o.axis) }
func (o RollOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o RollOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// Shift is the roll's shift along its axis.
func (o RollOp) Shift() (shift, axis int) { return o.shift, o.axis }

func (o RollOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if !in[0].dtype.IsFloat() {
		return []*Variable{nil}
	}
	return []*Variable{apply(RollOp{-o.shift, o.axis}, gz)}
}

// Tile is Theano's tile(x, reps): x repeated reps[i] times along axis i
// (reps as long as x's dimensions), as numpy.tile.
func Tile(x *Variable, reps []int) (*Variable, error) {
	if len(reps) != x.ndim {
		return nil, fmt.Errorf("tile: reps must have one entry per dimension of x (%d), got %d", x.ndim, len(reps))
	}
	out := x
	for ax, r := range reps {
		if r < 1 {
			return nil, fmt.Errorf("tile: reps[%d] must be at least 1, got %d", ax, r)
		}
		if r == 1 {
			continue
		}
		parts := make([]*Variable, r)
		for i := range parts {
			parts[i] = out
		}
		var err error
		if out, err = Concatenate(parts, ax); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Repeat is Theano's repeat(x, repeats, axis): each entry of x repeated
// repeats times along axis (numpy.repeat), for an int repeats.
func Repeat(x *Variable, repeats, axis int) (*Variable, error) {
	if axis < 0 {
		axis += x.ndim
	}
	if axis < 0 || axis >= x.ndim {
		return nil, fmt.Errorf("repeat: axis out of range for a %d-d variable", x.ndim)
	}
	if repeats < 0 {
		return nil, fmt.Errorf("repeat: repeats must not be negative, got %d", repeats)
	}
	return tryApply(RepeatNOp{repeats, axis}, x)
}

// RepeatNOp is numpy.repeat(x, n, axis).
type RepeatNOp struct{ n, axis int }

func (o RepeatNOp) String() string { return fmt.Sprintf("Repeat{%d, %d}", o.n, o.axis) }
func (o RepeatNOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o RepeatNOp) Shape(in [][]int) ([]int, error) {
	s := slices.Clone(in[0])
	s[o.axis] *= o.n
	return s, nil
}

// Repeats is how many times each entry along axis is repeated.
func (o RepeatNOp) Repeats() (n, axis int) { return o.n, o.axis }

func (o RepeatNOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if !in[0].dtype.IsFloat() {
		return []*Variable{nil}
	}
	return []*Variable{apply(RepeatNGradOp{o}, gz)}
}

// RepeatNGradOp sums each run of n entries along the axis.
type RepeatNGradOp struct{ r RepeatNOp }

func (o RepeatNGradOp) String() string { return "RepeatGrad" }
func (o RepeatNGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o RepeatNGradOp) Shape(in [][]int) ([]int, error) {
	s := slices.Clone(in[0])
	if o.r.n > 0 {
		s[o.r.axis] /= o.r.n
	}
	return s, nil
}

// Repeats is the repeat's count and axis.
func (o RepeatNGradOp) Repeats() (n, axis int) { return o.r.n, o.r.axis }

func (o RepeatNGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(o.r, gz)}
}

// CumSum is Theano's extra_ops.cumsum(x, axis): running sums along axis
// (axis None: of the flattened x).
func CumSum(x *Variable, axis *int) (*Variable, error) {
	if axis == nil {
		f, err := Flatten(x, 1)
		if err != nil {
			return nil, err
		}
		return tryApply(CumSumOp{0, false}, f)
	}
	a := *axis
	if a < 0 {
		a += x.ndim
	}
	if a < 0 || a >= x.ndim {
		return nil, fmt.Errorf("cumsum: axis %d out of range for a %d-d variable", *axis, x.ndim)
	}
	return tryApply(CumSumOp{a, false}, x)
}

// CumSumOp is the running sum along axis (from the end when reverse: the
// gradient of the running sum).
type CumSumOp struct {
	axis    int
	reverse bool
}

func (o CumSumOp) String() string { return fmt.Sprintf("CumSum{%d}", o.axis) }
func (o CumSumOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o CumSumOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// Axis is the running sum's axis, and reverse whether it runs from the
// end.
func (o CumSumOp) Axis() (axis int, reverse bool) { return o.axis, o.reverse }

func (o CumSumOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if !in[0].dtype.IsFloat() {
		return []*Variable{nil}
	}
	return []*Variable{apply(CumSumOp{o.axis, !o.reverse}, gz)}
}

// Arange is Theano's arange(start, stop, step, dtype): start, start+step,
// ... below stop (above it for a negative step). Each bound is an int or
// float constant or an int scalar computed from shapes (x.shape[0]); the
// length is known when the graph runs.
func Arange(start, stop, step *Variable, dtype nd.DType) (*Variable, error) {
	op := &ArangeOp{dtype: dtype}
	for i, v := range []*Variable{start, stop, step} {
		if v.ndim != 0 {
			return nil, fmt.Errorf("arange: %s must be a scalar, got a %d-d variable", [3]string{"start", "stop", "step"}[i], v.ndim)
		}
		if v.kind == KindConstant {
			op.consts[i] = v.value.Flat(0)
			continue
		}
		e, err := newShapeExpr("arange: "+[3]string{"start", "stop", "step"}[i], v)
		if err != nil {
			return nil, err
		}
		op.exprs[i] = e
		for _, l := range e.leaves {
			if !slices.Contains(op.leaves, l) {
				op.leaves = append(op.leaves, l)
			}
		}
	}
	if len(op.leaves) == 0 {
		if op.consts[2] == 0 {
			return nil, fmt.Errorf("arange: step must not be zero")
		}
	}
	return foldOrApply(op, dtype, op.leaves)
}

// ArangeOp computes its bounds from the shapes of its inputs (the leaves).
type ArangeOp struct {
	dtype  nd.DType
	consts [3]float64
	exprs  [3]*shapeExpr // nil for a constant bound
	leaves []*Variable
}

func (o *ArangeOp) String() string { return "ARange" }
func (o *ArangeOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.dtype, 1, nil
}

func (o *ArangeOp) bounds(in [][]int) (b [3]float64, err error) {
	for i, e := range o.exprs {
		if e == nil {
			b[i] = o.consts[i]
			continue
		}
		shapes := make([][]int, len(e.leaves))
		for k, l := range e.leaves {
			shapes[k] = in[slices.Index(o.leaves, l)]
		}
		a, err := e.eval(shapes)
		if err != nil {
			return b, err
		}
		b[i] = a.Flat(0)
	}
	if b[2] == 0 {
		return b, fmt.Errorf("arange: step must not be zero")
	}
	return b, nil
}

func (o *ArangeOp) Shape(in [][]int) ([]int, error) {
	b, err := o.bounds(in)
	if err != nil {
		return nil, err
	}
	n := math.Ceil((b[1] - b[0]) / b[2])
	if n < 0 || math.IsNaN(n) {
		n = 0
	}
	if n > maxShapeDim {
		return nil, fmt.Errorf("arange: %g values are more than any array can hold", n)
	}
	return []int{int(n)}, nil
}

// Bounds are start, stop and step for inputs of these shapes.
func (o *ArangeOp) Bounds(in [][]int) ([3]float64, error) { return o.bounds(in) }

func (o *ArangeOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}
