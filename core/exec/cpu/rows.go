package cpu

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// The kernels of the ops that move rows and blocks: join, take and its
// gradient, repeat, slices of the last axis.

// concat is core.ConcatOp's kernel: the inputs' blocks, one after the
// other along the axis.
func concat(op core.Op, out *nd.Array, in []*nd.Array) {
	axis := op.(core.ConcatOp).Axis()
	outer := nd.Prod(out.Shape[:axis])
	inner := nd.Prod(out.Shape[axis+1:])
	rowOut := out.Shape[axis] * inner
	off := 0
	for _, x := range in {
		n := x.Shape[axis] * inner
		for b := 0; b < outer; b++ {
			dst := part(out, b*rowOut+off, []int{n})
			src := part(x, b*n, []int{n})
			copyInto(dst, src)
		}
		off += n
	}
}

// concatGrad is core.ConcatGradOp's kernel: input k's block of gz.
func concatGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	axis, k := op.(core.ConcatGradOp).Axis()
	gz, xs := in[0], in[1:]
	outer := nd.Prod(gz.Shape[:axis])
	inner := nd.Prod(gz.Shape[axis+1:])
	row := gz.Shape[axis] * inner
	off := 0
	for _, x := range xs[:k] {
		off += x.Shape[axis] * inner
	}
	n := xs[k].Shape[axis] * inner
	for b := 0; b < outer; b++ {
		copyInto(part(out, b*n, []int{n}), part(gz, b*row+off, []int{n}))
	}
}

// take is core.TakeOp's kernel: W's rows at the indices.
func take(op core.Op, out *nd.Array, in []*nd.Array) {
	w, idx := in[0], in[1]
	row := nd.Prod(w.Shape[1:])
	if kernels.TakeRows(out, w, idx, row, false) {
		return
	}
	for i, m := 0, idx.Size(); i < m; i++ {
		j := int(idx.Flat(i))
		copyInto(part(out, i*row, []int{row}), part(w, j*row, []int{row}))
	}
}

// takeGrad is core.TakeGradOp's kernel: gz's rows summed into zeros at
// the indices.
func takeGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	idx, gz := in[1], in[2]
	zero(out)
	row := nd.Prod(out.Shape[1:])
	if kernels.TakeRows(gz, out, idx, row, true) {
		return
	}
	for i, m := 0, idx.Size(); i < m; i++ {
		j := int(idx.Flat(i))
		addInto(part(out, j*row, []int{row}), part(gz, i*row, []int{row}))
	}
}

// repeat is core.RepeatOp's kernel: copies of x, one after the other.
func repeat(op core.Op, out *nd.Array, in []*nd.Array) {
	n := in[0].Size()
	if kernels.RepeatRows(out, in[0]) {
		return
	}
	for b := 0; b < out.Shape[0]; b++ {
		copyInto(part(out, b*n, in[0].Shape), in[0])
	}
}

// sliceLast is core.SliceLastOp's kernel: x[..., start:stop].
func sliceLast(op core.Op, out *nd.Array, in []*nd.Array) {
	start, stop := op.(core.SliceLastOp).Bounds()
	x := in[0]
	m := x.Shape[len(x.Shape)-1]
	n := stop - start
	rows := nd.Prod(x.Shape[:len(x.Shape)-1])
	if sliceRows(out.Data, 0, n, x.Data, start, m, rows, n) {
		return
	}
	for r := 0; r < rows; r++ {
		copyInto(part(out, r*n, []int{n}), part(x, r*m+start, []int{n}))
	}
}

// sliceLastGrad is core.SliceLastGradOp's kernel: gz placed in zeros
// shaped like x.
func sliceLastGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	start, stop := op.(core.SliceLastGradOp).Bounds()
	zero(out)
	m := out.Shape[len(out.Shape)-1]
	n := stop - start
	rows := nd.Prod(out.Shape[:len(out.Shape)-1])
	if sliceRows(out.Data, start, m, in[1].Data, 0, n, rows, n) {
		return
	}
	for r := 0; r < rows; r++ {
		copyInto(part(out, r*m+start, []int{n}), part(in[1], r*n, []int{n}))
	}
}
