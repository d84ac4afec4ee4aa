package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// maxoutOp pools the last axis in groups of k consecutive entries (Blocks'
// Maxout: reshape the last axis d to (d/k, k) and take the maximum over
// the pieces).
type maxoutOp struct{ k int }

func (o maxoutOp) String() string { return fmt.Sprintf("Maxout{%d}", o.k) }
func (o maxoutOp) Type(in []*Variable) (nd.DType, int, error) {
	if in[0].ndim < 1 || !in[0].dtype.IsFloat() {
		return 0, 0, fmt.Errorf("maxout needs a float variable with at least one axis, got %s", in[0].TypeString())
	}
	return in[0].dtype, in[0].ndim, nil
}
func (o maxoutOp) Shape(in [][]int) ([]int, error) {
	s := append([]int(nil), in[0]...)
	d := s[len(s)-1]
	if d%o.k != 0 {
		return nil, fmt.Errorf("maxout: the last axis (%d, shape %s) is not a multiple of num_pieces=%d", d, nd.ShapeString(in[0]), o.k)
	}
	s[len(s)-1] = d / o.k
	return s, nil
}
func (o maxoutOp) Run(out *nd.Array, in []*nd.Array) {
	switch y := out.Data.(type) {
	case []float32:
		maxoutKernel(o.k, y, in[0].F32())
	case []float64:
		maxoutKernel(o.k, y, in[0].F64())
	default:
		panic(Unsupported(o, out.DType()))
	}
}

func maxoutKernel[T float](k int, y, x []T) {
	for i := range y {
		m := x[i*k]
		for _, v := range x[i*k+1 : (i+1)*k] {
			if v > m {
				m = v
			}
		}
		y[i] = m
	}
}

func (o maxoutOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(maxoutGradOp(o), in[0], out, gz)}
}

// maxoutGradOp routes gz to every piece equal to its group's maximum (as
// the gradient of Theano's max).
type maxoutGradOp struct{ k int }

func (o maxoutGradOp) String() string { return fmt.Sprintf("MaxoutGrad{%d}", o.k) }
func (o maxoutGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o maxoutGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (o maxoutGradOp) Run(out *nd.Array, in []*nd.Array) {
	switch gx := out.Data.(type) {
	case []float32:
		maxoutGradKernel(o.k, gx, in[0].F32(), in[1].F32(), in[2].F32())
	case []float64:
		maxoutGradKernel(o.k, gx, in[0].F64(), in[1].F64(), in[2].F64())
	default:
		panic(Unsupported(o, out.DType()))
	}
}

func maxoutGradKernel[T float](k int, gx, x, y, gz []T) {
	for i, m := range y {
		for p := i * k; p < (i+1)*k; p++ {
			if x[p] == m {
				gx[p] = gz[i]
			} else {
				gx[p] = 0
			}
		}
	}
}

func (o maxoutGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, nil, nil}
}

// Maxout is Blocks' Maxout application: the maximum over groups of
// numPieces consecutive entries of the last axis.
func Maxout(x *Variable, numPieces int) (*Variable, error) {
	if numPieces < 1 {
		return nil, fmt.Errorf("maxout: num_pieces must be positive, got %d", numPieces)
	}
	return tryApply(maxoutOp{numPieces}, x)
}
