package core_test

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
)

// trainMLP trains a 784-300-10 ReLU/softmax MLP (large enough that the
// products and the fused kernels split across the workers) for a few SGD
// steps and returns its parameters and the training program.
func trainMLP(t *testing.T) ([]*nd.Array, string) {
	t.Helper()
	dims, batch := []int{784, 300, 10}, 256
	x := core.NewInput("features", nd.Float32, 2)
	y := core.NewInput("targets", nd.Int64, 2)
	cfg := bricks.NewConfig(nd.Float32, 1)
	relu, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := bricks.NewMLP(cfg, "", []bricks.Brick{relu, bricks.NewSoftmax(cfg, "")}, dims)
	if err != nil {
		t.Fatal(err)
	}
	must(t, bricks.SetInitSchemes(mlp, initialization.IsotropicGaussian{Std: 0.05}, nil))
	must(t, bricks.SetInitSchemes(mlp, nil, initialization.Constant{Value: 0.01}))
	must(t, bricks.Initialize(mlp))
	out, err := bricks.Apply(mlp, "apply", x)
	must(t, err)
	yFlat, err := core.Flatten(y, 1)
	must(t, err)
	cce, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
	must(t, err)
	costs, err := bricks.Apply(cce, "apply", yFlat, out[0])
	must(t, err)
	cg := graph.New([]*core.Variable{costs[0]})
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{
		Cost: costs[0], Parameters: cg.Parameters(), StepRule: algorithms.NewScale(nd.Float32, 0.1)})
	must(t, err)
	must(t, gd.Initialize())
	rng := numpyrand.New(3)
	features := nd.New(nd.Float32, batch, dims[0])
	for i := range features.Size() {
		features.SetFlat(i, rng.RandomSample()-0.3)
	}
	targets := nd.New(nd.Int64, batch, 1)
	for i := range batch {
		targets.SetFlat(i, float64((i*7)%dims[2]))
	}
	data := map[string]*nd.Array{"features": features, "targets": targets}
	var args []*nd.Array
	for _, in := range gd.Inputs() {
		args = append(args, data[in.Name])
	}
	prog, err := gd.Function().Program(args)
	must(t, err)
	for range 4 {
		must(t, gd.ProcessBatch(data))
	}
	var params []*nd.Array
	for _, p := range cg.Parameters() {
		params = append(params, p.Value().Copy())
	}
	return params, strings.Join(prog, "\n")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFusionBitIdentical: training with the plan's fusions (bias+ReLU,
// ScaledSub written into the parameters) and split kernels gives the same
// bits as the unfused ops run serially, unfused ops split, and everything
// on one thread (GOMAXPROCS 1).
func TestFusionBitIdentical(t *testing.T) {
	defer func(s kernels.Settings, serial bool) {
		must(t, kernels.Configure(s))
		kernels.SetSerial(serial)
	}(kernels.Current(), kernels.SetSerial(false))
	setNoFuse := func(on bool) {
		s := kernels.Current()
		s.NoFuse = on
		must(t, kernels.Configure(s))
	}
	setNoFuse(false)
	fused, prog := trainMLP(t)
	for _, want := range []string{"BiasRelu", "ReluGrad", "ScaledSub", "into"} {
		if !strings.Contains(prog, want) {
			t.Errorf("the training program has no %s:\n%s", want, prog)
		}
	}
	for _, c := range []struct {
		name           string
		noFuse, serial bool
		gomaxprocs     int
	}{
		{"unfused, serial", true, true, 0},
		{"unfused, split", true, false, 0},
		{"fused, split, GOMAXPROCS 1", false, false, 1},
	} {
		setNoFuse(c.noFuse)
		kernels.SetSerial(c.serial)
		if c.gomaxprocs > 0 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.gomaxprocs))
		}
		other, prog2 := trainMLP(t)
		if c.noFuse && (strings.Contains(prog2, "BiasRelu") || strings.Contains(prog2, "ScaledSub")) {
			t.Errorf("%s: fusion off still fused:\n%s", c.name, prog2)
		}
		for i := range fused {
			a, b := fused[i].F32(), other[i].F32()
			for j := range a {
				if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
					t.Fatalf("%s: parameter %d element %d: %g fused/split, %g here", c.name, i, j, a[j], b[j])
				}
			}
		}
	}
}
