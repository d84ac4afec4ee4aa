package core

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/nd"
)

// ReshapeOp reshapes to a fixed shape (one entry may be -1). A view.
type ReshapeOp struct{ shape []int }

func (o ReshapeOp) String() string { return fmt.Sprintf("Reshape{%d}", len(o.shape)) }
func (o ReshapeOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, len(o.shape), nil
}
func (o ReshapeOp) Shape(in [][]int) ([]int, error) {
	s, err := nd.ResolveShape(nd.Prod(in[0]), o.shape)
	if err != nil {
		return nil, fmt.Errorf("cannot reshape %s into %v", nd.ShapeString(in[0]), o.shape)
	}
	return s, nil
}
func (ReshapeOp) IsView(in [][]int, out []int) bool { return true }
func (ReshapeOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(ReshapeLikeOp{}, gz, in[0])}
}

// Reshape is Theano's reshape with a constant shape (-1 inferred).
func Reshape(x *Variable, shape []int) (*Variable, error) {
	neg := 0
	for _, d := range shape {
		if d == -1 {
			neg++
		} else if d < 0 {
			return nil, fmt.Errorf("reshape: bad dimension %d in %v", d, shape)
		}
	}
	if neg > 1 {
		return nil, fmt.Errorf("reshape: at most one -1 in %v", shape)
	}
	return tryApply(ReshapeOp{slices.Clone(shape)}, x)
}

// ReshapeLikeOp gives its first input the shape of its second. A view.
type ReshapeLikeOp struct{}

func (ReshapeLikeOp) String() string { return "ReshapeLike" }
func (ReshapeLikeOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[1].ndim, nil
}
func (ReshapeLikeOp) Shape(in [][]int) ([]int, error)   { return in[1], nil }
func (ReshapeLikeOp) IsView(in [][]int, out []int) bool { return true }
func (ReshapeLikeOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(ReshapeLikeOp{}, gz, in[0]), nil}
}

// FlattenOp keeps the first outdim-1 axes and flattens the rest. A view.
type FlattenOp struct{ outdim int }

func (o FlattenOp) String() string { return fmt.Sprintf("Flatten{%d}", o.outdim) }
func (o FlattenOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, o.outdim, nil
}
func (o FlattenOp) Shape(in [][]int) ([]int, error) {
	s := in[0]
	out := slices.Clone(s[:o.outdim-1])
	return append(out, nd.Prod(s[o.outdim-1:])), nil
}
func (FlattenOp) IsView(in [][]int, out []int) bool { return true }
func (FlattenOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(ReshapeLikeOp{}, gz, in[0])}
}

// Flatten is Theano's flatten(ndim): keeps ndim-1 leading axes.
func Flatten(x *Variable, ndim int) (*Variable, error) {
	if ndim < 1 || ndim > max(1, x.ndim) {
		return nil, fmt.Errorf("flatten: ndim must be between 1 and %d, got %d", max(1, x.ndim), ndim)
	}
	return tryApply(FlattenOp{ndim}, x)
}

// DimshuffleOp is Theano's dimshuffle: pattern lists input axes in their new
// order, with -1 for a new broadcastable axis ('x'); input axes left out
// must have length 1.
type DimshuffleOp struct{ pattern []int }

func (o DimshuffleOp) String() string {
	s := "DimShuffle{"
	for i, p := range o.pattern {
		if i > 0 {
			s += ","
		}
		if p < 0 {
			s += "x"
		} else {
			s += fmt.Sprint(p)
		}
	}
	return s + "}"
}
func (o DimshuffleOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, len(o.pattern), nil
}
func (o DimshuffleOp) Shape(in [][]int) ([]int, error) {
	s := in[0]
	out := make([]int, len(o.pattern))
	for i, p := range o.pattern {
		if p < 0 {
			out[i] = 1
		} else {
			out[i] = s[p]
		}
	}
	for i, d := range s {
		if !slices.Contains(o.pattern, i) && d != 1 {
			return nil, fmt.Errorf("%s drops axis %d of shape %s, which is not of length 1", o, i, nd.ShapeString(s))
		}
	}
	return out, nil
}

// ordered reports whether the kept axes stay in order (then it's a view).
func (o DimshuffleOp) ordered() bool {
	last := -1
	for _, p := range o.pattern {
		if p >= 0 {
			if p < last {
				return false
			}
			last = p
		}
	}
	return true
}
func (o DimshuffleOp) IsView(in [][]int, out []int) bool { return o.ordered() }

// Pattern is the output's axes: an input axis, or -1 for a broadcastable
// axis inserted.
func (o DimshuffleOp) Pattern() []int { return o.pattern }

// Ordered says whether the input's axes keep their order (the op is a
// view).
func (o DimshuffleOp) Ordered() bool { return o.ordered() }

func (o DimshuffleOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	inv := make([]int, in[0].ndim)
	for i := range inv {
		inv[i] = slices.Index(o.pattern, i) // -1 for dropped axes
	}
	return []*Variable{apply(DimshuffleOp{inv}, gz)}
}

