package bricks

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

func TestModelRoundTrip(t *testing.T) {
	cfg := NewConfig(nd.Float32, 1)
	tanh, _ := NewActivation(cfg, "Tanh", "", 0)
	mlp, err := NewMLP(cfg, "", []Brick{tanh, NewSoftmax(cfg, "")}, []int{4, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	mlp.WeightsInit = initialization.IsotropicGaussian{Std: 0.1}
	mlp.BiasesInit = initialization.Constant{Value: 0.5}
	if err := Initialize(mlp); err != nil {
		t.Fatal(err)
	}
	x := core.NewInput("features", nd.Float32, 2)
	y := mustApply(t, mlp, "apply", x)
	m, err := NewModel([]*core.Variable{y})
	if err != nil {
		t.Fatal(err)
	}
	if tb := m.TopBricks(); len(tb) != 1 || tb[0] != Brick(mlp) {
		t.Errorf("top bricks %v, want [mlp]", tb)
	}
	want := []string{"/mlp/linear_0.W", "/mlp/linear_0.b", "/mlp/linear_1.W", "/mlp/linear_1.b"}
	names := m.ParameterNames()
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("parameter names %v, want %v", names, want)
	}
	vals := m.ParameterValues()
	saved := m.ParameterValues()
	// Change every value, then restore: the round trip is exact.
	for _, n := range m.ParameterNames() {
		v := m.Parameter(n).Value()
		for i := range v.Size() {
			v.SetFlat(i, 7)
		}
	}
	if u, miss, err := m.SetParameterValues(vals); err != nil || len(u) != 0 || len(miss) != 0 {
		t.Fatalf("set_parameter_values: unknown %v missing %v err %v", u, miss, err)
	}
	for n, v := range saved {
		if !slices.Equal(v.F32(), m.Parameter(n).Value().F32()) {
			t.Errorf("%s not restored", n)
		}
	}
	// A wrong shape names the parameter and sets nothing.
	bad := map[string]*nd.Array{"/mlp/linear_0.W": nd.New(nd.Float32, 3, 4), "/mlp/linear_0.b": nd.New(nd.Float32, 3), "/nope.W": nd.New(nd.Float32, 1)}
	_, _, err = m.SetParameterValues(bad)
	var se *ShapeError
	if !errors.As(err, &se) || se.Name != "/mlp/linear_0.W" || !strings.Contains(err.Error(), "/mlp/linear_0.W") {
		t.Fatalf("wrong shape: %v", err)
	}
	if m.Parameter("/mlp/linear_0.b").Value().Flat(0) != 0.5 {
		t.Error("a value was set despite the shape error")
	}
	delete(bad, "/mlp/linear_0.W")
	u, miss, err := m.SetParameterValues(bad)
	if err != nil || !slices.Equal(u, []string{"/nope.W"}) || len(miss) != 3 {
		t.Errorf("unknown %v missing %v err %v", u, miss, err)
	}
}

func TestPrintTree(t *testing.T) {
	cfg := NewConfig(nd.Float32, 1)
	tanh, _ := NewActivation(cfg, "Tanh", "", 0)
	m, _ := NewBatchNormalizedMLP(cfg, "", []Brick{tanh}, []int{2, 3})
	if err := Allocate(m); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := PrintTree(&b, m); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"BatchNormalizedMLP batchnormalizedmlp (allocated)", "└── Sequence batch_norm_activation_0 (allocated)", "Linear linear_0 (allocated)", "W float32 (2, 3) [WEIGHT]", "population_mean float32 (3,) [BATCH_NORM_POPULATION_MEAN]"} {
		if !strings.Contains(out, want) {
			t.Errorf("tree lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)
}
