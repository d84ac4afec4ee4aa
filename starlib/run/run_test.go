package run_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/parallel"
)

// script trains w toward 3 by plain gradient descent, twice: 3 batches,
// then on to 5.
const script = `
load("blocks.config", "config")
load("tensor", "vector", "sqr")
load("theano", "shared")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.extensions", "FinishAfter")
load("blocks.main_loop", "MainLoop")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")

cfg = config(lr = 0.1, batches = 3)
x = vector("x")
w = shared(0.0, name = "w")
cost = sqr(w * x - 3.0).mean()
ds = IndexableDataset({"x": [1.0, 1.0, 1.0, 1.0]})
stream = DataStream(ds, iteration_scheme = SequentialScheme(4, batch_size = 2))
algorithm = GradientDescent(cost = cost, parameters = [w], step_rule = Scale(cfg.lr))
main_loop = MainLoop(algorithm = algorithm, data_stream = stream,
                     extensions = [FinishAfter(after_n_batches = cfg.batches)])
main_loop.run()
main_loop.log.current_row["training_finish_requested"] = False
main_loop.extensions[0].add_condition(["after_batch"], lambda log: log.status["iterations_done"] == 5)
main_loop.run()
`

func newInterp(t *testing.T, opts starlib.Options) *starlib.Interp {
	t.Helper()
	opts.Library = all.Library()
	opts.Stdout = &strings.Builder{}
	in, err := starlib.NewInterp(opts)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// A run records its main_loop.run() calls (TakeLoopRuns), its settings in
// the log's row 0 (RecordConfig) and, for its checkpoints, the command,
// the overrides, the tunables in order and the microbatches (Info).
func TestRunRecords(t *testing.T) {
	ck := &run.Checkpoint{Command: []string{"blocks-repl", "run", "s.star"}}
	par := &run.Parallel{Comm: parallel.Single{}, Microbatches: 2}
	in := newInterp(t, starlib.Options{Overrides: map[string]string{"lr": "0.5"}, Locals: run.Locals(ck, par)})
	if run.CheckpointOf(in.Thread) != ck || run.ParallelOf(in.Thread) != par {
		t.Fatal("the run's locals are not the options'")
	}
	if _, err := in.ExecFile("s.star", []byte(script)); err != nil {
		t.Fatal(starlib.Backtrace(err))
	}
	runs := run.TakeLoopRuns(in)
	if len(runs) != 2 || runs[0].Iteration != 3 || runs[1].Iteration != 5 || runs[0].Paused || runs[1].Continued {
		t.Fatalf("loop runs: %+v", runs)
	}
	if again := run.TakeLoopRuns(in); again != nil {
		t.Errorf("taken twice: %+v", again)
	}
	row, err := runs[0].Log.Row(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := row["config"]; got != `{"lr": 0.5, "batches": 3}` {
		t.Errorf("config record %v", got)
	}
	steps, _, _ := par.Training()
	if steps != 5 || len(par.Sharded()) != 1 { // one main loop, run twice
		t.Errorf("parallel run: %d steps, %d loops", steps, len(par.Sharded()))
	}

	info := run.Info(in.Thread)
	if strings.Join(info.Command, " ") != "blocks-repl run s.star" || info.Run.Overrides["lr"] != "0.5" ||
		strings.Join(info.Run.ConfigOrder, ",") != "lr,batches" || info.Run.Microbatches != 2 ||
		len(info.Run.Scripts) != 1 || string(info.Run.Scripts[0].Source) != script || !strings.HasSuffix(info.Script, "s.star") {
		t.Errorf("run info: %+v", info)
	}
	lr, err := info.Run.Config["lr"].Decode()
	if err != nil || lr != 0.5 {
		t.Errorf("lr recorded as %v (%v)", lr, err)
	}
}

// Outside a run nothing is recorded; a plain run has no Checkpoint and
// records no microbatches.
func TestPlainRun(t *testing.T) {
	if run.CheckpointOf(nil) != nil || run.ParallelOf(nil) != nil || run.Info(nil).Run.Overrides != nil {
		t.Error("a thread that runs no script has a run")
	}
	in := newInterp(t, starlib.Options{})
	if _, err := in.ExecFile("s.star", []byte(script)); err != nil {
		t.Fatal(starlib.Backtrace(err))
	}
	if run.CheckpointOf(in.Thread) != nil || run.ParallelOf(in.Thread) != nil {
		t.Error("a plain run has a Checkpoint or a Parallel")
	}
	if info := run.Info(in.Thread); info.Command != nil || info.Run.Microbatches != 0 || info.Run.Overrides == nil {
		t.Errorf("run info: %+v", info)
	}
	if n := len(run.TakeLoopRuns(in)); n != 2 {
		t.Errorf("%d loop runs", n)
	}
}

// --no-train: main_loop.run() stops the script before anything trains
// (starlib.StartTraining); --print-config: it prints the settings, stops
// (starlib.CheckSettings) and locks no checkpoint path.
func TestMainLoopHooks(t *testing.T) {
	in := newInterp(t, starlib.Options{})
	in.SetNoTrain(true)
	if _, err := in.ExecFile("s.star", []byte(script)); !errors.Is(err, starlib.ErrNoTrain) {
		t.Errorf("--no-train: %v", err)
	}
	if runs := run.TakeLoopRuns(in); len(runs) != 0 || in.TrainingRuns() != 0 {
		t.Errorf("--no-train trained: %+v", runs)
	}

	pc := &starlib.PrintConfig{}
	out := &strings.Builder{}
	in, err := starlib.NewInterp(starlib.Options{Library: all.Library(), Stdout: out, PrintConfig: pc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.ExecFile("s.star", []byte(script)); !errors.Is(err, starlib.ErrConfigPrinted) || !pc.Printed {
		t.Errorf("--print-config: %v", err)
	}
	if out.String() != "lr = 0.1\nbatches = 3\n" {
		t.Errorf("--print-config printed %q", out.String())
	}
	dir := t.TempDir()
	if p, err := run.CheckpointPath(in.Thread, dir+"/missing/c.tar"); err != nil || p != dir+"/missing/c.tar" {
		t.Errorf("--print-config checked the checkpoint path: %q %v", p, err)
	}
}