// Dimshuffle is Theano's dimshuffle; pattern entries are input axes or -1
// for 'x'.
func Dimshuffle(x *Variable, pattern []int) (*Variable, error) {
	seen := map[int]bool{}
	for _, p := range pattern {
		if p < -1 || p >= x.ndim {
			return nil, fmt.Errorf("dimshuffle: axis %d out of range for a %d-d variable", p, x.ndim)
		}
		if p >= 0 && seen[p] {
			return nil, fmt.Errorf("dimshuffle: axis %d repeated in pattern", p)
		}
		seen[p] = true
	}
	return tryApply(DimshuffleOp{slices.Clone(pattern)}, x)
}

// Transpose reverses the axes (Theano's .T).
func Transpose(x *Variable) *Variable {
	p := make([]int, x.ndim)
	for i := range p {
		p[i] = x.ndim - 1 - i
	}
	return apply(DimshuffleOp{p}, x)
}

// Index is one entry of a subscript: an integer (Slice false) or a slice
// start:stop:step with nil for a missing bound.
type Index struct {
	Slice             bool
	I                 int
	Start, Stop, Step *int
	// StartVar and StopVar, when not nil, are a slice's symbolic bounds
	// (Start, Stop ignored): int scalars computed from shapes
	// (x[x.shape[0] - 2:]), known when the graph runs.
	StartVar, StopVar *Variable
}

// SubtensorOp is basic indexing x[i, a:b:c, ...].
type SubtensorOp struct{ idx []Index }

func (o SubtensorOp) String() string { return "Subtensor" }
func (o SubtensorOp) Type(in []*Variable) (nd.DType, int, error) {
	n := in[0].ndim
	for _, ix := range o.idx {
		if !ix.Slice {
			n--
		}
	}
	return in[0].dtype, n, nil
}

// axisRange is the start, step and count an index selects on one axis.
type axisRange struct{ start, step, count int }

func (o SubtensorOp) ranges(s []int) ([]axisRange, error) {
	r := make([]axisRange, len(s))
	for ax, d := range s {
		if ax >= len(o.idx) {
			r[ax] = axisRange{0, 1, d}
			continue
		}
		ix := o.idx[ax]
		if !ix.Slice {
			i := ix.I
			if i < 0 {
				i += d
			}
			if i < 0 || i >= d {
				return nil, fmt.Errorf("index %d is out of bounds for axis %d with size %d", ix.I, ax, d)
			}
			r[ax] = axisRange{i, 1, 1}
			continue
		}
		step := 1
		if ix.Step != nil {
			step = *ix.Step
		}
		start, stop, n := pySlice(d, ix.Start, ix.Stop, step)
		_ = stop
		r[ax] = axisRange{start, step, n}
	}
	return r, nil
}

// pySlice is Python's slice.indices plus the resulting length.
func pySlice(d int, startp, stopp *int, step int) (start, stop, n int) {
	clamp := func(v *int, def int) int {
		if v == nil {
			return def
		}
		x := *v
		if x < 0 {
			x += d
			if x < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		}
		if x >= d {
			if step < 0 {
				return d - 1
			}
			return d
		}
		return x
	}
	if step > 0 {
		start, stop = clamp(startp, 0), clamp(stopp, d)
		if stop > start {
			n = (stop - start + step - 1) / step
		}
	} else {
		start, stop = clamp(startp, d-1), clamp(stopp, -1)
		if start > stop {
			n = (start - stop - step - 1) / (-step)
		}
	}
	return start, stop, n
}

func (o SubtensorOp) Shape(in [][]int) ([]int, error) {
	rs, err := o.ranges(in[0])
	if err != nil {
		return nil, err
	}
	var out []int
	for ax, r := range rs {
		if ax < len(o.idx) && !o.idx[ax].Slice {
			continue
		}
		out = append(out, r.count)
	}
	return out, nil
}

// Ranges are the (start, step, count) the indices select on each axis of
// an input of shape shape.
func (o SubtensorOp) Ranges(shape []int) ([][3]int, error) { return o.rangesSpec(shape) }

func (o SubtensorOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if !in[0].dtype.IsFloat() {
		return []*Variable{nil}
	}
	return []*Variable{apply(SubtensorGradOp{o}, in[0], gz)}
}

// SubtensorGradOp scatters gz into zeros shaped like x.
type SubtensorGradOp struct{ sub SubtensorOp }

func (o SubtensorGradOp) String() string { return "IncSubtensor" }
func (o SubtensorGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o SubtensorGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// Subtensor is the indexing whose gradient the op computes.
func (o SubtensorGradOp) Subtensor() SubtensorOp { return o.sub }

func (o SubtensorGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, apply(o.sub, gz)}
}

// Subtensor is basic indexing: one Index per leading axis.
func Subtensor(x *Variable, idx []Index) (*Variable, error) {
	if len(idx) > x.ndim {
		return nil, fmt.Errorf("too many indices (%d) for a %d-d variable", len(idx), x.ndim)
	}
	symbolic := false
	for _, ix := range idx {
		if ix.Slice && ix.Step != nil && *ix.Step == 0 {
			return nil, fmt.Errorf("slice step cannot be zero")
		}
		symbolic = symbolic || ix.StartVar != nil || ix.StopVar != nil
	}
	if symbolic {
		return subtensorShaped(x, idx) // shape_expr_subtensor.go
	}
	return tryApply(SubtensorOp{slices.Clone(idx)}, x)
}
