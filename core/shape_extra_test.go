package core_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

func TestReshapeLikeGrad(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	// Through Tanh so that the gradient is not a constant.
	checkGrad(t, "reshape_like", func(x []*Variable) *Variable {
		y, err := ReshapeLike(Tanh(x[0]), x[1])
		if err != nil {
			t.Fatal(err)
		}
		return Mul(y, x[1])
	}, randArray(r, -2, 2, 6, 4), randArray(r, -2, 2, 2, 3, 4))
}

func TestExtraDimsGrad(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	// merge (2,3,5,4) -> (30,4), a dot with (4,7), split back like the
	// input: (2,3,5,7).
	checkGrad(t, "merge/split leading", func(x []*Variable) *Variable {
		m, err := MergeLeadingAxes(x[0], 2)
		if err != nil {
			t.Fatal(err)
		}
		if m.NDim() != 2 {
			t.Fatalf("merged ndim %d, want 2", m.NDim())
		}
		y, err := SplitLeadingAxes(Tanh(mustVar(Dot(m, x[1]))), x[0], 2)
		if err != nil {
			t.Fatal(err)
		}
		return y
	}, randArray(r, -1, 1, 2, 3, 5, 4), randArray(r, -1, 1, 4, 7))
}

func TestExtraDimsShapes(t *testing.T) {
	x := NewInput("x", nd.Float64, 4)
	m, err := MergeLeadingAxes(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	s, err := SplitLeadingAxes(mustVar(Sum(m, []int{1}, false, nil)), x, 2)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := Compile([]*Variable{x}, []*Variable{m, s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := nd.New(nd.Float64, 2, 3, 5, 4)
	for i := range a.Size() {
		a.SetFlat(i, float64(i))
	}
	out, err := fn.Call([]*nd.Array{a})
	if err != nil {
		t.Fatal(err)
	}
	if got := nd.ShapeString(out[0].Shape); got != "(30, 4)" {
		t.Errorf("merged shape %s, want (30, 4)", got)
	}
	if got := nd.ShapeString(out[1].Shape); got != "(2, 3, 5)" {
		t.Errorf("split shape %s, want (2, 3, 5)", got)
	}
	// Row k of the merged matrix is input row (k/15, k/5%3, k%5): its sum.
	if got, want := out[1].Flat(7), float64(4*7*4+6); got != want {
		t.Errorf("split[7] = %v, want %v", got, want)
	}
	// Errors: too few dimensions; a first axis that does not divide.
	if _, err := MergeLeadingAxes(x, 4); err == nil {
		t.Error("MergeLeadingAxes(4-d, 4): want an error")
	}
	y := NewInput("y", nd.Float64, 2)
	bad, err := SplitLeadingAxes(y, x, 2)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := Compile([]*Variable{x, y}, []*Variable{bad}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fb.Call([]*nd.Array{a, nd.New(nd.Float64, 7, 2)}); err == nil {
		t.Error("splitting 7 rows into (2, 3, ...): want an error")
	}
	z := NewInput("z", nd.Float64, 2)
	rl, err := ReshapeLike(z, x)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := Compile([]*Variable{x, z}, []*Variable{rl}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fr.Call([]*nd.Array{a, nd.New(nd.Float64, 7, 2)}); err == nil {
		t.Error("reshape_like of 14 values like 120: want an error")
	}
}
