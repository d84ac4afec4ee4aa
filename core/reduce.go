package core

import (
	"fmt"
	"slices"
	"sync"

	"github.com/blocks-go/blocks/nd"
)

type reduceKind int

const (
	rSum reduceKind = iota
	rMean
	rMax
	rMin
	rProd
)

var reduceNames = [...]string{"Sum", "Mean", "Max", "Min", "Prod"}

// reduceOp reduces over axes (nil: all of them).
type reduceOp struct {
	kind     reduceKind
	axes     []int // sorted, non-negative
	keepdims bool
	dtype    nd.DType
}

func (o reduceOp) String() string {
	if o.axes == nil {
		return reduceNames[o.kind] + "{acc_dtype=" + o.dtype.String() + "}"
	}
	return fmt.Sprintf("%s{axis=%v}", reduceNames[o.kind], o.axes)
}

func (o reduceOp) reduced(i int) bool { return o.axes == nil || slices.Contains(o.axes, i) }

func (o reduceOp) Type(in []*Variable) (nd.DType, int, error) {
	if o.keepdims {
		return o.dtype, in[0].ndim, nil
	}
	if o.axes == nil {
		return o.dtype, 0, nil
	}
	return o.dtype, in[0].ndim - len(o.axes), nil
}

// keptShape is the output shape with reduced axes kept as 1.
func (o reduceOp) keptShape(s []int) []int {
	k := make([]int, len(s))
	for i, d := range s {
		if o.reduced(i) {
			d = 1
		}
		k[i] = d
	}
	return k
}

