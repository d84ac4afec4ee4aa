package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// overrideScript declares its tunables; late_learning_rate, from
// iteration late_from on, is the documented way to change the learning
// rate when resuming: the modifier runs before each batch, so the batch
// after iteration late_from is the first with the new rate, in the resumed
// run as in a replay from scratch.
const overrideScript = `
load("tensor", "matrix", "lmatrix")
load("blocks.config", "config")
load("blocks.bricks", "MLP", "Rectifier", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("fuel.datasets", "EmbeddedMNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme")
load("fuel.transformers", "Flatten")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.extensions.training", "SharedVariableModifier")
load("blocks.graph", "ComputationGraph")
cfg = config(epochs = 2, learning_rate = 0.1, late_learning_rate = None, late_from = 0)
x = matrix("features")
y = lmatrix("targets")
mlp = MLP([Rectifier(), Softmax()], [784, 20, 10], weights_init = IsotropicGaussian(0.01), biases_init = Constant(0))
mlp.initialize()
cost = CategoricalCrossEntropy().apply(y.flatten(), mlp.apply(x))
cost.name = "cost"
train = EmbeddedMNIST(("train",))
stream = Flatten(DataStream.default_stream(train, iteration_scheme = ShuffledScheme(500, 50)))
step = Scale(learning_rate = cfg.learning_rate)
def late(iterations_done, old):
    if cfg.late_learning_rate != None and iterations_done >= cfg.late_from:
        return cfg.late_learning_rate
    return old
main_loop = MainLoop(GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters, step_rule = step), stream,
    extensions = [SharedVariableModifier(step.learning_rate, late, before_batch = True, after_batch = False), FinishAfter(after_n_epochs = cfg.epochs), Checkpoint("run.tar")])
main_loop.run()
print("LR", step.learning_rate.get_value().tolist())
`

// TestResumeOverrides: an override resume cannot apply (the learning
// rate the checkpoint restores) is refused before anything trains and
// nothing is written; one it applies (FinishAfter's epochs, a learning
// rate from a later iteration) is applied and recorded, and replay of the
// resumed checkpoint is bit-identical.
func TestResumeOverrides(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(overrideScript), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) *watched {
		t.Helper()
		w := startWatched(t, dir, nil, args...)
		if code := w.exitCode(t, 120*time.Second); code != want {
			t.Fatalf("blocks-repl %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, want, w.stdout(), w.stderr())
		}
		return w
	}
	run(0, "run", "exp.star")
	ckpt := filepath.Join(dir, "run.tar")
	before, _ := os.ReadFile(ckpt)

	w := run(1, "resume", "--set", "learning_rate=0.01", "--set", "epochs=3", "run.tar")
	if msg := w.stderr(); !strings.Contains(msg, "learning_rate=0.01 refused") || !strings.Contains(msg, "learning_rate") ||
		!strings.Contains(msg, "Nothing trained and nothing was written") {
		t.Errorf("unclear refusal:\n%s", msg)
	}
	if after, _ := os.ReadFile(ckpt); !bytes.Equal(before, after) {
		t.Error("a refused resume rewrote the checkpoint")
	}

	// Applied: one more epoch, with a learning rate from iteration 20 on.
	w = run(0, "resume", "--set", "epochs=3", "--set", "late_learning_rate=0.01", "--set", "late_from=20", "run.tar")
	if !strings.Contains(w.stdout(), "LR 0.0099999") {
		t.Errorf("the late learning rate was not used:\n%s", w.stdout())
	}
	w = run(0, "inspect", "run.tar")
	for _, want := range []string{"epochs = 3  # --set", "late_learning_rate = 0.01  # --set"} {
		if !strings.Contains(w.stdout(), want) {
			t.Errorf("inspect lacks %q:\n%s", want, w.stdout())
		}
	}
	w = run(0, "replay", "run.tar")
	if !strings.Contains(w.stdout(), "bit-identical at iteration 30") {
		t.Errorf("replay of the resumed checkpoint:\n%s\n%s", w.stdout(), w.stderr())
	}
}
