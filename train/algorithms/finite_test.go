package algorithms

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/mainloop"
)

// batchStream gives epochs of 4 batches of 3 examples; the batch at
// iteration bad (1-based, over all epochs) holds value in its features.
type batchStream struct {
	bad   int
	value float64
	n     int
}

func (s *batchStream) Sources() []string               { return []string{"features", "targets"} }
func (s *batchStream) AxisLabels() map[string][]string { return nil }
func (s *batchStream) ProducesExamples() bool          { return false }
func (s *batchStream) GetEpochIterator() (fuel.EpochIterator, error) {
	if s.n == 12 { // three epochs
		return nil, io.EOF
	}
	return &batchIter{s: s}, nil
}

type batchIter struct {
	s *batchStream
	i int
}

func (it *batchIter) Next() ([]*nd.Array, error) {
	if it.i == 4 {
		return nil, io.EOF
	}
	it.i++
	it.s.n++
	x := nd.New(nd.Float32, 3, 2)
	y := nd.New(nd.Float32, 3, 1)
	for i := 0; i < 6; i++ {
		x.SetFlat(i, float64(i%3)*0.5)
	}
	if it.s.n == it.s.bad {
		x.SetFlat(1, it.s.value)
	}
	return []*nd.Array{x, y}, nil
}

func finiteLoop(t *testing.T, rule StepRule, bad int, value float64) (*mainloop.MainLoop, *core.Variable) {
	t.Helper()
	x := core.NewInput("features", nd.Float32, 2)
	y := core.NewInput("targets", nd.Float32, 2)
	w := nd.New(nd.Float32, 2, 1)
	w.SetFlat(0, 0.3)
	w.SetFlat(1, -0.2)
	W := core.NewShared(w, "W")
	h, err := core.Dot(x, W)
	if err != nil {
		t.Fatal(err)
	}
	cost := core.MeanAll(core.Sqr(core.Sub(h, y)))
	cost.Name = "cost"
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W}, StepRule: rule})
	if err != nil {
		t.Fatal(err)
	}
	m := mainloop.New(gd, &batchStream{bad: bad, value: value}, nil, nil, nil)
	m.Messages = io.Discard
	return m, W
}

// A NaN in a batch makes the cost NaN: training stops with an error that
// names the batch, the cost and the parameter the update spoilt.
func TestNaNCostStopsTraining(t *testing.T) {
	m, _ := finiteLoop(t, NewScale(nd.Float32, 0.1), 7, math.NaN())
	err := m.Run()
	var nf *NotFiniteError
	var be *mainloop.BatchError
	if !errors.As(err, &nf) || !errors.As(err, &be) {
		t.Fatalf("want a NotFiniteError in a BatchError, got %v", err)
	}
	want := "iteration 7 (batch 3 of epoch 2): the cost cost is NaN; the first parameter with non-finite values is W (2 elements)"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\nwant it to start with %q", err, want)
	}
	if st := m.Status(); st.IterationsDone != 6 {
		t.Errorf("iterations done %d, want 6 (the failing batch is not counted)", st.IterationsDone)
	}
	if got := m.Log.CurrentRow()[mainloop.RecordGotException]; got != err.Error() {
		t.Errorf("got_exception %v", got)
	}
}

// An infinite value overflows the cost to +Inf.
func TestInfCostStopsTraining(t *testing.T) {
	m, _ := finiteLoop(t, NewScale(nd.Float32, 0.1), 2, 1e30)
	err := m.Run()
	if err == nil || !strings.HasPrefix(err.Error(), "iteration 2 (batch 2 of epoch 1): the cost cost is +Inf") {
		t.Fatalf("got %v", err)
	}
}

// With RemoveNotFinite in the step rule (here inside a CompositeRule),
// training goes on, as in Blocks: the NaN step is replaced and the
// parameters stay finite.
func TestRemoveNotFiniteTrainsOn(t *testing.T) {
	m, W := finiteLoop(t, NewCompositeRule(NewScale(nd.Float32, 0.1), NewRemoveNotFinite(1)), 7, math.NaN())
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if st := m.Status(); st.IterationsDone != 12 {
		t.Errorf("iterations done %d, want 12", st.IterationsDone)
	}
	if n := nonFinite(W.Value()); n != 0 {
		t.Errorf("W holds %d non-finite values", n)
	}
	if !HasRemoveNotFinite(NewRestrict(NewRemoveNotFinite(1), nil)) || HasRemoveNotFinite(NewScale(nd.Float32, 1)) {
		t.Error("HasRemoveNotFinite")
	}
}
