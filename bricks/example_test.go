package bricks_test

import (
	"fmt"
	"log"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/fuel/datasets/toy"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// An MLP trained from Go, as Blocks' tutorial trains one from Python:
// bricks build the graph, GradientDescent takes its gradients, and a main
// loop feeds it a Fuel stream with monitoring and a stopping condition.
func Example_trainMLP() {
	// The data: Fuel's Spiral toy dataset, 3 arms, in shuffled batches.
	seed := 1
	spiral := toy.DefaultSpiral()
	spiral.NumExamples, spiral.Classes, spiral.Noise, spiral.Seed = 600, 3, 0.05, &seed
	spiral.Indexable.Sources = []string{"features", "label"}
	dataset, err := toy.Spiral(spiral)
	if err != nil {
		log.Fatal(err)
	}
	scheme, err := schemes.ShuffledScheme(schemes.Range(dataset.NumExamples()), 50, numpyrand.New(1), false)
	if err != nil {
		log.Fatal(err)
	}
	stream, err := streams.DataStream(dataset, scheme)
	if err != nil {
		log.Fatal(err)
	}
	evaluation, err := schemes.SequentialScheme(schemes.Range(dataset.NumExamples()), 600)
	if err != nil {
		log.Fatal(err)
	}
	evaluationStream, err := streams.DataStream(dataset, evaluation)
	if err != nil {
		log.Fatal(err)
	}

	// The model: MLP([Tanh(), Softmax()], [2, 32, 3]).
	cfg := bricks.NewConfig(nd.Float32, 1)
	mlp, err := bricks.NewMLP(cfg, "mlp", []bricks.Brick{bricks.NewTanh(cfg, ""), bricks.NewSoftmax(cfg, "")}, []int{2, 32, 3})
	if err != nil {
		log.Fatal(err)
	}
	mlp.WeightsInit = initialization.IsotropicGaussian{Std: 0.5}
	mlp.BiasesInit = initialization.Constant{Value: 0}
	if err := bricks.Initialize(mlp); err != nil {
		log.Fatal(err)
	}
	features := core.NewInput("features", nd.Float32, 2)
	label := core.NewInput("label", nd.Int64, 1)
	probabilities, err := bricks.Apply(mlp, "apply", features)
	if err != nil {
		log.Fatal(err)
	}
	crossEntropy, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
	if err != nil {
		log.Fatal(err)
	}
	costs, err := bricks.Apply(crossEntropy, "apply", label, probabilities[0])
	if err != nil {
		log.Fatal(err)
	}
	cost := costs[0]
	cost.Name = "cost"
	model, err := bricks.NewModel([]*core.Variable{cost})
	if err != nil {
		log.Fatal(err)
	}

	// The training: SGD with momentum for 30 epochs, the cost over the
	// whole dataset before training and after every epoch.
	algorithm, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{
		Cost:       cost,
		Parameters: model.Parameters(),
		StepRule:   algorithms.NewMomentum(nd.Float32, 0.1, 0.9),
	})
	if err != nil {
		log.Fatal(err)
	}
	monitor, err := extensions.NewDataStreamMonitoring(device.Device{}, []*core.Variable{cost}, evaluationStream, nil, "spiral", "", nil)
	if err != nil {
		log.Fatal(err)
	}
	finish, err := extensions.NewFinishAfter(extensions.Triggers{"after_n_epochs": 30})
	if err != nil {
		log.Fatal(err)
	}
	loop := mainloop.New(algorithm, stream, model, nil, []mainloop.Extension{monitor, finish})
	if err := loop.Run(); err != nil {
		log.Fatal(err)
	}

	iterations, values := loop.Log.Channel("spiral_cost")
	fmt.Printf("spiral_cost at iteration %d: %.2f\n", iterations[0], values[0])
	last := len(values) - 1
	fmt.Printf("spiral_cost at iteration %d: %.2f\n", iterations[last], values[last])
	// Output:
	// spiral_cost at iteration 0: 1.47
	// spiral_cost at iteration 360: 0.76
}
