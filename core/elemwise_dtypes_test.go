package core_test

import (
	"fmt"
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// Elementwise ops on bool, int16 and uint16 data (which the kernels do not
// run on directly) give numpy's results; they used to give zeros.
func TestElementwiseOnBoolAndSmallInts(t *testing.T) {
	x := NewInput("x", nd.Bool, 1)
	y := NewInput("y", nd.Bool, 1)
	all, err := Min(NEQ(x, y), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Compile([]*Variable{x, y}, []*Variable{NEQ(x, y), EQ(x, y), Maximum(x, y), Mul(x, y), all}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Call([]*nd.Array{nd.FromSlice([]bool{true, false, true}, 3), nd.FromSlice([]bool{false, true, true}, 3)})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"[1 1 0]", "[0 0 1]", "[true true true]", "[false false true]", "[0]"} {
		if got := fmt.Sprint(out[i].Data); got != want {
			t.Errorf("output %d: %s (%s), want %s", i, got, out[i].DType(), want)
		}
	}
	for _, dt := range []nd.DType{nd.Int16, nd.Uint16} {
		a := NewInput("a", dt, 1)
		b := NewInput("b", dt, 1)
		g, err := Compile([]*Variable{a, b}, []*Variable{Add(a, b), LT(a, b), Maximum(a, b)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		av, bv := nd.New(dt, 3), nd.New(dt, 3)
		for i, v := range []float64{1, 7, 200} {
			av.SetFlat(i, v)
			bv.SetFlat(i, 3-float64(i))
		}
		out, err := g.Call([]*nd.Array{av, bv})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(out[0].Data); out[0].DType() != dt || got != "[4 9 201]" {
			t.Errorf("%s add: %s %s", dt, out[0].DType(), got)
		}
		if got := fmt.Sprint(out[1].Data); got != "[1 0 0]" {
			t.Errorf("%s lt: %s", dt, got)
		}
		if got := fmt.Sprint(out[2].Data); out[2].DType() != dt || got != "[3 7 200]" {
			t.Errorf("%s maximum: %s %s", dt, out[2].DType(), got)
		}
	}
}
