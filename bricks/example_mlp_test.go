package bricks_test

import (
	"fmt"
	"log"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// An MLP learns XOR from Go with the bricks alone: its configuration is
// typed fields (Dims, WeightsInit, BiasesInit), pushed down to its Linear
// layers; the gradient comes from core.Grad and plain SGD updates the
// parameters in a compiled function.
func Example_mlp() {
	cfg := bricks.NewConfig(nd.Float64, 1)
	mlp, err := bricks.NewMLP(cfg, "mlp", []bricks.Brick{bricks.NewTanh(cfg, ""), bricks.NewSoftmax(cfg, "")}, []int{2, 8, 2})
	if err != nil {
		log.Fatal(err)
	}
	mlp.WeightsInit = initialization.IsotropicGaussian{Std: 1}
	mlp.BiasesInit = initialization.Constant{Value: 0}
	if err := bricks.Initialize(mlp); err != nil {
		log.Fatal(err)
	}
	first := mlp.LinearTransformations[0].(*bricks.Linear)
	fmt.Printf("%s: W %v, b %v\n", first.Name, first.W.Value().Shape, first.B.Value().Shape)

	// The graph: class probabilities, the mean cross-entropy, its
	// gradient and one SGD step.
	x := core.NewInput("x", nd.Float64, 2)
	y := core.NewInput("y", nd.Int64, 1)
	probabilities, err := bricks.Apply(mlp, "apply", x)
	if err != nil {
		log.Fatal(err)
	}
	crossEntropy, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
	if err != nil {
		log.Fatal(err)
	}
	costs, err := bricks.Apply(crossEntropy, "apply", y, probabilities[0])
	if err != nil {
		log.Fatal(err)
	}
	parameters := bricks.AllParameters(mlp)
	grads, err := core.Grad(costs[0], parameters, core.GradOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var updates []core.Update
	for i, p := range parameters {
		updates = append(updates, core.Update{Shared: p, Value: core.Sub(p, core.Mul(core.Const(nd.Float64, 0.5), grads[i]))})
	}
	step, err := core.Compile([]*core.Variable{x, y}, costs, updates)
	if err != nil {
		log.Fatal(err)
	}
	predict, err := core.Compile([]*core.Variable{x}, probabilities, nil)
	if err != nil {
		log.Fatal(err)
	}

	// XOR: the class is 1 where exactly one input is 1.
	features := nd.FromSlice([]float64{0, 0, 0, 1, 1, 0, 1, 1}, 4, 2)
	labels := nd.FromSlice([]int64{0, 1, 1, 0}, 4)
	for i := range 300 {
		out, err := step.Call([]*nd.Array{features, labels})
		if err != nil {
			log.Fatal(err)
		}
		if i == 0 || i == 299 {
			fmt.Printf("cost at step %d: %.3f\n", i, out[0].Flat(0))
		}
	}
	out, err := predict.Call([]*nd.Array{features})
	if err != nil {
		log.Fatal(err)
	}
	p := out[0].Float64s()
	for i := range 4 {
		class := 0
		if p[2*i+1] > p[2*i] {
			class = 1
		}
		fmt.Printf("%v -> %d\n", features.Float64s()[2*i:2*i+2], class)
	}
	// Output:
	// linear_0: W [2 8], b [8]
	// cost at step 0: 0.835
	// cost at step 299: 0.007
	// [0 0] -> 0
	// [0 1] -> 1
	// [1 0] -> 1
	// [1 1] -> 0
}
