package core_test

import (
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// The elementwise kernels and sum_to's column sums, split across the
// workers on large tensors (kernels.BinSplit, UnarySplit and ColSumSplit
// running elemwise.go's loops), allocate nothing per call, in float32 and
// float64.
func TestSplitElemwiseAllocatesNothing(t *testing.T) {
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		x := NewShared(nd.New(dt, 512, 256), "x")
		b := NewShared(nd.New(dt, 256), "b")
		for i := range 512 * 256 {
			x.Value().SetFlat(i, float64(i%97)/97-0.5)
		}
		y := Tanh(Add(x, b))
		cost, err := Sum(Mul(y, x), nil, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Grad(cost, []*Variable{b}, GradOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := Compile(nil, []*Variable{y, g[0]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := f.CallView(nil); err != nil {
				t.Fatal(err)
			}
		}
		if n := testing.AllocsPerRun(5, func() {
			if _, err := f.CallView(nil); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", dt, n)
		}
	}
}
