package mainloop_test

import (
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// exampleStream is Fuel's IterableDataset(range(n)).get_example_stream():
// each item is one example, a 0-d array, of the source "data". With
// maxEpochs > 0 it gives that many epochs, then io.EOF.
type exampleStream struct {
	n, maxEpochs, epochs int
}

func (s *exampleStream) Sources() []string               { return []string{"data"} }
func (s *exampleStream) AxisLabels() map[string][]string { return nil }
func (s *exampleStream) ProducesExamples() bool          { return true }
func (s *exampleStream) GetEpochIterator() (fuel.EpochIterator, error) {
	if s.maxEpochs > 0 && s.epochs == s.maxEpochs {
		return nil, io.EOF
	}
	s.epochs++
	return &exampleIterator{n: s.n}, nil
}

type exampleIterator struct{ i, n int }

func (it *exampleIterator) Next() ([]*nd.Array, error) {
	if it.i == it.n {
		return nil, io.EOF
	}
	it.i++
	return []*nd.Array{nd.Scalar(nd.Int64, float64(it.i-1))}, nil
}

// mockAlgorithm is Blocks' MockAlgorithm: it remembers the last batch.
type mockAlgorithm struct {
	batch       map[string]float64
	initialized int
	events      *[]string
}

func (a *mockAlgorithm) Initialize() error {
	a.initialized++
	if a.events != nil {
		*a.events = append(*a.events, "initialize")
	}
	return nil
}

func (a *mockAlgorithm) ProcessBatch(b map[string]*nd.Array) error {
	a.batch = map[string]float64{}
	for k, v := range b {
		a.batch[k] = v.Flat(0)
	}
	if a.events != nil {
		*a.events = append(*a.events, "process_batch")
	}
	return nil
}

// writeBatch is Blocks' WriteBatchExtension.
type writeBatch struct {
	mainloop.TrainingExtension
	alg *mockAlgorithm
}

func (w *writeBatch) AfterBatch(mainloop.Batch) error {
	m, err := w.MainLoop()
	if err != nil {
		return err
	}
	m.Log.CurrentRow()["batch"] = w.alg.batch
	return nil
}

func mustFinishAfter(t *testing.T, tr extensions.Triggers) *extensions.FinishAfter {
	t.Helper()
	f, err := extensions.NewFinishAfter(tr)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Blocks' tests/test_main_loop.py::test_main_loop.
func TestMainLoop(t *testing.T) {
	alg := &mockAlgorithm{}
	m := mainloop.New(alg, &exampleStream{n: 10}, nil, nil,
		[]mainloop.Extension{&writeBatch{alg: alg}, mustFinishAfter(t, extensions.Triggers{"after_n_epochs": 2})})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	st := m.Status()
	if st.IterationsDone != 20 || st.EpochsDone != 2 || !reflect.DeepEqual(st.EpochEnds, []int{10, 20}) {
		t.Fatalf("iterations %d epochs %d _epoch_ends %v", st.IterationsDone, st.EpochsDone, st.EpochEnds)
	}
	if m.Log.Len() != 20 {
		t.Errorf("len(log) = %d, want 20 (rows 1..20)", m.Log.Len())
	}
	for i := 0; i < 20; i++ {
		row, _ := m.Log.Lookup(i + 1)
		if got := row["batch"]; !reflect.DeepEqual(got, map[string]float64{"data": float64(i % 10)}) {
			t.Errorf("log[%d]['batch'] = %v", i+1, got)
		}
	}
	last := m.Log.CurrentRow()
	if last[mainloop.RecordTrainingFinishRequested] != true || last[mainloop.RecordTrainingFinished] != true {
		t.Errorf("last row %v", last)
	}
	if alg.initialized != 1 || !st.TrainingStarted || st.EpochStarted {
		t.Errorf("initialized %d, status %+v", alg.initialized, st)
	}
}

// Blocks' test_training_resumption (without pickling).
func TestTrainingResumption(t *testing.T) {
	alg := &mockAlgorithm{}
	finish := mustFinishAfter(t, extensions.Triggers{"after_n_batches": 14})
	var resumed int
	onRes := &callbackRecorder{onResumption: func() { resumed++ }}
	m := mainloop.New(alg, &exampleStream{n: 10}, nil, nil, []mainloop.Extension{&writeBatch{alg: alg}, finish, onRes})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if m.Status().IterationsDone != 14 {
		t.Fatalf("first run: %d iterations", m.Status().IterationsDone)
	}
	oldUUID := m.Log.UUID
	if err := finish.AddCondition([]mainloop.Callback{mainloop.AfterBatch}, func(l *mainloop.TrainingLog) bool {
		return l.Status.IterationsDone == 27
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	st := m.Status()
	if st.IterationsDone != 27 || st.EpochsDone != 2 {
		t.Fatalf("after resumption: iterations %d epochs %d", st.IterationsDone, st.EpochsDone)
	}
	for i := 0; i < 27; i++ {
		row, _ := m.Log.Lookup(i + 1)
		if got := row["batch"]; !reflect.DeepEqual(got, map[string]float64{"data": float64(i % 10)}) {
			t.Errorf("log[%d]['batch'] = %v", i+1, got)
		}
	}
	if resumed != 1 || st.ResumedFrom != oldUUID || m.Log.UUID == oldUUID || alg.initialized != 1 {
		t.Errorf("on_resumption %d times, resumed_from %q (old %q), initialized %d", resumed, st.ResumedFrom, oldUUID, alg.initialized)
	}
}

// callbackRecorder records every callback in events.
type callbackRecorder struct {
	mainloop.TrainingExtension
	events       *[]string
	onResumption func()
	afterBatch   func(m *mainloop.MainLoop) error
	onError      func(err error) error
	errors       []error
}

func (c *callbackRecorder) add(s string) {
	if c.events != nil {
		*c.events = append(*c.events, s)
	}
}
func (c *callbackRecorder) BeforeTraining() error { c.add("before_training"); return nil }
func (c *callbackRecorder) BeforeEpoch() error    { c.add("before_epoch"); return nil }
func (c *callbackRecorder) BeforeBatch(mainloop.Batch) error {
	c.add("before_batch")
	return nil
}
func (c *callbackRecorder) AfterBatch(mainloop.Batch) error {
	c.add("after_batch")
	if c.afterBatch != nil {
		m, _ := c.MainLoop()
		return c.afterBatch(m)
	}
	return nil
}
func (c *callbackRecorder) AfterEpoch() error    { c.add("after_epoch"); return nil }
func (c *callbackRecorder) AfterTraining() error { c.add("after_training"); return nil }
func (c *callbackRecorder) OnResumption() error {
	c.add("on_resumption")
	if c.onResumption != nil {
		c.onResumption()
	}
	return nil
}
func (c *callbackRecorder) OnError(err error) error {
	c.add("on_error")
	c.errors = append(c.errors, err)
	if c.onError != nil {
		return c.onError(err)
	}
	return nil
}

func TestEventOrder(t *testing.T) {
	var events []string
	alg := &mockAlgorithm{events: &events}
	rec := &callbackRecorder{events: &events}
	m := mainloop.New(alg, &exampleStream{n: 2}, nil, nil, []mainloop.Extension{rec, mustFinishAfter(t, extensions.Triggers{"after_n_epochs": 2})})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	epoch := []string{"before_epoch", "before_batch", "process_batch", "after_batch", "before_batch", "process_batch", "after_batch", "after_epoch"}
	want := append(append(append([]string{"before_training", "initialize"}, epoch...), epoch...), "after_training")
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events\n%v\nwant\n%v", events, want)
	}
}

func TestErrorFiresOnError(t *testing.T) {
	boom := errors.New("boom")
	rec := &callbackRecorder{afterBatch: func(*mainloop.MainLoop) error { return boom }}
	var events []string
	rec.events = &events
	m := mainloop.New(&mockAlgorithm{}, &exampleStream{n: 10}, nil, nil, []mainloop.Extension{rec, mustFinishAfter(t, extensions.Triggers{"after_epoch": true})})
	m.Messages = io.Discard
	err := m.Run()
	if !errors.Is(err, boom) {
		t.Fatalf("Run returned %v", err)
	}
	if len(rec.errors) != 1 || !errors.Is(rec.errors[0], boom) {
		t.Errorf("on_error got %v", rec.errors)
	}
	// The error names the extension and the callback.
	if got := m.Log.CurrentRow()[mainloop.RecordGotException]; got != "extension callbackRecorder failed in after_batch: boom" {
		t.Errorf("got_exception = %v", got)
	}
	for _, e := range events {
		if e == "after_training" {
			t.Error("after_training ran after an error")
		}
	}

	// An error in on_error stops the other on_error handlers; the original
	// error is returned.
	first := &callbackRecorder{afterBatch: func(*mainloop.MainLoop) error { return boom }, onError: func(error) error { return errors.New("handler failed") }}
	second := &callbackRecorder{}
	m = mainloop.New(&mockAlgorithm{}, &exampleStream{n: 10}, nil, nil, []mainloop.Extension{first, second})
	m.Messages = io.Discard
	if err := m.Run(); !errors.Is(err, boom) {
		t.Fatalf("Run returned %v", err)
	}
	if len(first.errors) != 1 || len(second.errors) != 0 {
		t.Errorf("on_error calls: %d, %d", len(first.errors), len(second.errors))
	}
	if _, ok := m.Log.CurrentRow()[mainloop.RecordGotException]; !ok {
		t.Error("no got_exception")
	}
}

func TestEmptyEpochIsAnError(t *testing.T) {
	m := mainloop.New(&mockAlgorithm{}, &exampleStream{n: 0}, nil, nil, nil)
	m.Messages = io.Discard
	err := m.Run()
	if err == nil || !strings.Contains(err.Error(), "epoch iterator yielded zero batches") {
		t.Fatalf("got %v", err)
	}
	if _, ok := m.Log.CurrentRow()[mainloop.RecordGotException]; !ok {
		t.Error("no got_exception")
	}
}

func TestStreamOutOfEpochsEndsQuietly(t *testing.T) {
	var events []string
	rec := &callbackRecorder{events: &events}
	m := mainloop.New(&mockAlgorithm{}, &exampleStream{n: 3, maxEpochs: 2}, nil, nil, []mainloop.Extension{rec})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if m.Status().IterationsDone != 6 || m.Status().EpochsDone != 2 {
		t.Errorf("status %+v", m.Status())
	}
	if events[len(events)-1] != "after_epoch" || m.Log.CurrentRow()[mainloop.RecordTrainingFinished] != nil {
		t.Errorf("training was not finished by the stream ending: %v", events)
	}
}

// interruptRun trains on endless epochs of 10 examples, sending sigs[k]
// after batch k.
func interruptRun(t *testing.T, sigs map[int][]os.Signal) *mainloop.MainLoop {
	t.Helper()
	ch := make(chan os.Signal, 8)
	var events []string
	rec := &callbackRecorder{events: &events, afterBatch: func(m *mainloop.MainLoop) error {
		for _, s := range sigs[m.Status().IterationsDone] {
			ch <- s
		}
		if m.Status().IterationsDone > 100 {
			t.Fatal("the interrupt did not stop training")
		}
		return nil
	}}
	m := mainloop.New(&mockAlgorithm{}, &exampleStream{n: 10}, nil, nil, []mainloop.Extension{rec})
	m.Signals = ch
	m.Messages = io.Discard
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if events[len(events)-1] != "after_training" {
		t.Errorf("after_training did not run: %v", events[len(events)-3:])
	}
	return m
}

func TestInterrupts(t *testing.T) {
	// One Ctrl+C finishes the epoch.
	m := interruptRun(t, map[int][]os.Signal{3: {os.Interrupt}})
	if st := m.Status(); st.IterationsDone != 10 || st.EpochsDone != 1 || !st.EpochInterruptReceived || st.BatchInterruptReceived {
		t.Errorf("one SIGINT: %+v", st)
	}
	if row, _ := m.Log.Lookup(3); row[mainloop.RecordEpochInterruptReceived] != true {
		t.Errorf("row 3: %v", row)
	}
	if m.Log.CurrentRow()[mainloop.RecordTrainingFinished] != true {
		t.Error("training_finished not recorded")
	}

	// Two finish the batch.
	m = interruptRun(t, map[int][]os.Signal{3: {os.Interrupt, os.Interrupt}})
	if st := m.Status(); st.IterationsDone != 3 || st.EpochsDone != 0 || !st.BatchInterruptReceived {
		t.Errorf("two SIGINTs: %+v", st)
	}
	if row, _ := m.Log.Lookup(3); row[mainloop.RecordBatchInterruptReceived] != true || row[mainloop.RecordTrainingFinished] != true {
		t.Errorf("row 3: %v", row)
	}

	// The second one may come later in the epoch.
	m = interruptRun(t, map[int][]os.Signal{3: {os.Interrupt}, 5: {os.Interrupt}})
	if st := m.Status(); st.IterationsDone != 5 {
		t.Errorf("SIGINT at 3 and 5: stopped after %d batches", st.IterationsDone)
	}

	// SIGTERM finishes the batch at once.
	m = interruptRun(t, map[int][]os.Signal{4: {syscall.SIGTERM}})
	if st := m.Status(); st.IterationsDone != 4 || !st.BatchInterruptReceived {
		t.Errorf("SIGTERM: %+v", st)
	}
}

func TestLogRowsAndStatus(t *testing.T) {
	l := mainloop.NewTrainingLog()
	if _, err := l.Row(-1); err == nil {
		t.Error("negative row: no error")
	}
	if _, err := l.PreviousRow(); err == nil {
		t.Error("previous row at iteration 0: no error")
	}
	l.CurrentRow()["x"] = 1
	if l.Len() != 1 {
		t.Errorf("len %d", l.Len())
	}
	if v, _ := l.Status.Get("resumed_from"); v != nil {
		t.Errorf("resumed_from = %v, want nil", v)
	}
	if err := l.Status.Set("best_cost", 0.5); err != nil {
		t.Fatal(err)
	}
	if err := l.Status.Set("iterations_done", "x"); err == nil {
		t.Error("bad type: no error")
	}
	want := []string{"_epoch_ends", "batch_interrupt_received", "best_cost", "epoch_interrupt_received", "epoch_started",
		"epochs_done", "iterations_done", "received_first_batch", "resumed_from", "training_started"}
	if got := l.Status.Keys(); !reflect.DeepEqual(got, want) {
		t.Errorf("keys %v", got)
	}
}
