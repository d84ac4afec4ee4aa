package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// The ops recurrent models need besides Scan: Theano's dot of an n-d
// tensor with a matrix (sequences through a Linear brick), concatenation,
// row lookup (a LookupTable) and the repetition of an initial state over a
// batch.

// DotNDOp is x·W for an n-d x (n ≥ 3) and a 2-d W: the product over x's
// last axis, as Theano's dot of a tensor3 and a matrix.
type DotNDOp struct{}

func (DotNDOp) String() string { return "Dot{nd}" }
func (DotNDOp) Type(in []*Variable) (nd.DType, int, error) {
	x, w := in[0], in[1]
	if x.ndim < 1 || w.ndim != 2 {
		return 0, 0, fmt.Errorf("dot: want an n-d and a 2-d operand, got %d-d %s and %d-d %s", x.ndim, x, w.ndim, w)
	}
	if x.dtype != w.dtype {
		return 0, 0, fmt.Errorf("dot operands must share a dtype, got %s and %s", x.dtype, w.dtype)
	}
	return x.dtype, x.ndim, nil
}
func (DotNDOp) Shape(in [][]int) ([]int, error) {
	x, w := in[0], in[1]
	if x[len(x)-1] != w[0] {
		return nil, fmt.Errorf("dot: shapes %s and %s are not aligned: %d (dim %d) != %d (dim 0)", nd.ShapeString(x), nd.ShapeString(w), x[len(x)-1], len(x)-1, w[0])
	}
	out := append([]int(nil), x[:len(x)-1]...)
	return append(out, w[1]), nil
}
func (DotNDOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	x, w := in[0], in[1]
	if !x.dtype.IsFloat() {
		return []*Variable{nil, nil}
	}
	g2 := apply(RowsOp{}, gz)
	x2 := apply(RowsOp{}, x)
	gx := apply(ReshapeLikeOp{}, apply(DotOp{transB: true}, g2, w), x)
	gw := apply(DotOp{transA: true}, x2, g2)
	return []*Variable{gx, gw}
}

// RowsOp views an n-d array as a matrix of its last axis: (Π leading, last).
type RowsOp struct{}

func (RowsOp) String() string { return "Rows" }
func (RowsOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 2, nil
}
func (RowsOp) Shape(in [][]int) ([]int, error) {
	s := in[0]
	return []int{nd.Prod(s[:len(s)-1]), s[len(s)-1]}, nil
}
func (RowsOp) IsView(in [][]int, out []int) bool { return true }
func (RowsOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(ReshapeLikeOp{}, gz, in[0])}
}

// DotND is Theano's dot(x, W) for any x of at least one dimension and a
// matrix W: the product over x's last axis. For 1-d and 2-d x it is Dot.
func DotND(x, w *Variable) (*Variable, error) {
	if x.ndim <= 2 {
		return Dot(x, w)
	}
	if w.ndim != 2 {
		return nil, fmt.Errorf("dot of a %d-d %s needs a matrix, got a %d-d %s", x.ndim, x, w.ndim, w)
	}
	dt := resultType(x, w)
	return tryApply(DotNDOp{}, as(x, dt), as(w, dt))
}

// ConcatOp joins its inputs along an axis (Theano's concatenate).
type ConcatOp struct{ axis int }

func (o ConcatOp) String() string { return fmt.Sprintf("Join{%d}", o.axis) }
func (o ConcatOp) Type(in []*Variable) (nd.DType, int, error) {
	for _, x := range in[1:] {
		if x.ndim != in[0].ndim || x.dtype != in[0].dtype {
			return 0, 0, fmt.Errorf("concatenate: %s is %s but %s is %s", in[0], in[0].TypeString(), x, x.TypeString())
		}
	}
	return in[0].dtype, in[0].ndim, nil
}
func (o ConcatOp) Shape(in [][]int) ([]int, error) {
	out := append([]int(nil), in[0]...)
	for _, s := range in[1:] {
		for d := range s {
			if d != o.axis && s[d] != out[d] {
				return nil, fmt.Errorf("concatenate: shapes %s and %s differ outside axis %d", nd.ShapeString(in[0]), nd.ShapeString(s), o.axis)
			}
		}
		out[o.axis] += s[o.axis]
	}
	return out, nil
}

