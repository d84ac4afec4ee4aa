package bench

import (
	"testing"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
)

// mlpStep builds the MLP dims[0]-...-dims[n] (ReLU hidden layers, softmax
// output, categorical cross-entropy), trained by SGD, and a batch of
// random data.
func mlpStep(tb testing.TB, dims []int, batch int, lr float64) (*algorithms.GradientDescent, map[string]*nd.Array) {
	tb.Helper()
	return mlpStepRule(tb, dims, batch, algorithms.NewScale(nd.Float32, lr))
}

// mlpStepRule is mlpStep with the given step rule.
func mlpStepRule(tb testing.TB, dims []int, batch int, rule algorithms.StepRule) (*algorithms.GradientDescent, map[string]*nd.Array) {
	tb.Helper()
	x := core.NewInput("features", nd.Float32, 2)
	y := core.NewInput("targets", nd.Int64, 2)
	cfg := bricks.NewConfig(nd.Float32, 1)
	var acts []bricks.Brick
	for i := 1; i < len(dims)-1; i++ {
		relu, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
		if err != nil {
			tb.Fatal(err)
		}
		acts = append(acts, relu)
	}
	acts = append(acts, bricks.NewSoftmax(cfg, ""))
	mlp, err := bricks.NewMLP(cfg, "", acts, dims)
	if err != nil {
		tb.Fatal(err)
	}
	if err := bricks.SetInitSchemes(mlp, initialization.IsotropicGaussian{Std: 0.01}, nil); err != nil {
		tb.Fatal(err)
	}
	if err := bricks.SetInitSchemes(mlp, nil, initialization.Constant{Value: 0}); err != nil {
		tb.Fatal(err)
	}
	if err := bricks.Initialize(mlp); err != nil {
		tb.Fatal(err)
	}
	out, err := bricks.Apply(mlp, "apply", x)
	if err != nil {
		tb.Fatal(err)
	}
	yFlat, err := core.Flatten(y, 1)
	if err != nil {
		tb.Fatal(err)
	}
	cce, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
	if err != nil {
		tb.Fatal(err)
	}
	costs, err := bricks.Apply(cce, "apply", yFlat, out[0])
	if err != nil {
		tb.Fatal(err)
	}
	cost := costs[0]
	cg := graph.New([]*core.Variable{cost})
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{
		Cost: cost, Parameters: cg.Parameters(), StepRule: rule, Device: benchDevice})
	if err != nil {
		tb.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		tb.Fatal(err)
	}
	rng := numpyrand.New(1)
	features := nd.New(nd.Float32, batch, dims[0])
	for i := range features.Size() {
		features.SetFlat(i, rng.RandomSample())
	}
	targets := nd.New(nd.Int64, batch, 1)
	for i := range batch {
		targets.SetFlat(i, float64(i%dims[len(dims)-1]))
	}
	return gd, map[string]*nd.Array{"features": features, "targets": targets}
}

func benchStep(b *testing.B, dims []int, batch int) {
	gd, data := mlpStep(b, dims, batch, 0.1)
	for range 3 { // warm-up: plans and buffers
		if err := gd.ProcessBatch(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := gd.ProcessBatch(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "examples/s")
}

// The Blocks tutorial's model: 784-100-10, batch 256.
func BenchmarkMLPTutorialStep(b *testing.B) { benchStep(b, []int{784, 100, 10}, 256) }

// The 784-500-10 MLP of the PyTorch baseline (run-torch.sh mlp-500), batch 128.
func BenchmarkMLP500Step(b *testing.B) { benchStep(b, []int{784, 500, 10}, 128) }

// The same model at batch 256.
func BenchmarkMLP500Batch256Step(b *testing.B) { benchStep(b, []int{784, 500, 10}, 256) }
