package transformers

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// MultiProcessing is Fuel's MultiProcessing(data_stream, max_store=100):
// the wrapped stream runs ahead in a background goroutine that keeps up
// to maxStore items ready, so that producing data overlaps with using it.
//
// Resuming: with every item the goroutine records the wrapped iterator's
// state right after producing it, and this iterator's state is the one
// recorded with the last item handed out. A resumed pipeline therefore
// recomputes the prefetched items it had not handed out, which, the
// pipeline being deterministic, are the same items.
//
// Only one epoch of a MultiProcessing stream may run at a time (its
// goroutine uses the wrapped transformers, their generators included).
// An epoch abandoned before its end should be closed (Close) to stop the
// goroutine at once; otherwise it stops when the iterator is collected.
func MultiProcessing(stream fuel.Stream, maxStore int) (*Transformer, error) {
	if stream == nil {
		return nil, errors.New("transformers: MultiProcessing: no data stream")
	}
	if maxStore < 1 {
		return nil, fmt.Errorf("transformers: MultiProcessing: max_store must be at least 1, got %d", maxStore)
	}
	sources := stream.Sources()
	t := &Transformer{name: "MultiProcessing", child: stream, sources: sources, axisLabels: copyLabels(stream),
		producesExamples: stream.ProducesExamples(), numChildSources: len(sources)}
	t.open = func(child fuel.EpochIterator, _ *fuel.IteratorState) (fuel.EpochIterator, error) {
		p := &mpProducer{n: len(sources), out: make(chan mpItem, maxStore-1), stop: make(chan struct{})}
		it := &mpIter{p: p, child: child}
		if si, ok := child.(fuel.StatefulIterator); ok {
			st, err := si.State()
			if err == nil {
				it.state = &st
			} else {
				it.stateErr = err
			}
		} else {
			it.stateErr = fmt.Errorf("transformers: MultiProcessing: the wrapped iterator (%T) cannot report its position", child)
		}
		p.stateErr = it.stateErr
		go p.produce(child)
		// An epoch dropped unfinished and never closed stops its goroutine
		// when the iterator is collected (the goroutine holds only p).
		runtime.SetFinalizer(it, func(it *mpIter) { it.p.close() })
		return it, nil
	}
	return t, nil
}

type mpItem struct {
	data     []*nd.Array
	err      error
	state    *fuel.IteratorState
	stateErr error
}

// mpProducer is what the background goroutine uses.
type mpProducer struct {
	n        int // sources per item
	out      chan mpItem
	stop     chan struct{}
	once     sync.Once
	stateErr error // why items carry no state
}

func (p *mpProducer) close() { p.once.Do(func() { close(p.stop) }) }

type mpIter struct {
	p        *mpProducer
	child    fuel.EpochIterator // read by p's goroutine; here for Lend
	done     bool
	final    error
	state    *fuel.IteratorState // the wrapped iterator after the last item handed out
	stateErr error
}

func (p *mpProducer) produce(child fuel.EpochIterator) {
	defer close(p.out)
	si, stateful := child.(fuel.StatefulIterator)
	for {
		d, err := safeNext(child, p.n)
		item := mpItem{data: d, err: err}
		if err == nil && stateful {
			st, serr := si.State()
			item.state, item.stateErr = &st, serr
		} else if err == nil {
			item.stateErr = p.stateErr
		}
		select {
		case p.out <- item:
		case <-p.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func (it *mpIter) Next() ([]*nd.Array, error) {
	if it.final != nil {
		return nil, it.final
	}
	if it.done {
		return nil, fmt.Errorf("transformers: MultiProcessing: the epoch iterator is closed")
	}
	item, ok := <-it.p.out
	if !ok {
		it.done = true
		return nil, fmt.Errorf("transformers: MultiProcessing: the background goroutine stopped")
	}
	if item.err != nil {
		it.final = item.err // io.EOF, or the error, again on every call
		it.Close()
		return nil, item.err
	}
	it.state, it.stateErr = item.state, item.stateErr
	return item.data, nil
}

// Lend passes the request down: the consumer releases the items, which
// the goroutine has read ahead of it (fuel.Lender). The items read before
// the call are not lent.
func (it *mpIter) Lend() bool { return fuel.Lend(it.child) }

// Close stops the background goroutine; the iterator gives no more items.
func (it *mpIter) Close() {
	it.p.close()
	it.done = true
}

func (it *mpIter) State() (fuel.IteratorState, error) {
	if it.stateErr != nil {
		return fuel.IteratorState{}, it.stateErr
	}
	st := *it.state
	return fuel.IteratorState{Child: &st}, nil
}

// safeNext is nextItem on the producer goroutine, where a panic in the
// wrapped pipeline would end the program: it becomes an error.
func safeNext(child fuel.EpochIterator, n int) (d []*nd.Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("transformers: MultiProcessing: the wrapped stream failed: %v (please report this bug)", r)
		}
	}()
	return nextItem("MultiProcessing", child, n)
}
