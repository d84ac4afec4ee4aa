package extensions

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/mainloop"
)

// recordAfterEpoch writes name = values[epochs_done-1] after each epoch.
type recordAfterEpoch struct {
	mainloop.TrainingExtension
	name   string
	values []float64
}

func (r *recordAfterEpoch) AfterEpoch() error {
	m, _ := r.MainLoop()
	e := m.Status().EpochsDone
	if e <= len(r.values) {
		m.Log.CurrentRow()[r.name] = nd.Scalar(nd.Float32, r.values[e-1])
	}
	return nil
}

// TestTrackTheBestAndPatience: a validation error per epoch of
// 5, 4, 4.5, 3, 3.5, 3.2, 3.9, 9, ...; with patience 3 epochs the best is
// epoch 4 (3.0) and training stops after epoch 7, the third epoch without
// improvement.
func TestTrackTheBestAndPatience(t *testing.T) {
	vals := []float64{5, 4, 4.5, 3, 3.5, 3.2, 3.9, 9, 1, 1}
	rec := &recordAfterEpoch{name: "valid_error", values: vals}
	track := must(NewTrackTheBest("valid_error", "", nil, nil))
	stop := must(NewFinishIfNoImprovementAfter("valid_error_best_so_far", 0, 3, "", nil))
	m := mainloop.New(nopAlgorithm{}, rangeStream(2, 0), nil, nil, []mainloop.Extension{rec, track, stop})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	st := m.Status()
	if st.EpochsDone != 7 || st.IterationsDone != 14 {
		t.Fatalf("stopped after %d epochs (%d iterations), want 7 (14)", st.EpochsDone, st.IterationsDone)
	}
	if best, _ := st.Get("best_valid_error"); best != float32(3) { // the record's dtype
		t.Errorf("best_valid_error = %v", best)
	}
	wantBest := map[int]bool{2: true, 4: true, 8: true}
	wantPatience := map[int]int{2: 3, 4: 3, 6: 2, 8: 3, 10: 2, 12: 1, 14: 0}
	for it := 2; it <= 14; it += 2 {
		row, _ := m.Log.Lookup(it)
		if got := row["valid_error_best_so_far"] == true; got != wantBest[it] {
			t.Errorf("iteration %d: best_so_far %v", it, row["valid_error_best_so_far"])
		}
		if got := row["valid_error_best_so_far_patience_epochs"]; got != wantPatience[it] {
			t.Errorf("iteration %d: patience %v, want %d", it, got, wantPatience[it])
		}
	}
	if !mainloop.Truthy(m.Log.CurrentRow()[mainloop.RecordTrainingFinishRequested]) {
		t.Error("no finish request")
	}
	// The state is in the status: a fresh extension over the same log
	// continues from it (what a checkpoint restores).
	if v, ok := st.Get("_valid_error_best_so_far_patience_epochs_last_best"); !ok || !reflect.DeepEqual(v, []int{8, 4}) {
		t.Errorf("patience state %v", v)
	}
}

func TestFinishIfNoImprovementIterationsAndErrors(t *testing.T) {
	if _, err := NewFinishIfNoImprovementAfter("x", 0, 0, "", nil); err == nil {
		t.Error("neither epochs nor iterations: no error")
	}
	if _, err := NewFinishIfNoImprovementAfter("x", 3, 3, "", nil); err == nil {
		t.Error("both epochs and iterations: no error")
	}
	// Best only at iteration 2; patience of 5 iterations checked after each batch.
	rec := &recordAfterBatch{name: "note", value: func(m *mainloop.MainLoop) any {
		if m.Status().IterationsDone == 2 {
			return true
		}
		return nil
	}}
	stop := must(NewFinishIfNoImprovementAfter("note", 5, 0, "patience", Triggers{"after_batch": true, "after_epoch": false}))
	m := mainloop.New(nopAlgorithm{}, rangeStream(4, 0), nil, nil, []mainloop.Extension{&onlyTrue{rec}, stop})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if m.Status().IterationsDone != 7 {
		t.Errorf("stopped at %d, want 7", m.Status().IterationsDone)
	}
	if row, _ := m.Log.Lookup(7); row["patience"] != 0 {
		t.Errorf("patience at 7: %v", row["patience"])
	}
}

// onlyTrue drops nil records (so notification presence means a best).
type onlyTrue struct{ *recordAfterBatch }

func (o *onlyTrue) AfterBatch(b mainloop.Batch) error {
	m, _ := o.MainLoop()
	if v := o.value(m); v != nil {
		m.Log.CurrentRow()[o.name] = v
	}
	return nil
}

