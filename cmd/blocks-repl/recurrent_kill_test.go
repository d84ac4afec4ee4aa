package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// recurrentKillScript trains a fused LSTM and a fused GatedRecurrent
// (core.LSTMSequence, core.GRUSequence) with a mask on shuffled random
// sequences with Adam, checkpointing after every batch: a SIGKILL lands in
// the middle of an epoch of sequences, and the resumed run must end with
// the uninterrupted run's bits.
const recurrentKillScript = `load("tensor", "tensor3", "matrix", "lmatrix", "cast")
load("blocks.bricks", "Linear", "Softmax")
load("blocks.bricks.recurrent", "LSTM", "GatedRecurrent")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("blocks.algorithms", "GradientDescent", "Adam")
load("blocks.graph", "ComputationGraph")
load("blocks.extensions", "FinishAfter")
load("blocks.extensions.monitoring", "TrainingDataMonitoring")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.main_loop", "MainLoop")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme")
load("numpy", "random")

rng = random.RandomState(3)
n, length, dim = 240, 20, 8
data = IndexableDataset({
    "x": rng.normal(size = (n, length, 3)).astype("float32"),
    "m": rng.randint(0, 2, size = (n, length)).astype("float32"),
    "y": rng.randint(0, 5, size = (n, length)),
})
x = tensor3("x")
m = matrix("m")
y = lmatrix("y")
inputs = x.dimshuffle(1, 0, 2)
mask = m.T
init = dict(weights_init = IsotropicGaussian(0.3), biases_init = Constant(0))
to_lstm = Linear(3, 4 * dim, name = "to_lstm", **init)
lstm = LSTM(dim, name = "lstm", weights_init = IsotropicGaussian(0.3))
to_gru = Linear(dim, dim, name = "to_gru", **init)
to_gates = Linear(dim, 2 * dim, name = "to_gates", **init)
gru = GatedRecurrent(dim, name = "gru", weights_init = IsotropicGaussian(0.3))
out = Linear(dim, 5, name = "out", **init)
for b in [to_lstm, lstm, to_gru, to_gates, gru, out]:
    b.initialize()
h, c = lstm.apply(to_lstm.apply(inputs), mask = mask)
g = gru.apply(inputs = to_gru.apply(h), gate_inputs = to_gates.apply(h), mask = mask)
cost = Softmax().categorical_cross_entropy(y.T.flatten(), out.apply(g).reshape((-1, 5))).mean()
cost.name = "cost"
cg = ComputationGraph(cost)
alg = GradientDescent(cost = cost, parameters = cg.parameters, step_rule = Adam(learning_rate = 0.01))
loop = MainLoop(algorithm = alg, data_stream = DataStream(data, iteration_scheme = ShuffledScheme(n, 12)), extensions = [
    TrainingDataMonitoring([cost], prefix = "train", after_batch = True),
    TrainingDataMonitoring([cost], prefix = "epoch", after_epoch = True),
    FinishAfter(after_n_epochs = 3),
    Checkpoint("run.tar", every_n_batches = 1, keep_last = 2),
])
loop.run()
print("finished", loop.status["iterations_done"])
`

// TestRecurrentKillResumeBitIdentical: a run of the fused recurrent
// script killed (SIGKILL) at random moments and resumed from its last
// checkpoint each time ends with the parameters, Adam's state, the
// scheme's generator and the log of the uninterrupted run, bit for bit;
// two uninterrupted runs agree too.
func TestRecurrentKillResumeBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	write := func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(recurrentKillScript), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := t.TempDir()
	write(ref)
	refDur := runToEnd(t, bin, ref, "run", "exp.star")
	want, _, ok := finishedCheckpoint(t, ref)
	if !ok || want.Log.Status.IterationsDone != 60 {
		t.Fatalf("the reference run did not finish its 60 iterations")
	}
	again := t.TempDir()
	write(again)
	runToEnd(t, bin, again, "run", "exp.star")
	second, _, _ := finishedCheckpoint(t, again)
	compareRuns(t, want, second)

	// Each checkpoint write pauses 15 ms (60 a run), so that a kill at a
	// random moment lands in the middle of the training.
	dir := killAndResume(t, bin, write, 4, refDur/4, 600*time.Millisecond)
	got, _, _ := finishedCheckpoint(t, dir)
	compareRuns(t, want, got)
}

// killAndResume runs exp.star (written by write) to its end in a fresh
// directory, which it returns: three times it starts the run (or resumes
// run.tar) and SIGKILLs it after minDelay plus a random part of jitter
// (from seed), checkpoint writes slowed by 15 ms each, then it lets the
// run finish. The delays come from a reference run's duration: a machine
// that got faster since (its load fell) can finish the run before the
// first kill, which proves nothing, so a fresh directory tries again with
// the delays halved, a few times; no kill landing in any fails t.
func killAndResume(t *testing.T, bin string, write func(dir string), seed int64, minDelay, jitter time.Duration) (dir string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		dir = t.TempDir()
		write(dir)
		if killTrials(t, bin, dir, seed, minDelay, jitter) > 0 {
			return dir
		}
		if attempt == 4 {
			t.Error("no kill landed before the run ended")
			return dir
		}
		t.Logf("no kill landed before the run ended; a fresh run tries again with the delays halved")
		minDelay, jitter = minDelay/2, jitter/2
	}
}

// killTrials is one try of killAndResume in dir; it returns how many
// kills landed.
func killTrials(t *testing.T, bin, dir string, seed int64, minDelay, jitter time.Duration) (kills int) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	midEpoch := 0
	for k := 0; ; k++ {
		c, exists, done := finishedCheckpoint(t, dir)
		if done {
			break
		}
		args := []string{"run", "exp.star"}
		if exists {
			args = []string{"resume", "run.tar"}
			if c.Log.Status.EpochStarted {
				midEpoch++
			}
		}
		if k >= 3 {
			runToEnd(t, bin, dir, args...)
			continue
		}
		d := minDelay + time.Duration(r.Int63n(int64(jitter)))
		killed := killAfter(t, bin, dir, []string{"BLOCKS_CHECKPOINT_WRITE_DELAY=15ms"}, d, args...)
		t.Logf("%v after %v: killed %v", args, d, killed)
		if killed {
			kills++
		}
	}
	t.Logf("%d kills, %d resumes from a mid-epoch checkpoint", kills, midEpoch)
	return kills
}
