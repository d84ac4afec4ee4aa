package cpu

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// The kernels of numpy's array functions: roll, repeat, cumsum, arange.

// roll is core.RollOp's kernel: numpy.roll along one axis.
func roll(op core.Op, out *nd.Array, in []*nd.Array) {
	shift, axis := op.(core.RollOp).Shift()
	x := in[0]
	n := x.Shape[axis]
	if n == 0 {
		return
	}
	outer := nd.Prod(x.Shape[:axis])
	inner := nd.Prod(x.Shape[axis+1:])
	s := ((shift % n) + n) % n
	for b := 0; b < outer; b++ {
		for i := 0; i < n; i++ {
			j := (i + s) % n
			copyInto(part(out, (b*n+j)*inner, []int{inner}), part(x, (b*n+i)*inner, []int{inner}))
		}
	}
}

// repeatN is core.RepeatNOp's kernel: numpy.repeat.
func repeatN(op core.Op, out *nd.Array, in []*nd.Array) {
	rn, axis := op.(core.RepeatNOp).Repeats()
	x := in[0]
	d := x.Shape[axis]
	outer := nd.Prod(x.Shape[:axis])
	inner := nd.Prod(x.Shape[axis+1:])
	for b := 0; b < outer; b++ {
		for i := 0; i < d; i++ {
			src := part(x, (b*d+i)*inner, []int{inner})
			for k := 0; k < rn; k++ {
				copyInto(part(out, ((b*d+i)*rn+k)*inner, []int{inner}), src)
			}
		}
	}
}

// repeatNGrad is core.RepeatNGradOp's kernel: each run of n entries summed.
func repeatNGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	rn, axis := op.(core.RepeatNGradOp).Repeats()
	g := in[0]
	d := out.Shape[axis]
	outer := nd.Prod(out.Shape[:axis])
	inner := nd.Prod(out.Shape[axis+1:])
	for b := 0; b < outer; b++ {
		for i := 0; i < d; i++ {
			for j := 0; j < inner; j++ {
				var s float64
				for k := 0; k < rn; k++ {
					s += g.Flat(((b*d+i)*rn+k)*inner + j)
				}
				out.SetFlat((b*d+i)*inner+j, s)
			}
		}
	}
}

// cumSum is core.CumSumOp's kernel: the running sum in float64.
func cumSum(op core.Op, out *nd.Array, in []*nd.Array) {
	axis, reverse := op.(core.CumSumOp).Axis()
	x := in[0]
	d := x.Shape[axis]
	outer := nd.Prod(x.Shape[:axis])
	inner := nd.Prod(x.Shape[axis+1:])
	for b := 0; b < outer; b++ {
		for j := 0; j < inner; j++ {
			var s float64
			for k := 0; k < d; k++ {
				i := k
				if reverse {
					i = d - 1 - k
				}
				p := (b*d+i)*inner + j
				s += x.Flat(p)
				out.SetFlat(p, s)
			}
		}
	}
}

// arange is core.ArangeOp's kernel: start + i·step.
func arange(op core.Op, out *nd.Array, in []*nd.Array) {
	shapes := make([][]int, len(in))
	for i, a := range in {
		shapes[i] = a.Shape
	}
	b, _ := op.(*core.ArangeOp).Bounds(shapes)
	for i, n := 0, out.Size(); i < n; i++ {
		out.SetFlat(i, b[0]+float64(i)*b[2])
	}
}
