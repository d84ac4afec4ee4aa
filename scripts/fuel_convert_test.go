package scripts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/fuel/converters"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/internal/fixtures"
)

// trainOnConverted trains the tutorial's MLP for 100 batches on MNIST
// (MNIST-shaped files made from the embedded subset) as
// `blocks-repl fuel convert mnist` writes it (the only file on the data
// path, so MNIST reads it), monitoring 1,000 test examples.
const trainOnConverted = `
load("tensor", "matrix", "lmatrix")
load("blocks.bricks", "MLP", "Rectifier", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy", "MisclassificationRate")
load("blocks.graph", "ComputationGraph")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("fuel.datasets", "MNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("fuel.transformers", "Flatten")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.extensions.monitoring", "DataStreamMonitoring")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter")

x = matrix("features")
y = lmatrix("targets")
mlp = MLP(activations = [Rectifier(), Softmax()], dims = [784, 100, 10],
          weights_init = IsotropicGaussian(0.01), biases_init = Constant(0))
mlp.initialize()
y_hat = mlp.apply(x)
cost = CategoricalCrossEntropy().apply(y.flatten(), y_hat)
cost.name = "cost"
error_rate = MisclassificationRate().apply(y.flatten(), y_hat)
error_rate.name = "error_rate"
cg = ComputationGraph(cost)
train = MNIST(("train",))
test = MNIST(("test",), subset = (0, 1000))
main_loop = MainLoop(
    data_stream = Flatten(DataStream.default_stream(train, iteration_scheme = SequentialScheme(train.num_examples, 256))),
    algorithm = GradientDescent(cost = cost, parameters = cg.parameters, step_rule = Scale(learning_rate = 0.1)),
    extensions = [
        DataStreamMonitoring(variables = [cost, error_rate], prefix = "test", every_n_batches = 50,
            data_stream = Flatten(DataStream.default_stream(test, iteration_scheme = SequentialScheme(1000, 500)))),
        FinishAfter(after_n_batches = 100),
    ],
)
main_loop.run()
`

func TestTrainOnConvertedMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	if _, err := converters.Convert("mnist", converters.Options{Directory: fixtures.MNISTDir(t, datasets.EmbeddedMNISTFiles()), OutputDirectory: dir}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUEL_CONFIG", filepath.Join(dir, "no-fuelrc"))
	t.Setenv("FUEL_DATA_PATH", dir)
	script := filepath.Join(dir, "train.star")
	if err := os.WriteFile(script, []byte(trainOnConverted), 0o644); err != nil {
		t.Fatal(err)
	}
	g, _ := run(t, script, nil)
	before, after := logValue(t, g, 0, "test_error_rate"), logValue(t, g, 100, "test_error_rate")
	t.Logf("test error on 1,000 examples: %.3f before, %.3f after 100 batches", before, after)
	if !(before > 0.8 && after < 0.35) { // deterministic: 0.928 and 0.253 here
		t.Errorf("test error %.3f before and %.3f after 100 batches of training on the converted file", before, after)
	}
}
