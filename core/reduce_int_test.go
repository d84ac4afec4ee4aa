package core_test

import (
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// TestReduceSmallIntegers: max, min and prod of int16 and uint16 arrays
// (numpy keeps their dtype) are computed, over all axes and along one;
// they used to come back as zeros.
func TestReduceSmallIntegers(t *testing.T) {
	for _, dt := range []nd.DType{nd.Int16, nd.Uint16, nd.Uint8, nd.Int32} {
		a := nd.New(dt, 2, 3)
		for i, v := range []float64{3, 1, 2, 7, 5, 4} {
			a.SetFlat(i, v)
		}
		for _, c := range []struct {
			name string
			f    func(x *Variable) (*Variable, error)
			want []float64
		}{
			{"max", func(x *Variable) (*Variable, error) { return Max(x, nil, false) }, []float64{7}},
			{"min", func(x *Variable) (*Variable, error) { return Min(x, nil, false) }, []float64{1}},
			{"max axis 1", func(x *Variable) (*Variable, error) { return Max(x, []int{1}, false) }, []float64{3, 7}},
			{"min axis 0", func(x *Variable) (*Variable, error) { return Min(x, []int{0}, false) }, []float64{3, 1, 2}},
			{"prod axis 1", func(x *Variable) (*Variable, error) { return Prod(x, []int{1}, false) }, []float64{6, 140}},
		} {
			x := NewConstant(a)
			v, err := c.f(x)
			if err != nil {
				t.Fatalf("%s %s: %v", dt, c.name, err)
			}
			got := eval(t, v, nil, nil)
			for i, w := range c.want {
				if got.Flat(i) != w {
					t.Errorf("%s %s: %v, want %v", dt, c.name, got, c.want)
					break
				}
			}
		}
	}
}
