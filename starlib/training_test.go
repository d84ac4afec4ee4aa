package starlib_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

// TestSQLiteLogBackend: MainLoop(log_backend="sqlite") stores the log in
// BLOCKS_SQLITEDB; running the main loop again resumes it under a new run
// chained to the first; a channel read back equals the in-memory log's.
func TestSQLiteLogBackend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blocks.sqlite")
	t.Setenv("BLOCKS_SQLITEDB", path)
	src := `
load("tensor", "vector")
load("blocks.algorithms", "UpdatesAlgorithm")
load("blocks.extensions", "FinishAfter", "SimpleExtension")
load("blocks.main_loop", "MainLoop")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
stream = DataStream(IndexableDataset({"x": [1.0, 2.0, 3.0]}), iteration_scheme = SequentialScheme(3, batch_size = 1))
algorithm = UpdatesAlgorithm(on_unused_sources = "ignore")
def record(main_loop, which_callback, *args):
    main_loop.log.current_row["value"] = main_loop.status["iterations_done"] * 0.5
main_loop = MainLoop(algorithm = algorithm, data_stream = stream, log_backend = "sqlite",
                     extensions = [SimpleExtension(record, after_batch = True), FinishAfter(after_n_epochs = 1)])
main_loop.run()
first = main_loop.log.status["iterations_done"]
main_loop.log.current_row["training_finish_requested"] = False
main_loop = MainLoop(algorithm = algorithm, data_stream = stream, log_backend = "sqlite",
                     log = main_loop.log, extensions = [SimpleExtension(record, after_batch = True), FinishAfter(after_n_batches = 5)])
main_loop.run()
`
	var out bytes.Buffer
	g, err := starlib.ExecFile("sqlite.star", []byte(src), starlib.Options{Stdout: &out, FloatX: "float64", Library: all.Library()})
	if err != nil {
		t.Fatalf("%v\n%s", starlib.Backtrace(err), out.String())
	}
	m := g["main_loop"].(*starblocks.MainLoop).M
	if m.Log.Status.ResumedFrom == "" || m.Log.Status.IterationsDone != 5 {
		t.Fatalf("status %+v", m.Log.Status)
	}
	db, err := sqlitelog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	its, vals, err := db.Channel(m.Log.UUID, "value")
	if err != nil {
		t.Fatal(err)
	}
	wIts, wVals := m.Log.Channel("value")
	if len(its) != 5 || len(wIts) != 5 {
		t.Fatalf("sqlite %v %v, memory %v %v", its, vals, wIts, wVals)
	}
	for i := range its {
		if its[i] != wIts[i] || vals[i] != wVals[i] {
			t.Errorf("sqlite %v %v, memory %v %v", its, vals, wIts, wVals)
			break
		}
	}
	old, err := db.Load(m.Log.Status.ResumedFrom)
	if err != nil || old.Status.IterationsDone != 3 {
		t.Errorf("first run: %v %+v", err, old)
	}
}
