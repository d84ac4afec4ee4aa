package mainloop_test

import (
	"maps"
	"reflect"
	"testing"

	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// outsideLog is a log kept outside the loop (as a script's log object):
// its own status and rows, synced by copying.
type outsideLog struct {
	iterations int
	rows       map[int]map[string]any
	pulls      int
	pushes     int
}

func (o *outsideLog) row() map[string]any {
	r := o.rows[o.iterations]
	if r == nil {
		r = map[string]any{}
		o.rows[o.iterations] = r
	}
	return r
}

func (o *outsideLog) Pull(l *mainloop.TrainingLog) error {
	o.pulls++
	l.Status.IterationsDone = o.iterations
	maps.Copy(l.CurrentRow(), o.row())
	return nil
}

func (o *outsideLog) Push(l *mainloop.TrainingLog) error {
	o.pushes++
	o.iterations = l.Status.IterationsDone
	maps.Copy(o.row(), l.CurrentRow())
	return nil
}

// finishOutside writes into the outside log only, as a script extension
// writes the script's log: at iteration 3, a request to finish.
type finishOutside struct {
	mainloop.TrainingExtension
	out *outsideLog
}

func (f *finishOutside) AfterBatch(mainloop.Batch) error {
	if f.out.iterations == 3 {
		f.out.row()[mainloop.RecordTrainingFinishRequested] = true
	}
	return nil
}

// TestLogMirror: with a Mirror, what an extension writes into the outside
// log reaches the loop (it stops at iteration 3 on the request), and
// what the loop and the library's extensions write reaches the outside
// log (the batches, training_finished, the iterations).
func TestLogMirror(t *testing.T) {
	alg := &mockAlgorithm{}
	out := &outsideLog{rows: map[int]map[string]any{}}
	m := mainloop.New(alg, &exampleStream{n: 10}, nil, nil,
		[]mainloop.Extension{&writeBatch{alg: alg}, &finishOutside{out: out}, mustFinishAfter(t, extensions.Triggers{"after_n_epochs": 2})})
	m.Mirror = out
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if m.Log.Status.IterationsDone != 3 || out.iterations != 3 {
		t.Fatalf("stopped at iteration %d (outside %d), want 3: the loop did not read the outside log", m.Log.Status.IterationsDone, out.iterations)
	}
	for i := 1; i <= 3; i++ {
		if got := out.rows[i]["batch"]; !reflect.DeepEqual(got, map[string]float64{"data": float64(i - 1)}) {
			t.Errorf("outside log[%d]['batch'] = %v", i, got)
		}
	}
	if out.rows[3][mainloop.RecordTrainingFinished] != true {
		t.Errorf("outside row 3 = %v, want training_finished", out.rows[3])
	}
	if out.pulls == 0 || out.pushes == 0 {
		t.Errorf("pulls %d, pushes %d", out.pulls, out.pushes)
	}
}

// TestNoMirrorAllocatesNothing: without a Mirror, calling the extensions
// allocates nothing more than they do (the loop's own log is the log).
func TestNoMirrorAllocatesNothing(t *testing.T) {
	m := mainloop.New(&mockAlgorithm{}, &exampleStream{n: 10}, nil, nil,
		[]mainloop.Extension{&mainloop.TrainingExtension{}, &mainloop.TrainingExtension{}})
	if err := m.RunExtensions(mainloop.AfterBatch, nil); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = m.RunExtensions(mainloop.AfterBatch, nil) }); n != 0 {
		t.Errorf("RunExtensions allocates %v times per call without a mirror, want 0", n)
	}
}
