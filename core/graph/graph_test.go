package graph

import (
	"strings"
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

	// Blocks' order (Theano's io_toposort): the bias added to the batch
	// has a DimShuffle of its own, which the sort takes before the dot.
	if ps := g.Parameters(); len(ps) != 2 || ps[0] != b || ps[1] != w1 {
		t.Errorf("parameters %v, want [b W] in Blocks' order", ps)
	}
	if in := g.Inputs(); len(in) != 1 || in[0] != x {
		t.Errorf("inputs %v", in)
	}
	for _, c := range []struct {
		f    VariableFilter
		want []*core.Variable
	}{
		{VariableFilter{Roles: []*core.Role{core.Weight}}, []*core.Variable{w1}},
		{VariableFilter{Roles: []*core.Role{core.Parameter}}, []*core.Variable{b, w1}},
		{VariableFilter{Roles: []*core.Role{core.Weight, core.Bias}, EachRole: true}, nil},
		{VariableFilter{NameRegex: "W|b"}, []*core.Variable{b, w1}},
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

// TestBlocksOrder checks ComputationGraph's variables against the order
// Blocks gives (Theano's io_toposort, worked by hand): a bias broadcast
// over a batch has a DimShuffle node, which the sort meets first; a bias
// added to a vector has none, and comes where the addition uses it.
func TestBlocksOrder(t *testing.T) {
	for _, c := range []struct {
		ndim int
		want string
	}{
		{2, "b x W dot add y"},
		{1, "x W dot b add y"},
	} {
		x := core.NewInput("x", nd.Float64, c.ndim)
		w := core.NewShared(nd.FromSlice([]float64{1, 2, 3, 4}, 2, 2), "W")
		b := core.NewShared(nd.FromSlice([]float64{1, 1}), "b")
		d, err := core.Dot(x, w)
		if err != nil {
			t.Fatal(err)
		}
		d.Name = "dot"
		a := core.Add(d, b)
		a.Name = "add"
		y := core.Tanh(a)
		y.Name = "y"
		var names []string
		for _, v := range New([]*core.Variable{y}).Variables {
			names = append(names, v.Name)
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("%d-d x: variables %q, want %q", c.ndim, got, c.want)
		}
	}
}
