package cpu

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// The kernels of the ops that index and permute: dimshuffle, subtensor
// and its gradient (with constant or computed bounds), shape, and the
// fill of a computed shape.

// dimshuffle is core.DimshuffleOp's kernel: the input's axes permuted (a view when they keep their order).
func dimshuffle(op core.Op, out *nd.Array, in []*nd.Array) {
	o := op.(core.DimshuffleOp)
	if o.Ordered() {
		out.Data = in[0].Data
		return
	}
	// Strides of the input axes in output order.
	x := in[0]
	xst := make([]int, len(x.Shape))
	acc := 1
	for i := len(x.Shape) - 1; i >= 0; i-- {
		xst[i] = acc
		acc *= x.Shape[i]
	}
	st := make([]int, len(o.Pattern()))
	for i, p := range o.Pattern() {
		if p >= 0 {
			st[i] = xst[p]
		}
	}
	switch d := out.Data.(type) {
	case []float32:
		permute(d, out.Shape, x.Data.([]float32), st)
	case []float64:
		permute(d, out.Shape, x.Data.([]float64), st)
	case []int64:
		permute(d, out.Shape, x.Data.([]int64), st)
	case []int32:
		permute(d, out.Shape, x.Data.([]int32), st)
	case []uint8:
		permute(d, out.Shape, x.Data.([]uint8), st)
	case []int16:
		permute(d, out.Shape, x.Data.([]int16), st)
	case []uint16:
		permute(d, out.Shape, x.Data.([]uint16), st)
	case []int8:
		permute(d, out.Shape, x.Data.([]int8), st)
	case []bool:
		permute(d, out.Shape, x.Data.([]bool), st)
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}

// permute fills out (C order, shape) from x read with strides st.
func permute[T nd.Numeric | bool](out []T, shape []int, x []T, st []int) {
	if len(out) == 0 {
		return
	}
	n := len(shape)
	if n == 2 {
		r, c := shape[0], shape[1]
		for i := 0; i < r; i++ {
			row := out[i*c : (i+1)*c]
			for j := range row {
				row[j] = x[i*st[0]+j*st[1]]
			}
		}
		return
	}
	idx := make([]int, n)
	for k := range out {
		off := 0
		for d, i := range idx {
			off += i * st[d]
		}
		out[k] = x[off]
		for d := n - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// subtensor is core.SubtensorOp's kernel: basic indexing.
func subtensor(op core.Op, out *nd.Array, in []*nd.Array) {
	rs, _ := op.(core.SubtensorOp).Ranges(in[0].Shape)
	subtensorRanges(rs, out, in)
}

func subtensorRanges(rs [][3]int, out *nd.Array, in []*nd.Array) {
	x := in[0]
	forSubtensor(x.Shape, rs, func(dst, src int) {
		out.SetFlat(dst, x.Flat(src))
	})
}

// forSubtensor calls f with each selected element's output and input flat
// offsets.
func forSubtensor(shape []int, rs [][3]int, f func(dst, src int)) {
	n := len(shape)
	st := make([]int, n)
	acc := 1
	for i := n - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	total := 1
	for _, r := range rs {
		total *= r[2]
	}
	idx := make([]int, n)
	for k := 0; k < total; k++ {
		src := 0
		for d, i := range idx {
			src += (rs[d][0] + i*rs[d][1]) * st[d]
		}
		f(k, src)
		for d := n - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < rs[d][2] {
				break
			}
			idx[d] = 0
		}
	}
}

// subtensorGrad is core.SubtensorGradOp's kernel: gz scattered into zeros.
func subtensorGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	rs, _ := op.(core.SubtensorGradOp).Subtensor().Ranges(out.Shape)
	subtensorGradRanges(rs, out, in)
}

func subtensorGradRanges(rs [][3]int, out *nd.Array, in []*nd.Array) {
	for i, n := 0, out.Size(); i < n; i++ {
		out.SetFlat(i, 0)
	}
	g := in[1]
	forSubtensor(out.Shape, rs, func(dst, src int) {
		out.SetFlat(src, out.Flat(src)+g.Flat(dst))
	})
}

// subtensorShaped is core.SubtensorShapedOp's kernel: the indexing its bounds give for these shapes.
func subtensorShaped(op core.Op, out *nd.Array, in []*nd.Array) {
	c, _ := op.(*core.SubtensorShapedOp).Concrete(shapesOf(in))
	rs, _ := c.Ranges(in[0].Shape)
	subtensorRanges(rs, out, in[:1])
}

// subtensorShapedGrad is core.SubtensorShapedGradOp's kernel.
func subtensorShapedGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	c, _ := op.(*core.SubtensorShapedGradOp).Concrete(shapesOf(in))
	rs, _ := c.Ranges(out.Shape)
	subtensorGradRanges(rs, out, in[:2])
}

// shapeOf is core.ShapeOfOp's kernel: the input's shape.
func shapeOf(op core.Op, out *nd.Array, in []*nd.Array) {
	o := out.I64()
	for i, d := range in[0].Shape {
		o[i] = int64(d)
	}
}

// shapeI is core.ShapeIOp's kernel: one of the input's dimensions.
func shapeI(op core.Op, out *nd.Array, in []*nd.Array) {
	out.I64()[0] = int64(in[0].Shape[op.(core.ShapeIOp).Axis()])
}

// allocShaped is core.AllocShapedOp's kernel: the output filled with the op's value.
func allocShaped(op core.Op, out *nd.Array, in []*nd.Array) {
	v := op.(*core.AllocShapedOp).Value()
	for i, n := 0, out.Size(); i < n; i++ {
		out.SetFlat(i, v)
	}
}

func shapesOf(in []*nd.Array) [][]int {
	s := make([][]int, len(in))
	for i, a := range in {
		s[i] = a.Shape
	}
	return s
}
