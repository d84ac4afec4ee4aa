package starlib_test

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/checkpoint"
)

// logScript trains a small model with MainLoop(log=LOG), Printing
// printing the log; LOG is set by the caller (None, DuckLog() or
// RowLog()). RowLog's marks is an attribute of its own that a script
// extension appends to.
const logScript = `
load("tensor", "matrix", "sqr")
load("blocks.bricks", "Linear")
load("blocks.initialization", "Constant")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.extensions", "FinishAfter", "Printing", "SimpleExtension")
load("blocks.extensions.monitoring", "TrainingDataMonitoring")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.log", "TrainingLog")
load("blocks.main_loop", "MainLoop")
load("blocks.graph", "ComputationGraph")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("numpy", "arange")

def _dl_init(self):
    self.rows = {}
    self.status = {"iterations_done": 0, "epochs_done": 0}

def _dl_getitem(self, i):
    if i not in self.rows:
        self.rows[i] = {}
    return self.rows[i]

DuckLog = type("DuckLog", (object,), {"__init__": _dl_init, "__getitem__": _dl_getitem,
    "current_row": property(lambda self: self[self.status["iterations_done"]])})

def _rl_init(self):
    super(RowLog, self).__init__()
    self.marks = []

RowLog = type("RowLog", (TrainingLog,), {"__init__": _rl_init,
    "current_row": property(lambda self: super(RowLog, self).current_row)})

def mark(main_loop, which_callback, *args):
    log = main_loop.log
    log.current_row["mark"] = log.status["iterations_done"] * 10
    if hasattr(log, "marks"):
        log.marks.append(log.status["iterations_done"])

x = matrix("features")
lin = Linear(input_dim = 2, output_dim = 1, weights_init = Constant(0.1), biases_init = Constant(0), name = "lin")
lin.initialize()
cost = sqr(lin.apply(x)).sum()
cost.name = "cost"
stream = DataStream(IndexableDataset({"features": arange(16, dtype = "float32").reshape((8, 2)) / 16}),
                    iteration_scheme = SequentialScheme(8, 2))
extensions = [TrainingDataMonitoring([cost], after_batch = True), SimpleExtension(mark, after_batch = True),
              FinishAfter(after_n_batches = 6), Printing()]
if CHECKPOINT:
    extensions.append(Checkpoint(CHECKPOINT, every_n_batches = 1, keep_last = 10))
main_loop = MainLoop(algorithm = GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters, step_rule = Scale(0.1)),
                     data_stream = stream, log = LOG, extensions = extensions)
main_loop.run()
log = main_loop.log
rows = [{k: log[i].get(k) for k in ["cost", "mark"]} for i in range(7)]
marks = getattr(log, "marks", None)
`

func runLogScript(t *testing.T, logExpr, ckpt string, ck *run.Checkpoint) (string, starlark.StringDict) {
	t.Helper()
	src := "LOG_EXPR = None\n" + strings.Replace(logScript, "log = LOG,", "log = "+logExpr+",", 1)
	src = strings.Replace(src, "if CHECKPOINT:", "CHECKPOINT = "+ckpt+"\nif CHECKPOINT:", 1)
	var out bytes.Buffer
	g, err := starlib.ExecFile("log.star", []byte(src), starlib.Options{Stdout: &out, FloatX: "float32", Library: all.Library(), Locals: run.Locals(ck, nil)})
	if err != nil {
		t.Fatalf("log=%s: %v\n%s", logExpr, starlib.Backtrace(err), out.String())
	}
	return out.String(), g
}

// TestScriptLogPrintingAndRows: with a plain script object or a
// TrainingLog subclass as the log, training writes the same rows, and
// Printing (which reads the loop's log) prints the same text as with a
// TrainingLog.
func TestScriptLogPrintingAndRows(t *testing.T) {
	wantOut, want := runLogScript(t, "None", `""`, nil)
	if !strings.Contains(wantOut, "mark: 60") || !strings.Contains(wantOut, "cost: ") {
		t.Fatalf("Printing did not print the records:\n%s", wantOut)
	}
	for _, expr := range []string{"DuckLog()", "RowLog()"} {
		out, g := runLogScript(t, expr, `""`, nil)
		if out != wantOut {
			t.Errorf("log=%s: Printing printed\n%s\nwant\n%s", expr, out, wantOut)
		}
		if got, w := g["rows"].String(), want["rows"].String(); got != w {
			t.Errorf("log=%s: rows %s, want %s", expr, got, w)
		}
		if expr == "DuckLog()" {
			if _, ok := g["log"].(starlib.ScriptObject); !ok {
				t.Errorf("main_loop.log is %s, want the script's object", g["log"].Type())
			}
		}
	}
}

// TestScriptLogResume: a TrainingLog subclass's log resumes from a
// checkpoint taken mid-run with its rows and its own attributes, as the
// uninterrupted run has them.
func TestScriptLogResume(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.tar")
	_, want := runLogScript(t, "RowLog()", `"`+path+`"`, nil)
	if got := want["marks"].String(); got != "[1, 2, 3, 4, 5, 6]" {
		t.Fatalf("marks %s", got)
	}
	mid := filepath.Join(dir, "run_iter3.tar")
	c, err := checkpoint.Read(mid)
	if err != nil {
		t.Fatal(err)
	}
	src := &checkpoint.ResumeSource{Checkpoint: c, Path: mid, ScriptPath: c.SavedTo()}
	_, got := runLogScript(t, "RowLog()", `"`+path+`"`, &run.Checkpoint{Resume: src})
	if !src.Claimed {
		t.Fatal("the checkpoint was not resumed")
	}
	for _, k := range []string{"marks", "rows"} {
		if !reflect.DeepEqual(got[k].String(), want[k].String()) {
			t.Errorf("resumed %s = %s, want %s", k, got[k], want[k])
		}
	}
}
