package cpu

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// The convolutions' kernels: im2col and matrix products
// (kernels.ConvForward, ...), each node with a workspace of its own for
// the unfolded images.

// convKernel is a convolution node's kernel: its op and its workspace.
type convKernel struct {
	op core.Op
	ws *kernels.Workspace
}

func (k convKernel) String() string { return k.op.String() }

func newConvKernel(op core.Op) kernel { return convKernel{op, kernels.NewWorkspace()} }

func (k convKernel) Run(out *nd.Array, in []*nd.Array) {
	switch o := k.op.(type) {
	case core.Conv2DOp:
		g, _ := o.Geom(in[0].Shape, in[1].Shape)
		conv2d(k.ws, k.op, kernels.ConvGeom(g), out, in)
	case core.Conv2DGradInputOp:
		var shapes [3][]int // no allocation per call
		for i, a := range in[:min(len(in), 3)] {
			shapes[i] = a.Shape
		}
		g, _ := o.GeomOf(shapes[:len(in)])
		switch gx := out.Data.(type) {
		case []float32:
			kernels.ConvBackwardInput(k.ws, kernels.ConvGeom(g), gx, in[0].F32(), in[1].F32())
		case []float64:
			kernels.ConvBackwardInput(k.ws, kernels.ConvGeom(g), gx, in[0].F64(), in[1].F64())
		default:
			panic(core.Unsupported(k.op, out.DType()))
		}
	case core.Conv2DGradWeightsOp:
		var shapes [3][]int
		for i, a := range in[:3] {
			shapes[i] = a.Shape
		}
		g, _ := o.GeomOf(shapes[:])
		switch gw := out.Data.(type) {
		case []float32:
			kernels.ConvBackwardWeights(k.ws, kernels.ConvGeom(g), gw, in[0].F32(), in[1].F32())
		case []float64:
			kernels.ConvBackwardWeights(k.ws, kernels.ConvGeom(g), gw, in[0].F64(), in[1].F64())
		default:
			panic(core.Unsupported(k.op, out.DType()))
		}
	default:
		panic("cpu: " + k.op.String() + " is not a convolution")
	}
}

// conv2d is core.Conv2DOp's kernel: images, filters and optional biases
// (one per filter, added on the way).
func conv2d(ws *kernels.Workspace, op core.Op, g kernels.ConvGeom, out *nd.Array, in []*nd.Array) {
	switch y := out.Data.(type) {
	case []float32:
		var b []float32
		if len(in) > 2 {
			b = in[2].F32()
		}
		kernels.ConvForward(ws, g, y, in[0].F32(), in[1].F32(), b)
	case []float64:
		var b []float64
		if len(in) > 2 {
			b = in[2].F64()
		}
		kernels.ConvForward(ws, g, y, in[0].F64(), in[1].F64(), b)
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}

// mapSum is core.MapSumOp's kernel: the sum of a 4-d (n, f, h, w) tensor
// over all axes but f, each map's plane summed first (vec.Sum32 for
// float32), the planes added in float64.
func mapSum(op core.Op, out *nd.Array, in []*nd.Array) {
	s := in[0].Shape
	for f := 0; f < s[1]; f++ {
		acc := 0.0
		for n := 0; n < s[0]; n++ {
			base := (n*s[1] + f) * s[2] * s[3]
			switch x := in[0].Data.(type) {
			case []float32:
				acc += float64(vec.Sum32(x[base : base+s[2]*s[3]]))
			case []float64:
				for _, v := range x[base : base+s[2]*s[3]] {
					acc += v
				}
			default:
				panic(core.Unsupported(op, out.DType()))
			}
		}
		out.SetFlat(f, acc)
	}
}
