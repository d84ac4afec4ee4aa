package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

const logScript = `
load("tensor", "vector", "sqr")
load("blocks.algorithms", "GradientDescent", "Adam")
load("blocks.extensions", "FinishAfter")
load("blocks.extensions.monitoring", "TrainingDataMonitoring")
load("blocks.main_loop", "MainLoop")
load("blocks.bricks", "Linear")
load("blocks.initialization", "Constant")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
x = vector("x")
lin = Linear(name = "lin", input_dim = 1, output_dim = 1, weights_init = Constant(1), biases_init = Constant(0))
lin.initialize()
cost = sqr(lin.apply(x.dimshuffle(0, "x")) - 3.0).mean()
cost.name = "cost"
stream = DataStream(IndexableDataset({"x": [1.0, 2.0, 3.0, 4.0]}), iteration_scheme = SequentialScheme(4, batch_size = 2))
algorithm = GradientDescent(cost = cost, parameters = [lin.W, lin.b], step_rule = Adam(0.1))
main_loop = MainLoop(algorithm = algorithm, data_stream = stream, extensions = [
    TrainingDataMonitoring([cost, algorithm.total_gradient_norm], prefix = "train", after_batch = True),
    FinishAfter(after_n_epochs = 3)])
main_loop.run()
`

// TestRunLog: run --log writes JSON lines, CSV and SQLite logs with the
// same values.
func TestRunLog(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.star")
	if err := os.WriteFile(script, []byte(logScript), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(log string) {
		var out, errb bytes.Buffer
		if code := Main([]string{"run", "--log", filepath.Join(dir, log), script}, nil, &out, &errb); code != 0 {
			t.Fatalf("run --log %s: exit %d: %s", log, code, errb.String())
		}
	}
	run("log.jsonl")
	run("log.csv")
	run("log.sqlite")
	f, err := os.Open(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := mainloop.ReadJSONLines(f)
	if err != nil {
		t.Fatal(err)
	}
	its, vals := l.Channel("train_cost")
	if len(its) != 6 || l.Status.EpochsDone != 3 {
		t.Fatalf("jsonl: %v %v, %d epochs", its, vals, l.Status.EpochsDone)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "log.csv"))
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "iteration,train_cost,train_total_gradient_norm") || !strings.HasPrefix(lines[1], "1,2.5,5,") {
		t.Errorf("csv\n%s", csv)
	}
	db, err := sqlitelog.Open(filepath.Join(dir, "log.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, _ := db.Runs()
	if len(runs) != 1 {
		t.Fatalf("runs %v", runs)
	}
	sits, svals, err := db.Channel(runs[0], "train_cost")
	if err != nil {
		t.Fatal(err)
	}
	// Both runs are deterministic: same values in every format.
	for i := range its {
		if sits[i] != its[i] || svals[i] != vals[i] {
			t.Errorf("sqlite channel %v %v, jsonl %v %v", sits, svals, its, vals)
			break
		}
	}
}

func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.star")
	if err := os.WriteFile(script, []byte(logScript), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--log", filepath.Join(dir, "log.jsonl"), script}, nil, &out, &errb); code != 0 {
		t.Fatalf("run: %s", errb.String())
	}
	for _, args := range [][]string{
		{"plot", filepath.Join(dir, "log.jsonl"), "--channels", "train_cost", "--out", filepath.Join(dir, "a.png")},
		{"plot", "--x", "epochs", "--out", filepath.Join(dir, "b.svg"), filepath.Join(dir, "log.jsonl")},
	} {
		out.Reset()
		errb.Reset()
		if code := Main(args, nil, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.png")); !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Error("a.png is not a PNG")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.svg")); !bytes.Contains(b, []byte("<svg")) {
		t.Error("b.svg is not an SVG")
	}
	errb.Reset()
	if code := Main([]string{"plot", filepath.Join(dir, "log.jsonl"), "--channels", "nope"}, nil, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), `no numeric record "nope" (it has: train_cost, train_total_gradient_norm)`) {
		t.Errorf("unknown channel: exit %d, %s", code, errb.String())
	}
}

// TestRunLogSQLiteTwoRuns: a script that runs its main loop twice (the
// second run resumes) writes both runs, chained, to the database.
func TestRunLogSQLiteTwoRuns(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.star")
	src := logScript + `
main_loop = MainLoop(algorithm = algorithm, data_stream = stream, log = main_loop.log,
                     extensions = [FinishAfter(after_n_epochs = 4)])
main_loop.run()
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--log", filepath.Join(dir, "log.db"), script}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	db, err := sqlitelog.Open(filepath.Join(dir, "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if runs, _ := db.Runs(); len(runs) != 2 {
		t.Fatalf("runs %v", runs)
	}
	last, err := latestRun(db)
	if err != nil {
		t.Fatal(err)
	}
	l, err := db.Load(last)
	if err != nil {
		t.Fatal(err)
	}
	if l.Status.ResumedFrom == "" || l.Status.IterationsDone != 8 || len(l.Iterations()) < 6 {
		t.Errorf("resumed run: from %q, rows %v", l.Status.ResumedFrom, l.Iterations())
	}
}
