package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// timedScript trains 2 epochs of 10 batches with Timing and 11 monitored
// channels (more than the plot's 8 colours), recorded after each epoch.
const timedScript = `load("tensor", "matrix", "lmatrix")
load("blocks.bricks", "MLP", "Rectifier", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy", "MisclassificationRate")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("fuel.datasets", "EmbeddedMNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("fuel.transformers", "Flatten")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter", "Timing")
load("blocks.extensions.monitoring", "TrainingDataMonitoring")
load("blocks.graph", "ComputationGraph")
x = matrix("features")
y = lmatrix("targets")
mlp = MLP([Rectifier(), Softmax()], [784, 20, 10], weights_init = IsotropicGaussian(0.01), biases_init = Constant(0))
mlp.initialize()
y_hat = mlp.apply(x)
cost = CategoricalCrossEntropy().apply(y.flatten(), y_hat)
cost.name = "cost"
err = MisclassificationRate().apply(y.flatten(), y_hat)
err.name = "error_rate"
extra = []
for i in range(9):
    v = cost * (i + 1)
    v.name = "c%d" % i
    extra.append(v)
train = EmbeddedMNIST(("train",))
stream = Flatten(DataStream.default_stream(train, iteration_scheme = SequentialScheme(500, 50)))
main_loop = MainLoop(GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters, step_rule = Scale(0.01)), stream,
    extensions = [FinishAfter(after_n_epochs = 2), Timing(), TrainingDataMonitoring([cost, err] + extra, prefix = "train", after_epoch = True)])
main_loop.run()
`

// run --log writes a JSON-lines or CSV row only for the iterations that
// have records (row 0 and the two epoch ends), not one per batch.
func TestLogFilesLeaveOutEmptyRows(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(timedScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"log.jsonl", "log.csv"} {
		w := startWatched(t, dir, nil, "run", "--log", name, "exp.star")
		if code := w.exitCode(t, 2*time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, w.stderr())
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		// The status (JSON) or the header (CSV), then rows 0, 10, 20.
		if len(lines) != 4 || !strings.HasPrefix(lines[3], map[string]string{"log.jsonl": `{"iteration":20,`, "log.csv": "20,"}[name]) {
			t.Errorf("%s has %d lines:\n%s", name, len(lines), b)
		}
	}
	// plot without --channels: Timing's time_* records in a panel of
	// their own ("seconds"), and the 11 other channels drawn in 11
	// different line styles although the palette has 8 colours.
	code, out, errs := runBinary(t, "", "plot", filepath.Join(dir, "log.jsonl"), "--out", filepath.Join(dir, "curves.svg"))
	if code != 0 {
		t.Fatalf("plot: exit %d\n%s%s", code, out, errs)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "curves.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), ">seconds<") {
		t.Error("plot drew Timing's time_* records with the other records (no panel in seconds)")
	}
	styles := map[string]bool{}
	for _, m := range regexp.MustCompile(`style="fill:none;stroke:(#[0-9A-F]{6};stroke-width:1\.5[^"]*)"`).FindAllStringSubmatch(string(svg), -1) {
		styles[m[1]] = true
	}
	if len(styles) < 11 {
		t.Errorf("11 channels in one panel drawn with %d line styles: %v", len(styles), styles)
	}
}

// The shipped regularization scripts log their training cost as
// train_cost, not train_train_cost.
func TestShippedScriptsChannelNames(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []string{"mnist_dropout.star", "mnist_weight_noise.star"} {
		log := filepath.Join(dir, s+".jsonl")
		code, out, errs := runBinary(t, "", "run", "--set", "epochs=1", "--set", "examples=500", "--set", "hidden=20", "--log", log, "--set", "save_to="+filepath.Join(dir, s+".tar"), "../../scripts/"+s)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", s, code, out, errs)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"train_cost":`) || strings.Contains(string(b), "train_train") {
			t.Errorf("%s logs %s", s, regexp.MustCompile(`"train_\w+"`).FindAllString(string(b), -1))
		}
	}
}
