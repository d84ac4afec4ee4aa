package sqlitelog

import (
	"io"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

type stream struct{ n int }

func (s *stream) Sources() []string               { return []string{"x"} }
func (s *stream) AxisLabels() map[string][]string { return nil }
func (s *stream) ProducesExamples() bool          { return false }
func (s *stream) GetEpochIterator() (fuel.EpochIterator, error) {
	return &iter{n: s.n}, nil
}

type iter struct{ n, i int }

func (it *iter) Next() ([]*nd.Array, error) {
	if it.i >= it.n {
		return nil, io.EOF
	}
	it.i++
	return []*nd.Array{nd.Scalar(nd.Float32, float64(it.i))}, nil
}

type nop struct{}

func (nop) Initialize() error                       { return nil }
func (nop) ProcessBatch(map[string]*nd.Array) error { return nil }

// recorder writes a cost (a 0-d float32 array), a bool, a string and a
// vector to each row.
type recorder struct{ mainloop.TrainingExtension }

func (r *recorder) AfterBatch(mainloop.Batch) error {
	m, _ := r.MainLoop()
	it := m.Status().IterationsDone
	row := m.Log.CurrentRow()
	row["cost"] = nd.Scalar(nd.Float32, 1/float64(it))
	row["odd"] = it%2 == 1
	row["note"] = "it"
	row["vec"] = nd.FromSlice([]float64{float64(it), math.Inf(1)})
	return nil
}

func finishAfter(t *testing.T, n int) mainloop.Extension {
	f, err := extensions.NewFinishAfter(extensions.Triggers{"after_n_batches": n})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRunAndResumedRun trains 3 batches, resumes for 3 more, with the
// database as the log backend; the database then gives back, for the
// resumed run, the rows of both runs, and a channel query matches the
// in-memory log.
func TestRunAndResumedRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.sqlite")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := mainloop.New(nop{}, &stream{n: 4}, nil, nil, []mainloop.Extension{&recorder{}, finishAfter(t, 3)})
	m.LogBackend = db
	m.Messages = io.Discard
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	first := m.Log.UUID
	m.Extensions = []mainloop.Extension{&recorder{}, finishAfter(t, 6)}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	second := m.Log.UUID
	if second == first || m.Log.Status.ResumedFrom != first {
		t.Fatalf("not resumed: %s from %q (first %s)", second, m.Log.Status.ResumedFrom, first)
	}
	db.Close()

	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, _ := db.Runs()
	if len(runs) != 2 {
		t.Fatalf("runs %v", runs)
	}
	got, err := db.Load(second)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Iterations(), m.Log.Iterations()) {
		t.Fatalf("iterations %v, in memory %v", got.Iterations(), m.Log.Iterations())
	}
	if got.Status.IterationsDone != 6 || got.Status.EpochsDone != 1 || got.Status.ResumedFrom != first ||
		!reflect.DeepEqual(got.Status.EpochEnds, []int{4}) {
		t.Errorf("status %+v", got.Status)
	}
	for _, it := range m.Log.Iterations() {
		want, _ := m.Log.Lookup(it)
		row, _ := got.Lookup(it)
		if len(row) != len(want) {
			t.Errorf("iteration %d: %v, in memory %v", it, row, want)
		}
		for k, v := range want {
			switch x := v.(type) {
			case *nd.Array:
				if x.NDim() == 0 {
					if row[k] != x.Flat(0) {
						t.Errorf("iteration %d %s: %v, want %v", it, k, row[k], x.Flat(0))
					}
				} else if a, ok := row[k].(*nd.Array); !ok || !reflect.DeepEqual(a.Float64s(), x.Float64s()) {
					t.Errorf("iteration %d %s: %v, want %v", it, k, row[k], x)
				}
			default:
				if row[k] != v {
					t.Errorf("iteration %d %s: %v (%T), want %v (%T)", it, k, row[k], row[k], v, v)
				}
			}
		}
	}
	// The first run alone has 3 iterations.
	old, err := db.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	if old.Status.IterationsDone != 3 || len(old.Iterations()) != 3 {
		t.Errorf("first run: %d done, rows %v", old.Status.IterationsDone, old.Iterations())
	}
	its, vals, err := db.Channel(second, "cost")
	if err != nil {
		t.Fatal(err)
	}
	wantIts, wantVals := m.Log.Channel("cost")
	if !reflect.DeepEqual(its, wantIts) || !reflect.DeepEqual(vals, wantVals) {
		t.Errorf("channel cost: %v %v, in memory %v %v", its, vals, wantIts, wantVals)
	}
	if len(its) != 6 {
		t.Errorf("channel has %d points", len(its))
	}
	if _, err := db.Load("nope"); err == nil {
		t.Error("unknown run: no error")
	}
}
