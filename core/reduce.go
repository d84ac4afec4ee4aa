package core

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/nd"
)

// ReduceKind is a reduction: sum, mean, max, min or product.
type ReduceKind int

const (
	ReduceSum ReduceKind = iota
	ReduceMean
	ReduceMax
	ReduceMin
	ReduceProd
)

var reduceNames = [...]string{"Sum", "Mean", "Max", "Min", "Prod"}

// ReduceOp reduces over axes (nil: all of them).
type ReduceOp struct {
	kind     ReduceKind
	axes     []int // sorted, non-negative
	keepdims bool
	dtype    nd.DType
}

func (o ReduceOp) String() string {
	if o.axes == nil {
		return reduceNames[o.kind] + "{acc_dtype=" + o.dtype.String() + "}"
	}
	return fmt.Sprintf("%s{axis=%v}", reduceNames[o.kind], o.axes)
}

func (o ReduceOp) reduced(i int) bool { return o.axes == nil || slices.Contains(o.axes, i) }

func (o ReduceOp) Type(in []*Variable) (nd.DType, int, error) {
	if o.keepdims {
		return o.dtype, in[0].ndim, nil
	}
	if o.axes == nil {
		return o.dtype, 0, nil
	}
	return o.dtype, in[0].ndim - len(o.axes), nil
}

// keptShape is the output shape with reduced axes kept as 1.
func (o ReduceOp) keptShape(s []int) []int {
	k := make([]int, len(s))
	for i, d := range s {
		if o.reduced(i) {
			d = 1
		}
		k[i] = d
	}
	return k
}

func (o ReduceOp) Shape(in [][]int) ([]int, error) {
	s := in[0]
	if o.kind == ReduceMax || o.kind == ReduceMin {
		for i, d := range s {
			if o.reduced(i) && d == 0 {
				return nil, fmt.Errorf("%s of an empty axis %d (shape %s)", o, i, nd.ShapeString(s))
			}
		}
	}
	if o.keepdims {
		return o.keptShape(s), nil
	}
	var out []int
	for i, d := range s {
		if !o.reduced(i) {
			out = append(out, d)
		}
	}
	return out, nil
}

// Kind is the reduction the op computes.
func (o ReduceOp) Kind() ReduceKind { return o.kind }

// DType is the dtype the op accumulates in and returns.
func (o ReduceOp) DType() nd.DType { return o.dtype }

// KeptShape is the output shape for input shape s with the reduced axes
// kept as 1.
func (o ReduceOp) KeptShape(s []int) []int { return o.keptShape(s) }

func (o ReduceOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	x := in[0]
	if !x.dtype.IsFloat() {
		return []*Variable{nil}
	}
	keep := gz
	if !o.keepdims && o.axes != nil {
		keep = apply(ExpandOp{o.axes}, gz)
	}
	g := broadcastLike(Cast(keep, x.dtype), x)
	switch o.kind {
	case ReduceMean:
		g = Div(g, apply(CountOp{o.axes}, x))
	case ReduceMax, ReduceMin:
		outKeep := out
		if !o.keepdims && o.axes != nil {
			outKeep = apply(ExpandOp{o.axes}, out)
		}
		g = Mul(g, Cast(EQ(x, outKeep), x.dtype))
	case ReduceProd:
		outKeep := out
		if !o.keepdims && o.axes != nil {
			outKeep = apply(ExpandOp{o.axes}, out)
		}
		g = Mul(g, Div(outKeep, x))
	}
	return []*Variable{g}
}

// ExpandOp inserts size-1 axes at the given (output) positions: the inverse
// of a reduction without keepdims. A view.
type ExpandOp struct{ axes []int }

func (o ExpandOp) String() string { return fmt.Sprintf("ExpandDims{%v}", o.axes) }
func (o ExpandOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim + len(o.axes), nil
}
func (o ExpandOp) Shape(in [][]int) ([]int, error) {
	n := len(in[0]) + len(o.axes)
	out := make([]int, 0, n)
	j := 0
	for i := 0; i < n; i++ {
		if slices.Contains(o.axes, i) {
			out = append(out, 1)
		} else {
			out = append(out, in[0][j])
			j++
		}
	}
	return out, nil
}
func (ExpandOp) IsView(in [][]int, out []int) bool { return true }
func (o ExpandOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(ReshapeLikeOp{}, gz, in[0])}
}

// CountOp is the number of elements a reduction over axes combines, as a
// 0-d value of the input's dtype.
type CountOp struct{ axes []int }

func (o CountOp) String() string { return "Count" }
func (o CountOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 0, nil
}
func (o CountOp) Shape(in [][]int) ([]int, error) { return []int{}, nil }

// Axes are the axes counted (nil: all of them).
func (o CountOp) Axes() []int { return o.axes }

