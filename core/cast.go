package core

import (
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// castOp converts to another dtype (numpy's astype).
type castOp struct{ to nd.DType }

func (o castOp) String() string { return "Elemwise{Cast{" + o.to.String() + "}}" }
func (o castOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.to, in[0].ndim, nil
}
func (o castOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (o castOp) Run(out *nd.Array, in []*nd.Array) {
	castInto(out, in[0])
}

// castInto converts in into out's dtype (kernels.Cast).
func castInto(out, in *nd.Array) { kernels.Cast(out, in) }

func (o castOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
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
	return apply(castOp{dt}, x)
}

// sumToOp sums its first input down to the shape of its second (undoing a
// broadcast); a view when the shapes agree.
type sumToOp struct{}

func (sumToOp) String() string { return "SumToShape" }
func (sumToOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[1].ndim, nil
}
func (sumToOp) Shape(in [][]int) ([]int, error) { return in[1], nil }
func (sumToOp) IsView(in [][]int, out []int) bool {
	return nd.Prod(in[0]) == nd.Prod(out)
}
func (sumToOp) Run(out *nd.Array, in []*nd.Array) {
	g := in[0]
	if g.Size() == out.Size() {
		out.Data = g.Data
		return
	}
	switch o := out.Data.(type) {
	case []float32:
		sumToKernel(o, out.Shape, g.Data.([]float32), g.Shape)
	case []float64:
		sumToKernel(o, out.Shape, g.Data.([]float64), g.Shape)
	default:
		panic(Unsupported(sumToOp{}, out.DType()))
	}
}

func sumToKernel[T float](out []T, oshape []int, g []T, gshape []int) {
	// A row vector summed over every leading axis (a bias's gradient, 2-d
	// or, after a 3-d product, 3-d): the columns' sums over the rows in
	// order, as the walk below does, on the vectorized split.
	if k := len(gshape); k >= 2 && len(oshape) > 0 && len(out) == gshape[k-1] && oshape[len(oshape)-1] == gshape[k-1] &&
		kernels.ColSumSplit(out, g, nd.Prod(gshape[:k-1]), gshape[k-1]) {
		return
	}
	clear(out)
	forBroadcast(gshape, [][]int{oshape}, func(o int, offs, st rowOffsets, inner int) {
		d := out[offs[0]:]
		if st[0] == 0 {
			var s T
			for _, v := range g[o : o+inner] {
				s += v
			}
			d[0] += s
			return
		}
		for i, v := range g[o : o+inner] {
			d[i] += v
		}
	})
}

func (sumToOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{broadcastLike(gz, in[0]), nil}
}

// sumTo sums g to x's shape when x has fewer dimensions or was broadcast.
func sumTo(g, x *Variable) *Variable {
	if g.dtype != x.dtype {
		g = Cast(g, x.dtype)
	}
	return apply(sumToOp{}, g, x)
}

// broadcastLikeOp broadcasts its first input to the shape of its second.
type broadcastLikeOp struct{}

func (broadcastLikeOp) String() string { return "BroadcastToShape" }
func (broadcastLikeOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[1].ndim, nil
}
func (broadcastLikeOp) Shape(in [][]int) ([]int, error) { return in[1], nil }
func (broadcastLikeOp) Run(out *nd.Array, in []*nd.Array) {
	switch o := out.Data.(type) {
	case []float32:
		broadcastKernel(o, out.Shape, in[0].Data.([]float32), in[0].Shape)
	case []float64:
		broadcastKernel(o, out.Shape, in[0].Data.([]float64), in[0].Shape)
	default:
		panic(Unsupported(broadcastLikeOp{}, out.DType()))
	}
}

func broadcastKernel[T float](out []T, oshape []int, x []T, xshape []int) {
	forBroadcast(oshape, [][]int{xshape}, func(o int, offs, st rowOffsets, inner int) {
		for i := range out[o : o+inner] {
			out[o+i] = x[offs[0]+i*st[0]]
		}
	})
}

func (broadcastLikeOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{sumTo(gz, in[0]), nil}
}

func broadcastLike(g, x *Variable) *Variable { return apply(broadcastLikeOp{}, g, x) }