func TestEarlyStoppingAndChooseMax(t *testing.T) {
	rec := &recordAfterEpoch{name: "acc", values: []float64{0.5, 0.7, 0.6, 0.65, 0.9}}
	es := must(NewEarlyStopping("acc", nil, "", "", ChooseMax, 0, 2, nil))
	m := mainloop.New(nopAlgorithm{}, rangeStream(1, 0), nil, nil, []mainloop.Extension{rec, es})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if m.Status().EpochsDone != 4 {
		t.Errorf("EarlyStopping(epochs=2) stopped after %d epochs, want 4", m.Status().EpochsDone)
	}
	if best, _ := m.Status().Get("best_acc"); best != float32(0.7) {
		t.Errorf("best_acc %v", best)
	}
	// A checkpoint extension gets an OnLogRecord condition with the file name.
	var saved []string
	ck := must(NewSimpleExtension("Checkpoint", func(c Call) error {
		if len(c.Args) == 1 {
			saved = append(saved, c.Args[0].(string)+"@"+itoa(c.MainLoop.Status().IterationsDone))
		}
		return nil
	}, nil))
	if _, err := NewEarlyStopping("acc", ck, "", "", nil, 0, 2, nil); err == nil {
		t.Error("checkpoint without a file name: no error")
	}
	best := &recordAfterBatch{name: "acc_best_so_far", value: func(m *mainloop.MainLoop) any { return m.Status().IterationsDone == 2 }}
	es = must(NewEarlyStopping("acc", ck, "best.tar", "", nil, 0, 2, nil))
	m = mainloop.New(nopAlgorithm{}, rangeStream(3, 0), nil, nil, []mainloop.Extension{best, es, must(NewFinishAfter(Triggers{"after_n_epochs": 1}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	// Not in the main loop: EarlyStopping ran it as a child.
	if !reflect.DeepEqual(saved, []string{"best.tar@2"}) {
		t.Errorf("checkpoint calls %v", saved)
	}
}

func TestSharedVariableModifierSchedule(t *testing.T) {
	lr := core.NewShared(nd.Scalar(nd.Float32, 0.1), "learning_rate")
	var seen []float64
	svm := must(NewSharedVariableModifier(lr, func(it int, old *nd.Array) (*nd.Array, error) {
		return nd.Scalar(nd.Float64, old.Flat(0)*0.5), nil
	}, 2, nil))
	rec := &recordAfterBatch{name: "lr", value: func(m *mainloop.MainLoop) any {
		seen = append(seen, lr.Value().Flat(0))
		return nil
	}}
	m := mainloop.New(nopAlgorithm{}, rangeStream(3, 0), nil, nil, []mainloop.Extension{svm, rec, must(NewFinishAfter(Triggers{"after_n_batches": 3}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	want := []float64{float64(float32(0.05)), float64(float32(0.025)), float64(float32(0.0125))}
	if !reflect.DeepEqual(seen, want) || lr.Value().DType() != nd.Float32 {
		t.Errorf("schedule %v (%s), want %v", seen, lr.Value().DType(), want)
	}
	if _, err := NewSharedVariableModifier(lr, nil, 3, nil); err == nil {
		t.Error("3 arguments: no error")
	}
	failing := must(NewSharedVariableModifier(lr, func(int, *nd.Array) (*nd.Array, error) { return nil, errors.New("bad schedule") }, 1, nil))
	m = mainloop.New(nopAlgorithm{}, rangeStream(3, 0), nil, nil, []mainloop.Extension{failing})
	m.Messages = &strings.Builder{}
	err := m.Run()
	if err == nil || !strings.Contains(err.Error(), "extension SharedVariableModifier failed in after_batch") || !strings.Contains(err.Error(), "bad schedule") {
		t.Errorf("error %v", err)
	}
}

func TestTimestampCompositeAndOnLogRecord(t *testing.T) {
	ts := must(NewTimestamp("", "", nil))
	ts.Now = func() time.Time { return time.Date(2015, 6, 1, 12, 30, 5, 123456000, time.UTC) }
	var order []string
	child := must(NewSimpleExtension("child", func(c Call) error { order = append(order, "child"); return nil }, Triggers{"after_epoch": true}))
	comp := must(NewCompositeExtension("", []mainloop.Extension{child}, true, func(c Call) error {
		order = append(order, "parent")
		return nil
	}, Triggers{"after_epoch": true}))
	flag := &recordAfterBatch{name: "flag", value: func(m *mainloop.MainLoop) any { return m.Status().IterationsDone == 2 }}
	var fired []int
	watcher := must(NewSimpleExtension("watcher", func(c Call) error {
		fired = append(fired, c.MainLoop.Status().IterationsDone)
		return nil
	}, nil))
	if err := watcher.AddCondition([]mainloop.Callback{mainloop.AfterBatch}, OnLogRecord("flag")); err != nil {
		t.Fatal(err)
	}
	m := mainloop.New(nopAlgorithm{}, rangeStream(3, 0), nil, nil, []mainloop.Extension{ts, comp, flag, watcher, must(NewFinishAfter(Triggers{"after_n_epochs": 1}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if got := m.Log.CurrentRow()["timestamp"]; got != "2015-06-01 12:30:05.123456" {
		t.Errorf("timestamp %v", got)
	}
	if row, _ := m.Log.Lookup(0); row["timestamp"] == nil {
		t.Error("no timestamp before training")
	}
	if !reflect.DeepEqual(order, []string{"parent", "child"}) {
		t.Errorf("composite order %v", order)
	}
	if !reflect.DeepEqual(fired, []int{2}) {
		t.Errorf("OnLogRecord fired at %v", fired)
	}
}
