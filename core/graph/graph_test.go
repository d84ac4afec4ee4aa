package graph

import (
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

func TestFilterAndReplace(t *testing.T) {
	x := core.NewInput("x", nd.Float64, 2)
	w1 := core.NewShared(nd.FromSlice([]float64{1, 2, 3, 4}, 2, 2), "W")
	w1.Tag.Name = "W"
	core.AddRole(w1, core.Weight)
	b := core.NewShared(nd.FromSlice([]float64{1, 1}), "b")
	b.Tag.Name = "b"
	core.AddRole(b, core.Bias)
	h, _ := core.Dot(x, w1)
	y := core.Add(h, b)
	cost := core.SumAll(core.Sqr(y))
	g := New([]*core.Variable{cost})

	if ps := g.Parameters(); len(ps) != 2 || ps[0] != w1 || ps[1] != b {
		t.Errorf("parameters %v, want [W b] in topological order", ps)
	}
	if in := g.Inputs(); len(in) != 1 || in[0] != x {
		t.Errorf("inputs %v", in)
	}
	for _, c := range []struct {
		f    VariableFilter
		want []*core.Variable
	}{
		{VariableFilter{Roles: []*core.Role{core.Weight}}, []*core.Variable{w1}},
		{VariableFilter{Roles: []*core.Role{core.Parameter}}, []*core.Variable{w1, b}},
		{VariableFilter{Roles: []*core.Role{core.Weight, core.Bias}, EachRole: true}, nil},
		{VariableFilter{NameRegex: "W|b"}, []*core.Variable{w1, b}},
		{VariableFilter{Name: "b"}, []*core.Variable{b}},
	} {
		got, err := c.f.Apply(g.Variables)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Errorf("%+v: got %v, want %v", c.f, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%+v: got %v, want %v", c.f, got, c.want)
			}
		}
	}

	// Replace h by 2h: the new graph's cost doubles y's linear part; the
	// original graph is left as it was.
	g2, err := g.Replace(map[*core.Variable]*core.Variable{h: core.Mul(h, core.Const(nd.Float64, 2))})
	if err != nil {
		t.Fatal(err)
	}
	f, err := core.Compile([]*core.Variable{x}, []*core.Variable{g.Outputs[0], g2.Outputs[0]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Call([]*nd.Array{nd.FromSlice([]float64{1, 0}, 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	// x·W = [1, 2]; y = [2, 3] → 13; with 2h: [3, 5] → 34.
	if res[0].Flat(0) != 13 || res[1].Flat(0) != 34 {
		t.Errorf("costs %v and %v, want 13 and 34", res[0], res[1])
	}
}
