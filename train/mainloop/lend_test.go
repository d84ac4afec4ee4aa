package mainloop_test

import (
	"io"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// lendingStream gives n batches of one float32 array whose value is the
// batch's number; its iterator lends them (from an nd.Recycler) only
// after Lend.
type lendingStream struct {
	n     int
	asked []bool // per epoch, whether Lend was called
}

func (s *lendingStream) Sources() []string               { return []string{"data"} }
func (s *lendingStream) AxisLabels() map[string][]string { return nil }
func (s *lendingStream) ProducesExamples() bool          { return false }
func (s *lendingStream) GetEpochIterator() (fuel.EpochIterator, error) {
	s.asked = append(s.asked, false)
	return &lendingIterator{s: s, epoch: len(s.asked) - 1}, nil
}

type lendingIterator struct {
	s        *lendingStream
	epoch, i int
	r        *nd.Recycler // nil until Lend
}

func (it *lendingIterator) Lend() bool {
	it.r = new(nd.Recycler)
	it.s.asked[it.epoch] = true
	return true
}

func (it *lendingIterator) Next() ([]*nd.Array, error) {
	if it.i == it.s.n {
		return nil, io.EOF
	}
	a := it.r.Float32(3)
	for k := range a.Data.([]float32) {
		a.Data.([]float32)[k] = float32(it.i)
	}
	it.i++
	return []*nd.Array{a}, nil
}

// keeper is an algorithm that holds on to every batch, keeping those
// whose number is even (nd.Array.Keep) as the main loop's doc asks.
type keeper struct{ got []*nd.Array }

func (k *keeper) Initialize() error { return nil }
func (k *keeper) ProcessBatch(b map[string]*nd.Array) error {
	a := b["data"]
	if int(a.Flat(0))%2 == 0 {
		a.Keep()
	}
	k.got = append(k.got, a)
	return nil
}

// The main loop asks every epoch's iterator to lend and releases each
// batch after its step: the batches the algorithm kept are intact, the
// others were given back (empty), so the stream could reuse them.
func TestMainLoopLendsAndReleases(t *testing.T) {
	s := &lendingStream{n: 5}
	alg := &keeper{}
	m := &mainloop.MainLoop{Algorithm: alg, DataStream: s,
		Extensions: []mainloop.Extension{mustFinishAfter(t, extensions.Triggers{"after_n_epochs": 2})}}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if len(s.asked) != 2 || !s.asked[0] || !s.asked[1] {
		t.Fatalf("Lend called per epoch: %v, want [true true]", s.asked)
	}
	if len(alg.got) != 10 {
		t.Fatalf("%d batches, want 10", len(alg.got))
	}
	for i, a := range alg.got {
		n := i % 5
		if n%2 == 0 {
			if a.Size() != 3 || a.Flat(2) != float64(n) {
				t.Errorf("kept batch %d is %v, want three %d", i, a, n)
			}
		} else if a.Size() != 0 {
			t.Errorf("batch %d was not released: %v", i, a)
		}
	}
}