func (o reduceOp) Shape(in [][]int) ([]int, error) {
	s := in[0]
	if o.kind == rMax || o.kind == rMin {
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

func (o reduceOp) Run(out *nd.Array, in []*nd.Array) {
	x := in[0]
	if x.DType() != o.dtype {
		x = x.Astype(o.dtype) // integer sums: rare, small
	}
	kept := o.keptShape(x.Shape)
	count := nd.Prod(x.Shape) / max(1, nd.Prod(kept))
	switch d := out.Data.(type) {
	case []float32:
		reduceKernel(o.kind, d, kept, x.Data.([]float32), x.Shape, count)
	case []float64:
		reduceKernel(o.kind, d, kept, x.Data.([]float64), x.Shape, count)
	case []int64:
		reduceKernel(o.kind, d, kept, x.Data.([]int64), x.Shape, count)
	case []int32:
		reduceKernel(o.kind, d, kept, x.Data.([]int32), x.Shape, count)
	case []uint8:
		reduceKernel(o.kind, d, kept, x.Data.([]uint8), x.Shape, count)
	case []int16:
		reduceKernel(o.kind, d, kept, x.Data.([]int16), x.Shape, count)
	case []uint16:
		reduceKernel(o.kind, d, kept, x.Data.([]uint16), x.Shape, count)
	case []int8:
		reduceKernel(o.kind, d, kept, x.Data.([]int8), x.Shape, count)
	default:
		panic(Unsupported(o, out.DType()))
	}
}

// accPool holds the float64 accumulators of sums with more than 16
// results, so that a training step allocates none.
var accPool = sync.Pool{New: func() any { return new([]float64) }}

func reduceKernel[T nd.Numeric](k reduceKind, out []T, kept []int, x []T, xshape []int, count int) {
	switch k {
	case rSum, rMean:
		// Accumulate in float64 for accuracy; the partition is fixed, so
		// results are the same from run to run.
		var small [16]float64 // no allocation for small results (a mean cost)
		acc := small[:0]
		if len(out) <= len(small) {
			acc = small[:len(out)]
		} else {
			// larger ones (an initial state's gradient) borrow a buffer
			p := accPool.Get().(*[]float64)
			defer accPool.Put(p)
			if cap(*p) < len(out) {
				*p = make([]float64, len(out))
			}
			acc = (*p)[:len(out)]
			clear(acc)
		}
		forBroadcast(xshape, [][]int{kept}, func(o int, offs, st rowOffsets, inner int) {
			row := x[o : o+inner]
			if st[0] == 0 {
				s := 0.0
				for _, v := range row {
					s += float64(v)
				}
				acc[offs[0]] += s
				return
			}
			a := acc[offs[0] : offs[0]+inner]
			for i, v := range row {
				a[i] += float64(v)
			}
		})
		for i, s := range acc {
			if k == rMean {
				s /= float64(count)
			}
			out[i] = T(s)
		}
	case rProd:
		for i := range out {
			out[i] = 1
		}
		forBroadcast(xshape, [][]int{kept}, func(o int, offs, st rowOffsets, inner int) {
			for i, v := range x[o : o+inner] {
				out[offs[0]+i*st[0]] *= v
			}
		})
	case rMax, rMin:
		seen := make([]bool, len(out))
		forBroadcast(xshape, [][]int{kept}, func(o int, offs, st rowOffsets, inner int) {
			for i, v := range x[o : o+inner] {
				j := offs[0] + i*st[0]
				if !seen[j] || (k == rMax && v > out[j]) || (k == rMin && v < out[j]) || v != v {
					if seen[j] && out[j] != out[j] {
						continue // NaN propagates
					}
					out[j], seen[j] = v, true
				}
			}
		})
	}
}

func (o reduceOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	x := in[0]
	if !x.dtype.IsFloat() {
		return []*Variable{nil}
	}
	keep := gz
	if !o.keepdims && o.axes != nil {
		keep = apply(expandOp{o.axes}, gz)
	}
	g := broadcastLike(Cast(keep, x.dtype), x)
	switch o.kind {
	case rMean:
		g = Div(g, apply(countOp{o.axes}, x))
	case rMax, rMin:
		outKeep := out
		if !o.keepdims && o.axes != nil {
			outKeep = apply(expandOp{o.axes}, out)
		}
		g = Mul(g, Cast(EQ(x, outKeep), x.dtype))
	case rProd:
		outKeep := out
		if !o.keepdims && o.axes != nil {
			outKeep = apply(expandOp{o.axes}, out)
		}
		g = Mul(g, Div(outKeep, x))
	}
	return []*Variable{g}
}

// expandOp inserts size-1 axes at the given (output) positions: the inverse
// of a reduction without keepdims. A view.
type expandOp struct{ axes []int }

func (o expandOp) String() string { return fmt.Sprintf("ExpandDims{%v}", o.axes) }
func (o expandOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim + len(o.axes), nil
}
func (o expandOp) Shape(in [][]int) ([]int, error) {
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
func (expandOp) IsView(in [][]int, out []int) bool { return true }
func (expandOp) Run(out *nd.Array, in []*nd.Array) { out.Data = in[0].Data }
func (o expandOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(reshapeLikeOp{}, gz, in[0])}
}

// countOp is the number of elements a reduction over axes combines, as a
// 0-d value of the input's dtype.
type countOp struct{ axes []int }

func (o countOp) String() string { return "Count" }
func (o countOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 0, nil
}
func (o countOp) Shape(in [][]int) ([]int, error) { return []int{}, nil }
func (o countOp) Run(out *nd.Array, in []*nd.Array) {
	n := 1
	for i, d := range in[0].Shape {
		if o.axes == nil || slices.Contains(o.axes, i) {
			n *= d
		}
	}
	out.SetFlat(0, float64(n))
}
func (o countOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

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

func reduce(k reduceKind, x *Variable, axes []int, keepdims bool, dt *nd.DType) (*Variable, error) {
	ax, err := normAxes(x.ndim, axes)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", reduceNames[k], err)
	}
	out := x.dtype
	switch {
	case dt != nil:
		out = *dt
	case (k == rSum || k == rProd) && !x.dtype.IsFloat():
		out = nd.Int64
	case k == rMean && !x.dtype.IsFloat():
		out = nd.Float64
	}
	return tryApply(reduceOp{kind: k, axes: ax, keepdims: keepdims, dtype: out}, x)
}

// Sum, Mean, Max, Min and Prod reduce x over axes (nil: all axes). dtype,
// when not nil, is the accumulation and result type (Theano's dtype=).
func Sum(x *Variable, axes []int, keepdims bool, dtype *nd.DType) (*Variable, error) {
	return reduce(rSum, x, axes, keepdims, dtype)
}
func Mean(x *Variable, axes []int, keepdims bool, dtype *nd.DType) (*Variable, error) {
	return reduce(rMean, x, axes, keepdims, dtype)
}
func Max(x *Variable, axes []int, keepdims bool) (*Variable, error) {
	return reduce(rMax, x, axes, keepdims, nil)
}
func Min(x *Variable, axes []int, keepdims bool) (*Variable, error) {
	return reduce(rMin, x, axes, keepdims, nil)
}
func Prod(x *Variable, axes []int, keepdims bool) (*Variable, error) {
	return reduce(rProd, x, axes, keepdims, nil)
}

// SumAll is the sum over every axis (never fails).
func SumAll(x *Variable) *Variable { v, _ := Sum(x, nil, false, nil); return v }

// MeanAll is the mean over every axis (never fails).
func MeanAll(x *Variable) *Variable { v, _ := Mean(x, nil, false, nil); return v }

// argOp is argmax/argmin along one axis (or over the flattened input when
// axis < 0 after normalisation is not given: flat).
type argOp struct {
	max      bool
	axis     int
	flat     bool
	keepdims bool
}

func (o argOp) String() string {
	if o.max {
		return "Argmax"
	}
	return "Argmin"
}
func (o argOp) Type(in []*Variable) (nd.DType, int, error) {
	switch {
	case o.keepdims:
		return nd.Int64, in[0].ndim, nil
	case o.flat:
		return nd.Int64, 0, nil
	}
	return nd.Int64, in[0].ndim - 1, nil
}
func (o argOp) Shape(in [][]int) ([]int, error) {
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
func (o argOp) Run(out *nd.Array, in []*nd.Array) {
	x := in[0]
	outer, n, inner := 1, x.Size(), 1
	if !o.flat {
		outer, n, inner = nd.Prod(x.Shape[:o.axis]), x.Shape[o.axis], nd.Prod(x.Shape[o.axis+1:])
	}
	res := out.I64()
	for a := 0; a < outer; a++ {
		for c := 0; c < inner; c++ {
			best, bi := 0.0, 0
			for i := 0; i < n; i++ {
				v := x.Flat((a*n+i)*inner + c)
				if i == 0 || (o.max && v > best) || (!o.max && v < best) {
					best, bi = v, i
				}
			}
			res[a*inner+c] = int64(bi)
		}
	}
}
func (o argOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

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
	op := argOp{max: isMax, flat: axis == nil, keepdims: keepdims}
	if axis != nil {
		ax, err := normAxes(x.ndim, []int{*axis})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", op, err)
		}
		op.axis = ax[0]
	}
	return tryApply(op, x)
}