// Axis is the axis the op joins along.
func (o ConcatOp) Axis() int { return o.axis }

func (o ConcatOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := make([]*Variable, len(in))
	for k, x := range in {
		if x.dtype.IsFloat() {
			g[k] = apply(ConcatGradOp{o.axis, k}, append([]*Variable{gz}, in...)...)
		}
	}
	return g
}

// ConcatGradOp is the part of gz that concerns input k.
type ConcatGradOp struct{ axis, k int }

func (o ConcatGradOp) String() string { return fmt.Sprintf("JoinGrad{%d,%d}", o.axis, o.k) }
func (o ConcatGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o ConcatGradOp) Shape(in [][]int) ([]int, error) { return in[1+o.k], nil }

// Axis is the joined axis, and k the input whose part of the gradient
// the op takes.
func (o ConcatGradOp) Axis() (axis, k int) { return o.axis, o.k }

func (o ConcatGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// Concatenate joins variables of one number of dimensions along axis
// (negative counts from the end), cast to their common dtype.
func Concatenate(xs []*Variable, axis int) (*Variable, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("concatenate: nothing to join")
	}
	n := xs[0].ndim
	if axis < 0 {
		axis += n
	}
	if axis < 0 || axis >= n {
		return nil, fmt.Errorf("concatenate: axis out of range for %d-d variables", n)
	}
	if len(xs) == 1 {
		return xs[0], nil
	}
	return tryApply(ConcatOp{axis}, upcastAll(xs)...)
}

// upcastAll casts variables to their common dtype (numpy's promotion), as
// Theano's join and stack do.
func upcastAll(xs []*Variable) []*Variable {
	dt := xs[0].dtype
	for _, x := range xs[1:] {
		dt = resultType(&Variable{dtype: dt}, x)
	}
	out := make([]*Variable, len(xs))
	for i, x := range xs {
		out[i] = Cast(x, dt)
	}
	return out
}

// TakeOp is W[indices]: rows of W picked by an integer array of any shape
// (Theano's advanced indexing on the first axis).
type TakeOp struct{}

func (TakeOp) String() string { return "AdvancedSubtensor1" }
func (TakeOp) Type(in []*Variable) (nd.DType, int, error) {
	w, idx := in[0], in[1]
	if w.ndim < 1 {
		return 0, 0, fmt.Errorf("cannot index the scalar %s", w)
	}
	if idx.dtype.IsFloat() {
		return 0, 0, fmt.Errorf("indices must be integers, got %s %s", idx.dtype, idx)
	}
	return w.dtype, idx.ndim + w.ndim - 1, nil
}
func (TakeOp) Shape(in [][]int) ([]int, error) {
	return append(append([]int(nil), in[1]...), in[0][1:]...), nil
}

// Check refuses indices outside the table.
func (TakeOp) Check(in []*nd.Array) error {
	n := in[0].Shape[0]
	for i, m := 0, in[1].Size(); i < m; i++ {
		if j := int(in[1].Flat(i)); j < 0 || j >= n {
			return fmt.Errorf("index %d is out of bounds for a table of %d rows", j, n)
		}
	}
	return nil
}
func (TakeOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if !in[0].dtype.IsFloat() {
		return []*Variable{nil, nil}
	}
	return []*Variable{apply(TakeGradOp{}, in[0], in[1], gz), nil}
}

// TakeGradOp scatters gz's rows, summed, into zeros shaped like W.
type TakeGradOp struct{}

