package core_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// regionFunction compiles a convolution with biases, ReLU and a pooling
// (o) and the gradients of a squared sum with respect to the images, the
// filters and the biases: every parallel region of core/exec/cpu/kernels/conv.go and
// pool.go runs in a call.
func regionFunction(t *testing.T, dt nd.DType, o PoolOptions) *Function {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	x := NewShared(randArray(r, -1, 1, 37, 3, 12, 11).Astype(dt), "x")
	w := NewShared(randArray(r, -1, 1, 6, 3, 3, 3).Astype(dt), "w")
	b := NewShared(randArray(r, -1, 1, 6).Astype(dt), "b")
	y := mustVar(Pool2d(Relu(mustVar(Conv2dBias(x, w, b, Conv2dOptions{}))), o))
	g, err := Grad(SumAll(Sqr(y)), []*Variable{x, w, b}, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Compile(nil, append([]*Variable{y}, g...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// regionPools are LeNet's 2×2 max pooling (the float32 fast path) and
// poolings through the general windows.
var regionPools = []PoolOptions{
	{Size: [2]int{2, 2}, IgnoreBorder: true, Mode: PoolMax},
	{Size: [2]int{3, 2}, Step: [2]int{2, 1}, Mode: PoolMax},
	{Size: [2]int{3, 3}, Step: [2]int{1, 2}, Pad: [2]int{2, 1}, IgnoreBorder: true, Mode: PoolAverageInc},
}

// TestConvPoolRegionsDoNotAllocate: after the first call, the
// convolutions' and poolings' parallel regions allocate nothing (their
// jobs and windows are kept in the ops' workspaces; a LeNet step
// allocated 83 times when each region started goroutines with closures).
func TestConvPoolRegionsDoNotAllocate(t *testing.T) {
	if kernels.BLASName != "OpenBLAS" {
		t.Skipf("the pure-Go build multiplies with %s, whose parallel products allocate; the regions allocate nothing in the cgo build", kernels.BLASName)
	}
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		for k, o := range regionPools {
			f := regionFunction(t, dt, o)
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
				t.Errorf("%s, pooling %d: %v allocations per call, want 0", dt, k, n)
			}
		}
	}
}

// TestConvPoolRegionsSerialBits: the regions' results are the same bits
// whether their chunks run on the workers or one after the other on the
// caller (kernels.SetSerial), and from call to call.
func TestConvPoolRegionsSerialBits(t *testing.T) {
	defer kernels.SetSerial(kernels.SetSerial(false))
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		for k, o := range regionPools {
			f := regionFunction(t, dt, o)
			var runs [][]*nd.Array
			for _, serial := range []bool{false, true, false} {
				kernels.SetSerial(serial)
				out, err := f.Call(nil)
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, out)
			}
			for r := 1; r < len(runs); r++ {
				for i, a := range runs[r] {
					name := fmt.Sprintf("%s, pooling %d, output %d, run %d", dt, k, i, r)
					if !slices.Equal(a.Shape, runs[0][i].Shape) {
						t.Fatalf("%s: shape %v, want %v", name, a.Shape, runs[0][i].Shape)
					}
					for e := range a.Size() {
						if got, want := a.Flat(e), runs[0][i].Flat(e); got != want {
							t.Fatalf("%s: entry %d is %v, want %v", name, e, got, want)
						}
					}
				}
			}
		}
	}
}
