package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// vaeKillScript trains a small variational autoencoder on MNIST-shaped
// data (the subset inside the binary) whose latent sample is drawn in the
// graph from a script Random brick's theano_rng (z = mu + exp(log_sigma)
// * eps), checkpointing after every batch. A validation monitor every 3
// batches also decodes a draw from the prior made from the same
// theano_rng: a draw outside the training graph, whose generator only the
// checkpoint's random_streams holds.
const vaeKillScript = `load("tensor", "matrix")
load("theano", "function")
load("blocks.bricks", "Initializable", "Random", "MLP", "Linear", "Rectifier", "Logistic")
load("blocks.bricks.base", "application")
load("blocks.bricks.cost", "BinaryCrossEntropy")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("blocks.graph", "ComputationGraph")
load("blocks.algorithms", "GradientDescent", "Adam")
load("blocks.extensions", "FinishAfter")
load("blocks.extensions.monitoring", "TrainingDataMonitoring", "DataStreamMonitoring")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.main_loop", "MainLoop")
load("fuel.datasets", "EmbeddedMNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme", "SequentialScheme")
load("fuel.transformers", "Flatten")

latent = 4
init = dict(weights_init = IsotropicGaussian(0.05), biases_init = Constant(0))

def _sample(self, mu, log_sigma):
    eps = self.theano_rng.normal(size = (mu.shape[0], mu.shape[1]))
    return mu + log_sigma.exp() * eps

Sampler = type("Sampler", (Initializable, Random), {
    "apply": application(inputs = ["mu", "log_sigma"], outputs = ["z"])(_sample),
})

x = matrix("features")
encoder = MLP([Rectifier()], [784, 32], name = "encoder", **init)
to_mu = Linear(32, latent, name = "to_mu", **init)
to_log_sigma = Linear(32, latent, name = "to_log_sigma", **init)
decoder = MLP([Rectifier(), Logistic()], [latent, 32, 784], name = "decoder", **init)
sampler = Sampler(name = "sampler")
for b in [encoder, to_mu, to_log_sigma, decoder]:
    b.initialize()

h = encoder.apply(x)
mu = to_mu.apply(h)
log_sigma = to_log_sigma.apply(h)
z = sampler.apply(mu, log_sigma)
recon = BinaryCrossEntropy().apply(x, decoder.apply(z))
kl = (-0.5 * (1 + 2 * log_sigma - mu.square() - (2 * log_sigma).exp()).sum(axis = 1)).mean()
cost = recon + kl
cost.name = "cost"
prior = sampler.theano_rng.normal(size = (x.shape[0], latent))
prior_mean = decoder.apply(prior).mean()
prior_mean.name = "prior_mean"

train = EmbeddedMNIST(("train",), subset = slice(0, 240), sources = ("features",))
valid = EmbeddedMNIST(("test",), subset = slice(0, 50), sources = ("features",))
stream = Flatten(DataStream.default_stream(train, iteration_scheme = ShuffledScheme(train.num_examples, 20)))
valid_stream = Flatten(DataStream.default_stream(valid, iteration_scheme = SequentialScheme(valid.num_examples, 25)))
cg = ComputationGraph(cost)
alg = GradientDescent(cost = cost, parameters = cg.parameters, step_rule = Adam(learning_rate = 0.001))
loop = MainLoop(algorithm = alg, data_stream = stream, extensions = [
    TrainingDataMonitoring([cost], prefix = "train", after_batch = True),
    DataStreamMonitoring([cost, prior_mean], valid_stream, prefix = "valid", every_n_batches = 3),
    FinishAfter(after_n_epochs = 3),
    Checkpoint("run.tar", every_n_batches = 1, keep_last = 2),
])
loop.run()
print("finished", loop.status["iterations_done"])
`

// TestVAEKillResumeBitIdentical: the VAE, killed (SIGKILL) at random
// moments and resumed from its last checkpoint each time, ends with the
// parameters, Adam's state, the generators of every draw (the sample's,
// the prior's) and the log (validation values included) of the
// uninterrupted run, bit for bit; two uninterrupted runs agree too.
func TestVAEKillResumeBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	write := func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(vaeKillScript), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := t.TempDir()
	write(ref)
	refDur := runToEnd(t, bin, ref, "run", "exp.star")
	want, _, ok := finishedCheckpoint(t, ref)
	if !ok || want.Log.Status.IterationsDone != 36 {
		t.Fatalf("the reference run did not finish its 36 iterations")
	}
	if n := len(want.Iteration.RandomStreams); n != 2 {
		t.Fatalf("the checkpoint holds %d stream draws, want 2 (the sample and the prior)", n)
	}
	// It trains: the validation cost falls.
	var valid []float64
	for _, row := range want.Log.Rows {
		if v, ok := row.Records["valid_cost"]; ok {
			x, err := v.Decode()
			if err != nil {
				t.Fatal(err)
			}
			switch x := x.(type) {
			case float32:
				valid = append(valid, float64(x))
			case float64:
				valid = append(valid, x)
			case interface{ Flat(int) float64 }: // a 0-d array
				valid = append(valid, x.Flat(0))
			default:
				t.Fatalf("valid_cost is a %T", x)
			}
		}
	}
	if len(valid) < 10 || !(valid[len(valid)-1] < valid[0]) {
		t.Errorf("the validation cost does not fall: %v", valid)
	}
	again := t.TempDir()
	write(again)
	runToEnd(t, bin, again, "run", "exp.star")
	second, _, _ := finishedCheckpoint(t, again)
	compareRuns(t, want, second)
	compareDraws(t, want, second)

	// Each checkpoint write pauses 15 ms (36 a run), so that a kill at a
	// random moment lands in the middle of the training.
	dir := killAndResume(t, bin, write, 36, refDur/4, 500*time.Millisecond)
	got, _, _ := finishedCheckpoint(t, dir)
	compareRuns(t, want, got)
	compareDraws(t, want, got)
}

// compareDraws checks the generators of the graph's random ops and of
// the random streams' draws.
func compareDraws(t *testing.T, want, got *checkpoint.Checkpoint) {
	t.Helper()
	if !reflect.DeepEqual(want.Iteration.RandomOps, got.Iteration.RandomOps) {
		t.Error("the random ops' generators differ from the uninterrupted run")
	}
	if !reflect.DeepEqual(want.Iteration.RandomStreams, got.Iteration.RandomStreams) {
		t.Error("the random streams' generators differ from the uninterrupted run")
	}
}