func (TakeGradOp) String() string { return "AdvancedIncSubtensor1" }
func (TakeGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (TakeGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (TakeGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, nil, apply(TakeOp{}, gz, in[1])}
}

// Take is W[indices] for an integer array of indices of any shape: the
// result has shape indices.shape + W.shape[1:].
func Take(w, indices *Variable) (*Variable, error) { return tryApply(TakeOp{}, w, indices) }

// RepeatOp repeats x along a new leading axis as many times as ref's
// dimension axis: Blocks' tensor.repeat(initial_state[None, :], batch_size, 0)
// with the batch size read from a sequence at run time.
type RepeatOp struct{ axis int }

func (o RepeatOp) String() string { return fmt.Sprintf("RepeatLike{%d}", o.axis) }
func (o RepeatOp) Type(in []*Variable) (nd.DType, int, error) {
	if in[1].ndim <= o.axis {
		return 0, 0, fmt.Errorf("repeat: %s has no axis %d", in[1], o.axis)
	}
	return in[0].dtype, in[0].ndim + 1, nil
}
func (o RepeatOp) Shape(in [][]int) ([]int, error) {
	return append([]int{in[1][o.axis]}, in[0]...), nil
}
func (o RepeatOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if !in[0].dtype.IsFloat() {
		return []*Variable{nil, nil}
	}
	g, _ := Sum(gz, []int{0}, false, nil)
	return []*Variable{g, nil}
}

// RepeatLike stacks copies of x along a new first axis, one per element of
// ref's dimension axis (the batch size of a sequence, for example).
func RepeatLike(x, ref *Variable, axis int) (*Variable, error) {
	return tryApply(RepeatOp{axis}, x, ref)
}

// PickLast is x[..., y[...]]: for each position of the integer array y
// (x's shape without its last axis), the entry of x's last axis that y
// names (Pick generalised to sequences of batches).
func PickLast(x, y *Variable) (*Variable, error) {
	if x.ndim != y.ndim+1 {
		return nil, fmt.Errorf("pick: want x with one more axis than y, got %d-d %s and %d-d %s", x.ndim, x, y.ndim, y)
	}
	if x.ndim == 2 {
		return Pick(x, y)
	}
	yf, err := Flatten(y, 1)
	if err != nil {
		return nil, err
	}
	p, err := Pick(apply(RowsOp{}, x), yf)
	if err != nil {
		return nil, err
	}
	return apply(ReshapeLikeOp{}, p, y), nil
}

// SliceLastOp is x[..., start:stop]: contiguous blocks of rows, copied
// with one copy per row (the gates of LSTM and GRU steps).
type SliceLastOp struct{ start, stop int }

func (o SliceLastOp) String() string { return fmt.Sprintf("SliceLast{%d:%d}", o.start, o.stop) }
func (o SliceLastOp) Type(in []*Variable) (nd.DType, int, error) {
	if in[0].ndim < 1 {
		return 0, 0, fmt.Errorf("cannot slice the scalar %s", in[0])
	}
	return in[0].dtype, in[0].ndim, nil
}
func (o SliceLastOp) Shape(in [][]int) ([]int, error) {
	s := in[0]
	if o.stop > s[len(s)-1] {
		return nil, fmt.Errorf("slice %d:%d of an axis of %d", o.start, o.stop, s[len(s)-1])
	}
	out := append([]int(nil), s[:len(s)-1]...)
	return append(out, o.stop-o.start), nil
}

// Bounds are the slice's start and stop along the last axis.
func (o SliceLastOp) Bounds() (start, stop int) { return o.start, o.stop }

func (o SliceLastOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if !in[0].dtype.IsFloat() {
		return []*Variable{nil}
	}
	return []*Variable{apply(SliceLastGradOp{o}, in[0], gz)}
}

// SliceLastGradOp places gz in zeros shaped like x.
type SliceLastGradOp struct{ s SliceLastOp }

func (o SliceLastGradOp) String() string { return "SliceLastGrad" }
func (o SliceLastGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o SliceLastGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// Bounds are the slice's start and stop along the last axis.
func (o SliceLastGradOp) Bounds() (start, stop int) { return o.s.start, o.s.stop }

func (o SliceLastGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, apply(o.s, gz)}
}

// SliceLast is x[..., start:stop] (0 ≤ start ≤ stop).
func SliceLast(x *Variable, start, stop int) (*Variable, error) {
	if start < 0 || stop < start {
		return nil, fmt.Errorf("bad slice %d:%d", start, stop)
	}
	return tryApply(SliceLastOp{start, stop}, x)
}
