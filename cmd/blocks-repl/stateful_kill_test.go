package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// statefulLMScript is a stateful LSTM language model trained by truncated
// back-propagation through time as Blocks scripts do it: the batches are
// consecutive windows of the same text streams, the generator's cost
// starts from shared initial states, and GradientDescent's updates set
// them to the cost's <state>_final_value auxiliary variables after every
// batch, so each batch goes on from the states where the previous one
// ended. The data are made by the script (a seeded generator).
const statefulLMScript = `load("tensor", "lmatrix")
load("blocks.bricks.recurrent", "LSTM")
load("blocks.bricks.sequence_generators", "SequenceGenerator", "Readout", "SoftmaxEmitter", "LookupFeedback")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("blocks.algorithms", "GradientDescent", "Adam")
load("blocks.graph", "ComputationGraph")
load("blocks.filter", "VariableFilter")
load("blocks.model", "Model")
load("blocks.utils", "shared_floatx_zeros")
load("blocks.extensions", "FinishAfter")
load("blocks.extensions.monitoring", "TrainingDataMonitoring")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.main_loop", "MainLoop")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("numpy", "random", "array")

# A random text (a seeded generator) cut into batch streams;
# window k of every stream follows window k - 1: the examples are the
# windows of the streams in order, window after window, so batch k is
# window k of every stream.
vocab, batch, seq, chunks, dim = 6, 4, 10, 20, 8
rng = random.RandomState(5)
text = rng.randint(0, vocab, size = (batch, seq * chunks))
windows = array([text[b][k * seq:(k + 1) * seq] for k in range(chunks) for b in range(batch)])   # (chunks * batch, seq), window-major
data = IndexableDataset({"x": windows})

gen = SequenceGenerator(
    Readout(readout_dim = vocab, source_names = ["states", "feedback"], emitter = SoftmaxEmitter(),
            feedback_brick = LookupFeedback(vocab, 5), name = "readout"),
    LSTM(dim = dim, name = "transition"),
    weights_init = IsotropicGaussian(0.2), biases_init = Constant(0), name = "generator")
gen.initialize()
x = lmatrix("x")
init_states = {n: shared_floatx_zeros((batch, dim), name = "init_" + n) for n in gen.transition.apply.states}
cost = gen.cost(x.T, **init_states)
cost.name = "cost"
cg = ComputationGraph(cost)
updates = []
for n, shared in init_states.items():
    [final] = VariableFilter(theano_name_regex = "generator_cost_matrix_" + n + "_final_value")(cg.auxiliary_variables)
    updates.append((shared, final))
model = Model(cost)
alg = GradientDescent(cost = cost, parameters = cg.parameters, step_rule = Adam(learning_rate = 0.02), updates = updates)
loop = MainLoop(algorithm = alg, data_stream = DataStream(data, iteration_scheme = SequentialScheme(chunks * batch, batch)), model = model, extensions = [
    TrainingDataMonitoring([cost], prefix = "train", after_batch = True),
    TrainingDataMonitoring([cost], prefix = "epoch", after_epoch = True),
    FinishAfter(after_n_epochs = 3),
    Checkpoint("run.tar", every_n_batches = 1, keep_last = 2),
])
loop.run()
print("finished", loop.status["iterations_done"])
`

// TestStatefulLMKillResumeBitIdentical: the stateful language model,
// SIGKILLed in the middle of an epoch (in its 15th checkpoint write, the
// previous checkpoint then being iteration 14's) and resumed, ends with the
// uninterrupted run's parameters, Adam's state, carried states and log,
// bit for bit. The carried states are in the checkpoint's algorithm state:
// a resumed run that started again from zero states would end elsewhere.
func TestStatefulLMKillResumeBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	write := func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(statefulLMScript), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := t.TempDir()
	write(ref)
	runToEnd(t, bin, ref, "run", "exp.star")
	want, _, ok := finishedCheckpoint(t, ref)
	if !ok || want.Log.Status.IterationsDone != 60 {
		t.Fatalf("the reference run did not finish its 60 iterations")
	}
	carried := func(c *checkpoint.Checkpoint, name string) []float64 {
		for _, a := range c.AlgorithmState {
			if strings.HasSuffix(a.Name, ":"+name) { // "000:init_states"
				return a.Array.Float64s()
			}
		}
		t.Fatalf("no carried state %s in the checkpoint's algorithm state", name)
		return nil
	}

	dir := t.TempDir()
	write(dir)
	c := startChild(t, bin, dir, holdWrite(15), "run", "exp.star")
	c.waitHeldAndWaited(t, 15)
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	mid, _, _ := finishedCheckpoint(t, dir)
	if mid.Log.Status.IterationsDone != 14 || !mid.Log.Status.EpochStarted {
		t.Fatalf("the checkpoint after a kill in the 15th write is at iteration %d (mid-epoch %v), want 14, mid-epoch",
			mid.Log.Status.IterationsDone, mid.Log.Status.EpochStarted)
	}
	for _, name := range []string{"init_states", "init_cells"} {
		zero := true
		for _, v := range carried(mid, name) {
			zero = zero && v == 0
		}
		if zero {
			t.Errorf("the carried %s are zeros in the mid-epoch checkpoint: the states were not carried", name)
		}
	}
	runToEnd(t, bin, dir, "resume", "run.tar")
	got, _, _ := finishedCheckpoint(t, dir)
	compareRuns(t, want, got)
}