func (o CountOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

// normAxes checks and normalises axis arguments (negative counts from the
// end); nil means every axis.
func normAxes(ndim int, axes []int) ([]int, error) {
	if axes == nil {
		return nil, nil
	}
	out := make([]int, 0, len(axes))
	for _, a := range axes {
		b := a
		if b < 0 {
			b += ndim
		}
		if b < 0 || b >= ndim {
			return nil, fmt.Errorf("axis %d is out of range for a %d-d variable", a, ndim)
		}
		if slices.Contains(out, b) {
			return nil, fmt.Errorf("axis %d repeated", a)
		}
		out = append(out, b)
	}
	slices.Sort(out)
	return out, nil
}

func reduce(k ReduceKind, x *Variable, axes []int, keepdims bool, dt *nd.DType) (*Variable, error) {
	ax, err := normAxes(x.ndim, axes)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", reduceNames[k], err)
	}
	out := x.dtype
	switch {
	case dt != nil:
		out = *dt
	case (k == ReduceSum || k == ReduceProd) && !x.dtype.IsFloat():
		out = nd.Int64
	case k == ReduceMean && !x.dtype.IsFloat():
		out = nd.Float64
	}
	return tryApply(ReduceOp{kind: k, axes: ax, keepdims: keepdims, dtype: out}, x)
}

// Sum, Mean, Max, Min and Prod reduce x over axes (nil: all axes). dtype,
// when not nil, is the accumulation and result type (Theano's dtype=).
func Sum(x *Variable, axes []int, keepdims bool, dtype *nd.DType) (*Variable, error) {
	return reduce(ReduceSum, x, axes, keepdims, dtype)
}
func Mean(x *Variable, axes []int, keepdims bool, dtype *nd.DType) (*Variable, error) {
	return reduce(ReduceMean, x, axes, keepdims, dtype)
}
func Max(x *Variable, axes []int, keepdims bool) (*Variable, error) {
	return reduce(ReduceMax, x, axes, keepdims, nil)
}
func Min(x *Variable, axes []int, keepdims bool) (*Variable, error) {
	return reduce(ReduceMin, x, axes, keepdims, nil)
}
func Prod(x *Variable, axes []int, keepdims bool) (*Variable, error) {
	return reduce(ReduceProd, x, axes, keepdims, nil)
}

// SumAll is the sum over every axis (never fails).
func SumAll(x *Variable) *Variable { v, _ := Sum(x, nil, false, nil); return v }

// MeanAll is the mean over every axis (never fails).
func MeanAll(x *Variable) *Variable { v, _ := Mean(x, nil, false, nil); return v }

// ArgOp is argmax/argmin along one axis (or over the flattened input when
// axis < 0 after normalisation is not given: flat).
type ArgOp struct {
	max      bool
	axis     int
	flat     bool
	keepdims bool
}

func (o ArgOp) String() string {
	if o.max {
		return "Argmax"
	}
	return "Argmin"
}
func (o ArgOp) Type(in []*Variable) (nd.DType, int, error) {
	switch {
	case o.keepdims:
		return nd.Int64, in[0].ndim, nil
	case o.flat:
		return nd.Int64, 0, nil
	}
	return nd.Int64, in[0].ndim - 1, nil
}
func (o ArgOp) Shape(in [][]int) ([]int, error) {
	s := in[0]
	if o.flat {
		if nd.Prod(s) == 0 {
			return nil, fmt.Errorf("%s of an empty array", o)
		}
		if o.keepdims {
			k := make([]int, len(s))
			for i := range k {
				k[i] = 1
			}
			return k, nil
		}
		return []int{}, nil
	}
	if s[o.axis] == 0 {
		return nil, fmt.Errorf("%s over an empty axis", o)
	}
	var out []int
	for i, d := range s {
		if i == o.axis {
			if o.keepdims {
				out = append(out, 1)
			}
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// IsMax says whether the op is argmax (else argmin).
func (o ArgOp) IsMax() bool { return o.max }

// Axis is the axis the op runs along, or flat: over the flattened input.
func (o ArgOp) Axis() (axis int, flat bool) { return o.axis, o.flat }

func (o ArgOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

// Argmax is the index of the largest element along axis (nil: over the
// flattened variable); ties go to the first.
func Argmax(x *Variable, axis *int, keepdims bool) (*Variable, error) {
	return arg(true, x, axis, keepdims)
}

// Argmin is Argmax's counterpart.
func Argmin(x *Variable, axis *int, keepdims bool) (*Variable, error) {
	return arg(false, x, axis, keepdims)
}

func arg(isMax bool, x *Variable, axis *int, keepdims bool) (*Variable, error) {
	op := ArgOp{max: isMax, flat: axis == nil, keepdims: keepdims}
	if axis != nil {
		ax, err := normAxes(x.ndim, []int{*axis})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", op, err)
		}
		op.axis = ax[0]
	}
	return tryApply(op, x)
}
