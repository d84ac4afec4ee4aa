package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// progressScript trains with Printing, then a
// ProgressBar after it in the list (as Blocks' examples order them).
const progressScript = `
load("tensor", "matrix", "lmatrix")
load("blocks.bricks", "MLP", "Rectifier", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("fuel.datasets", "EmbeddedMNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("fuel.transformers", "Flatten")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter", "Printing", "ProgressBar")
load("blocks.graph", "ComputationGraph")

x = matrix("features")
y = lmatrix("targets")
mlp = MLP([Rectifier(), Rectifier(), Softmax()], [784, %d, %d, 10],
          weights_init = IsotropicGaussian(0.01), biases_init = Constant(0))
mlp.initialize()
cost = CategoricalCrossEntropy().apply(y.flatten(), mlp.apply(x))
cost.name = "cost"
train = EmbeddedMNIST(("train",))
stream = Flatten(DataStream.default_stream(train, iteration_scheme = SequentialScheme(5000, %d)))
main_loop = MainLoop(
    GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters, step_rule = Scale(0.01)),
    stream,
    extensions = [FinishAfter(after_n_epochs = %d), Printing(), ProgressBar()],
)
`

// On a terminal, the bar of an epoch ends before Printing's after_epoch
// block; the finished epoch's line is not drawn again below the block.
func TestTerminalProgressBarEndsBeforePrinting(t *testing.T) {
	script := writeScript(t, "train.star", fmt.Sprintf(progressScript, 20, 20, 500, 2)+"main_loop.run()\n")
	tm := startTerminal(t, nil, "run", script)
	// The whole output, read from the terminal, before the exit status.
	tm.expect("TRAINING HAS BEEN FINISHED")
	tm.expect("training_finished: True")
	if err := <-tm.done; err != nil {
		t.Fatalf("%v\n%s", err, tm.screen())
	}
	screen := tm.screen()
	for epoch, block := range strings.Split(screen, "AFTER ANOTHER EPOCH")[1:] {
		if strings.Contains(block, fmt.Sprintf("Epoch %d, step", epoch)) {
			t.Errorf("the bar of epoch %d is drawn again after its Printing block:\n%s", epoch, block)
		}
	}
	if n := strings.Count(screen, "AFTER ANOTHER EPOCH"); n != 2 || !strings.Contains(screen, "Epoch 1, step 10/10 (100%)") {
		t.Errorf("%d epoch blocks:\n%s", n, screen)
	}
}

var elapsedRE = regexp.MustCompile(`Epoch 0, step 200/200 \(100%\) \|#+\| [0-9.]+ it/s \| Elapsed Time: (\d+):(\d\d):(\d\d)`)

// After a pause at the REPL (Ctrl-C, then run() again), the bar's elapsed
// time and rate leave out the time spent paused: the epoch's elapsed
// time is at most the time the loop actually ran, measured here.
func TestTerminalProgressBarLeavesOutThePause(t *testing.T) {
	const idle = 6 * time.Second
	script := writeScript(t, "train.star", fmt.Sprintf(progressScript, 1000, 1000, 25, 1))
	tm, ran := pauseTraining(t, func() *terminal {
		return startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + filepath.Join(t.TempDir(), "h")}, "repl", script)
	}, "Epoch 0, step ", 200)
	tm.line(`print("MID-EPOCH", main_loop.status["iterations_done"] < 200)`)
	tm.expect("MID-EPOCH True")
	time.Sleep(idle)
	t1 := time.Now()
	tm.line("main_loop.run()")
	tm.expect("AFTER ANOTHER EPOCH")
	ran += time.Since(t1)
	tm.exit()
	m := elapsedRE.FindAllStringSubmatch(tm.screen(), -1)
	if len(m) == 0 {
		t.Fatalf("no final bar line:\n%s", tm.screen())
	}
	var h, mi, s int
	fmt.Sscan(m[len(m)-1][1], &h)
	fmt.Sscan(m[len(m)-1][2], &mi)
	fmt.Sscan(m[len(m)-1][3], &s)
	elapsed := time.Duration(h*3600+mi*60+s) * time.Second
	// The clock is rounded to the second.
	if elapsed > ran+time.Second {
		t.Errorf("the bar says %v elapsed, but the loop ran at most %v (it was paused %v): %s", elapsed, ran.Round(time.Millisecond), idle, m[len(m)-1][0])
	}
}

// The shipped training scripts show a progress bar: on a terminal, the
// demo draws one per epoch; through a pipe its output is unchanged (the
// bar writes to stderr, and quick epochs write nothing there).
func TestShippedScriptsShowAProgressBar(t *testing.T) {
	save := "save_to=" + filepath.Join(t.TempDir(), "demo.tar")
	tm := startTerminal(t, nil, "run", "--set", "epochs=2", "--set", save, "../../scripts/demo.star")
	tm.expect("Epoch 0, step 100/100 (100%)")
	tm.expect("AFTER ANOTHER EPOCH")
	tm.expect("Epoch 1, step 100/100 (100%)")
	tm.expect("test error after 2 epochs")
	if err := <-tm.done; err != nil {
		t.Fatalf("%v\n%s", err, tm.screen())
	}
	code, out, errs := runBinary(t, "", "run", "--set", "epochs=2", "--set", save, "../../scripts/demo.star")
	if code != 0 || strings.Contains(out, "step") || strings.Contains(errs, "step") || !strings.Contains(out, "test error after 2 epochs") {
		t.Errorf("piped: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, s := range []string{"demo", "mnist_tutorial", "mnist_dropout", "mnist_weight_noise", "mnist_adam_early_stopping", "mnist_lenet",
		"batch_norm_spiral", "parity_problem", "markov_chain", "reverse_words", "train_from_server"} {
		src, err := os.ReadFile("../../scripts/" + s + ".star")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "ProgressBar()") {
			t.Errorf("scripts/%s.star has no ProgressBar", s)
		}
	}
}
