package monitoring

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// TestEvaluatorRunsForwardOnly: the monitoring function of a model's cost
// (Blocks' DataStreamEvaluator, here DatasetEvaluator) compiles the
// forward graph only: no gradient, no transposed product, no update.
func TestEvaluatorRunsForwardOnly(t *testing.T) {
	x := core.NewInput("features", nd.Float32, 2)
	y := core.NewInput("targets", nd.Int64, 2)
	cfg := bricks.NewConfig(nd.Float32, 1)
	relu, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := bricks.NewMLP(cfg, "", []bricks.Brick{relu, bricks.NewSoftmax(cfg, "")}, []int{20, 8, 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := bricks.SetInitSchemes(mlp, initialization.IsotropicGaussian{Std: 0.1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := bricks.SetInitSchemes(mlp, nil, initialization.Constant{Value: 0}); err != nil {
		t.Fatal(err)
	}
	if err := bricks.Initialize(mlp); err != nil {
		t.Fatal(err)
	}
	out, err := bricks.Apply(mlp, "apply", x)
	if err != nil {
		t.Fatal(err)
	}
	yFlat, err := core.Flatten(y, 1)
	if err != nil {
		t.Fatal(err)
	}
	cce, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := bricks.Apply(cce, "apply", yFlat, out[0])
	if err != nil {
		t.Fatal(err)
	}
	cost := costs[0]
	cost.Name = "cost"
	e, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{cost}, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := []*nd.Array{}
	for _, in := range e.Inputs() {
		switch in.Name {
		case "features":
			args = append(args, nd.New(nd.Float32, 5, 20))
		case "targets":
			args = append(args, nd.New(nd.Int64, 5, 1))
		}
	}
	prog, err := e.fn.Program(args)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(prog, "\n")
	for _, bad := range []string{"Grad", "A.T", "B.T", "ScaledSub", "SumToShape", "into"} {
		if strings.Contains(text, bad) {
			t.Errorf("the monitoring function runs %s:\n%s", bad, text)
		}
	}
	if !strings.Contains(text, "LogSoftmax") || !strings.Contains(text, "BiasRelu") {
		t.Errorf("the monitoring function lacks the forward pass:\n%s", text)
	}
}
