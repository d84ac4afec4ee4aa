package scripts

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
)

// A small training script on the embedded data, with a hole for the line
// under test. Each case must fail with a message at the script's line that
// says what was expected and what was got.
const errorScript = `
load("tensor", "matrix", "lmatrix")
load("blocks.bricks", "MLP", "Rectifier", "Softmax", "Linear")
load("blocks.bricks.cost", "CategoricalCrossEntropy")
load("blocks.graph", "ComputationGraph")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("fuel.datasets", "EmbeddedMNIST", "MNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("fuel.transformers", "Flatten")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter")
x = matrix(FEATURES)
y = lmatrix("targets")
mlp = MLP(activations = [Rectifier(), Softmax()], dims = [784, 20, 10],
          weights_init = IsotropicGaussian(0.01), biases_init = Constant(0))
mlp.initialize()
cost = CategoricalCrossEntropy().apply(y.flatten(), mlp.apply(x))
cg = ComputationGraph(cost)
train = EmbeddedMNIST(("train",))
stream = DataStream.default_stream(train, iteration_scheme = SequentialScheme(200, batch_size = 100))
if FLATTEN:
    stream = Flatten(stream)
algorithm = GradientDescent(cost = cost, parameters = cg.parameters, step_rule = Scale(learning_rate = 0.1))
main_loop = MainLoop(algorithm = algorithm, data_stream = stream, extensions = [FinishAfter(after_n_epochs = 1)])
main_loop.run()
`

func runSource(t *testing.T, name, src string) error {
	t.Helper()
	var out bytes.Buffer
	_, err := starlib.ExecFile(name, []byte(src), starlib.Options{Stdout: &out, Library: all.Library()})
	return err
}

func TestScriptErrors(t *testing.T) {
	sub := func(features, flatten string) string {
		return regexp.MustCompile(`FEATURES`).ReplaceAllString(regexp.MustCompile(`FLATTEN`).ReplaceAllString(errorScript, flatten), features)
	}
	empty := t.TempDir()
	cases := []struct {
		name, src, want string
		env             string
	}{
		{"source matching no input", sub(`"pixels"`, "True"),
			`(?s)exp.star:27:.*features.*pixels`, ""},
		{"shape mismatch: unflattened images", sub(`"features"`, "False"),
			`(?s)exp.star:27:.*source "features" has shape \(100, 1, 28, 28\) but the input variable features is a matrix \(2-d\)`, ""},
		{"missing dataset file", `load("fuel.datasets", "MNIST")
ds = MNIST(("train",))
`, `(?s)exp.star:2:.*train-images-idx3-ubyte.*` + regexp.QuoteMeta(empty) + `.*blocks-repl fuel download mnist`, empty},
		{"wrong argument type to a brick", `load("blocks.bricks", "Linear")
l = Linear(input_dim = "784", output_dim = 10)
`, `(?s)exp.star:2:.*input_dim must be an int, got string`, ""},
		{"unknown brick argument", `load("blocks.bricks", "Linear")
l = Linear(input_dim = 784, output_dimension = 10)
`, `(?s)exp.star:2:.*unexpected keyword argument output_dimension`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("FUEL_DATA_PATH", c.env)
			}
			err := runSource(t, "exp.star", c.src)
			if err == nil {
				t.Fatal("no error")
			}
			msg := starlib.Backtrace(err)
			if !regexp.MustCompile(c.want).MatchString(msg) {
				t.Errorf("error does not match %q:\n%s", c.want, msg)
			}
		})
	}
}

// TestBitIdenticalRuns runs the demo twice (shuffled batches, seeded
// initialization) and compares every parameter bit for bit.
func TestBitIdenticalRuns(t *testing.T) {
	params := func() []*nd.Array {
		g, _ := run(t, "demo.star", map[string]string{"epochs": "1"})
		var out []*nd.Array
		for _, p := range g["cg"].(*starblocks.ComputationGraph).G.Parameters() {
			out = append(out, p.Value().Copy())
		}
		return out
	}
	a, b := params(), params()
	if len(a) != 4 {
		t.Fatalf("%d parameters, want 4", len(a))
	}
	for i := range a {
		x, y := a[i].F32(), b[i].F32()
		for k := range x {
			if x[k] != y[k] {
				t.Fatalf("parameter %d differs at %d: %v vs %v", i, k, x[k], y[k])
			}
		}
	}
}
