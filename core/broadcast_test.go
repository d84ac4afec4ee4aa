package core_test

import (
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// maxFastDims is the most dimensions the CPU backend's broadcasting
// handles without allocating (core/exec/cpu: maxFastDims).
const maxFastDims = 8

// Broadcasting gives numpy's result for tensors of many dimensions, on the
// allocation-free path (up to maxFastDims) and beyond it.
func TestBroadcastAddManyDimensions(t *testing.T) {
	for _, ndim := range []int{2, 3, maxFastDims, maxFastDims + 1} {
		shape := make([]int, ndim)
		for i := range shape {
			shape[i] = 1
		}
		shape[0] = 2
		shape[ndim-1] = 3
		bshape := make([]int, ndim)
		copy(bshape, shape)
		bshape[0] = 1 // b broadcasts along the first axis
		a := nd.New(nd.Float64, shape...)
		b := nd.New(nd.Float64, bshape...)
		for i := range a.Size() {
			a.SetFlat(i, float64(10*i))
		}
		for i := range b.Size() {
			b.SetFlat(i, float64(i))
		}
		x := NewInput("a", nd.Float64, ndim)
		y := NewInput("b", nd.Float64, ndim)
		f, err := Compile([]*Variable{x, y}, []*Variable{Add(x, y)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := f.Call([]*nd.Array{a, b})
		if err != nil {
			t.Fatal(err)
		}
		// numpy: out[i, ..., j] = a[i, ..., j] + b[0, ..., j].
		for i := range 2 {
			for j := range 3 {
				want := float64(10*(3*i+j) + j)
				if got := out[0].Flat(3*i + j); got != want {
					t.Errorf("%d-d: out[%d,...,%d] = %v, want %v", ndim, i, j, got, want)
				}
			}
		}
	}
}
