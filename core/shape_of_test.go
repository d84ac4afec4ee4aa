package core_test

import (
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

func TestShapeOf(t *testing.T) {
	x := NewInput("x", nd.Float64, 3)
	s := ShapeOf(x)
	n, err := ShapeI(x, -1)
	if err != nil {
		t.Fatal(err)
	}
	// The number of rows divides a sum, as Blocks' aggregation.mean(y, x.shape[0]) does.
	rows, err := ShapeI(x, 0)
	if err != nil {
		t.Fatal(err)
	}
	perRow := Div(sum1(t, x), Cast(rows, nd.Float64))
	fn, err := Compile([]*Variable{x}, []*Variable{s, n, perRow}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := nd.New(nd.Float64, 2, 3, 4)
	for i := range a.Size() {
		a.SetFlat(i, 1)
	}
	out, err := fn.Call([]*nd.Array{a})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].I64(); len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 4 {
		t.Errorf("shape: got %v, want [2 3 4]", got)
	}
	if got := out[1].I64()[0]; got != 4 {
		t.Errorf("shape[-1]: got %d, want 4", got)
	}
	if got := out[2].Flat(0); got != 12 {
		t.Errorf("sum/rows: got %v, want 12", got)
	}
	if _, err := ShapeI(x, 3); err == nil {
		t.Error("ShapeI(x, 3) of a 3-d x: want an error")
	}
	// No gradient flows through a shape.
	g, err := Grad(sum1(t, Mul(x, Cast(rows, nd.Float64))), []*Variable{x}, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fg, err := Compile([]*Variable{x}, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	gv, err := fg.Call([]*nd.Array{a})
	if err != nil {
		t.Fatal(err)
	}
	if gv[0].Flat(0) != 2 {
		t.Errorf("d sum(x*rows)/dx: got %v, want 2", gv[0].Flat(0))
	}
}

func sum1(t *testing.T, x *Variable) *Variable {
	t.Helper()
	s, err := Sum(x, nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
