package transformers

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// transformFunc transforms one item (a batch or an example) of the
// wrapped stream, one array per source in the wrapped stream's order.
type transformFunc func(data []*nd.Array) ([]*nd.Array, error)

// Transformer is a stream that wraps another and transforms each of its
// items (Fuel's Transformer). All the transformers of this package are
// of this type; Name says which.
type Transformer struct {
	name             string
	child            fuel.Stream
	sources          []string
	axisLabels       map[string][]string
	producesExamples bool
	transform        transformFunc
	numChildSources  int
	// open, when set, builds the epoch iterator over the child's (a
	// transformer with state of its own); saved is the state to resume
	// from, nil for a fresh epoch.
	open func(child fuel.EpochIterator, saved *fuel.IteratorState) (fuel.EpochIterator, error)
	// iterated, when set, is the stream whose epochs t reads instead of
	// child's: a transform fused with child's (Cast over ScaleAndShift)
	// reads child's own child. Its iterator states still have child's
	// level, so they describe the pipeline as it was built.
	iterated fuel.Stream
	// lentTransform, when set, is transform for an iterator whose
	// consumer releases what it gets (fuel.Lender): the fused Cast's,
	// whose float32 outputs are lent by a Recycler.
	lentTransform transformFunc
	// passesLoans is set on transformers that may forward a consumer's
	// request for lent items to the stream they wrap: those that hand an
	// input array on unchanged (or a view of all of it, nd.HandOver) or
	// make new ones, and keep none.
	passesLoans bool
	// views, on a fused Cast, marks the sources of the stream it reads
	// whose uint8 batches it converts and never hands on: once lent, it
	// asks for them as views of the dataset's storage (fuel.Viewer).
	views []bool
	// fuse, on a ScaleAndShift, describes it for a Cast to fuse with.
	fuse *scaleShiftSpec
	// rng is a random transformer's generator: its state is part of every
	// iterator state and is restored on resume.
	rng *numpyrand.RandomState
	// sourceFn, on a sourcewise transformer, is its step on one source.
	sourceFn func(a *nd.Array, source string, example bool) (*nd.Array, error)
}

// TransformSource is a sourcewise transformer's step on one source's
// value: an example (Fuel's transform_source_example) or a batch
// (transform_source_batch). It draws from the transformer's generator as
// the stream does. Other transformers return an error.
func (t *Transformer) TransformSource(a *nd.Array, source string, example bool) (*nd.Array, error) {
	if t.sourceFn == nil {
		return nil, fmt.Errorf("transformers: %s is not a sourcewise transformer", t.name)
	}
	var apply func(a *nd.Array, example bool) (*nd.Array, error)
	apply = func(a *nd.Array, example bool) (*nd.Array, error) {
		if a.DType() == nd.Object {
			return eachPart(a, func(p *nd.Array) (*nd.Array, error) { return apply(p, true) })
		}
		return t.sourceFn(a, source, example)
	}
	out, err := apply(a, example)
	if err != nil {
		return nil, fmt.Errorf("transformers: %s: %w", t.name, err)
	}
	return out, nil
}

var (
	_ fuel.Stream          = (*Transformer)(nil)
	_ fuel.ResumableStream = (*Transformer)(nil)
	_ fuel.Lender          = (*iterator)(nil)
)

// Name is the Fuel class name of the transformer ("Flatten", ...).
func (t *Transformer) Name() string { return t.name }

// DataStream is the wrapped stream (Fuel's data_stream attribute).
func (t *Transformer) DataStream() fuel.Stream { return t.child }

// Components is the wrapped stream (fuel.Composite).
func (t *Transformer) Components() []any { return []any{t.child} }

// Sources are the names of the arrays each item holds, in order.
func (t *Transformer) Sources() []string { return slices.Clone(t.sources) }

// AxisLabels maps sources to their axis names (a copy; nil when unknown).
func (t *Transformer) AxisLabels() map[string][]string { return fuel.CloneAxisLabels(t.axisLabels) }

// ProducesExamples is true when each item is one example.
func (t *Transformer) ProducesExamples() bool { return t.producesExamples }

// GetEpochIterator starts the next epoch of the wrapped stream.
func (t *Transformer) GetEpochIterator() (fuel.EpochIterator, error) {
	it, err := t.input().GetEpochIterator()
	if err != nil {
		return nil, err
	}
	if t.open != nil {
		return t.open(it, nil)
	}
	return &iterator{t: t, child: it}, nil
}

// ResumeEpochIterator rebuilds the wrapped stream's iterator at
// state.Child (the transformers here keep no state of their own).
func (t *Transformer) ResumeEpochIterator(state fuel.IteratorState) (fuel.EpochIterator, error) {
	rs, ok := t.input().(fuel.ResumableStream)
	if !ok {
		return nil, fmt.Errorf("transformers: %s: the wrapped stream (%T) cannot resume an epoch", t.name, t.input())
	}
	if state.Child == nil {
		return nil, fmt.Errorf("transformers: %s: the saved iterator state has no state for the wrapped stream", t.name)
	}
	inner := *state.Child
	if t.iterated != nil {
		// The fused transformer's level: stateless (fuseCast), it wraps
		// the state of the stream t reads.
		if inner.Child == nil {
			return nil, fmt.Errorf("transformers: %s: the saved iterator state has no state for the stream under its ScaleAndShift", t.name)
		}
		inner = *inner.Child
	}
	if t.rng != nil {
		if state.RNG == nil {
			return nil, fmt.Errorf("transformers: %s: the saved iterator state has no generator state", t.name)
		}
		if state.RNG.Pos < 0 || state.RNG.Pos > 624 {
			return nil, fmt.Errorf("transformers: %s: saved generator position %d is outside [0, 624]", t.name, state.RNG.Pos)
		}
	}
	it, err := rs.ResumeEpochIterator(inner)
	if err != nil {
		return nil, err
	}
	if t.rng != nil {
		t.rng.SetState(*state.RNG)
	}
	if t.open != nil {
		return t.open(it, &state)
	}
	return &iterator{t: t, child: it}, nil
}

// Generators is a random transformer's generator (fuel.Random): its draws
// go on from epoch to epoch, so a checkpoint between epochs, which holds
// no iterator state, must save it too (a resume at an epoch's end redrew
// the next epoch's rotations from the seed).
func (t *Transformer) Generators() []*numpyrand.RandomState {
	if t.rng == nil {
		return nil
	}
	return []*numpyrand.RandomState{t.rng}
}

// input is the stream t iterates.
func (t *Transformer) input() fuel.Stream {
	if t.iterated != nil {
		return t.iterated
	}
	return t.child
}

// wrapState is the state of an iterator of t over child: the child's
// state and t's generator, to which an iterator adds its own.
func (t *Transformer) wrapState(child fuel.EpochIterator) (fuel.IteratorState, error) {
	si, ok := child.(fuel.StatefulIterator)
	if !ok {
		return fuel.IteratorState{}, fmt.Errorf("transformers: %s: the wrapped iterator (%T) cannot report its position", t.name, child)
	}
	st, err := si.State()
	if err != nil {
		return fuel.IteratorState{}, err
	}
	out := fuel.IteratorState{Child: &st}
	if t.iterated != nil { // the fused transformer's level
		out = fuel.IteratorState{Child: &fuel.IteratorState{Child: &st}}
	}
	if t.rng != nil {
		r := t.rng.State()
		out.RNG = &r
	}
	return out, nil
}

type iterator struct {
	t     *Transformer
	child fuel.EpochIterator
	// lend is set once the consumer asked for lent items (Lend); atomic,
	// as MultiProcessing's goroutine may be reading items meanwhile.
	lend atomic.Bool
}

// Lend makes a fused Cast lend its float32 batches and passes the request
// down through the transformers that may (fuel.Lender).
func (it *iterator) Lend() bool {
	lends := it.t.lentTransform != nil
	if lends {
		it.lend.Store(true)
	}
	if it.t.passesLoans && fuel.Lend(it.child) {
		lends = true
		if v, ok := it.child.(fuel.Viewer); ok && it.t.views != nil {
			v.View(it.t.views)
		}
	}
	return lends
}

func (it *iterator) Next() ([]*nd.Array, error) {
	data, err := it.child.Next()
	if err != nil {
		return nil, err // io.EOF passes through unwrapped
	}
	if len(data) != it.t.numChildSources {
		return nil, fmt.Errorf("transformers: %s: the wrapped stream gave %d arrays for its %d sources", it.t.name, len(data), it.t.numChildSources)
	}
	transform := it.t.transform
	if it.lend.Load() {
		transform = it.t.lentTransform
	}
	out, err := transform(data)
	if err != nil {
		return nil, fmt.Errorf("transformers: %s: %w", it.t.name, err)
	}
	return out, nil
}

// State is the wrapped iterator's state.
func (it *iterator) State() (fuel.IteratorState, error) { return it.t.wrapState(it.child) }

// selected reports, per source of the wrapped stream, whether a
// sourcewise transformer applies to it: every source when whichSources is
// nil, else those named (names the stream lacks are ignored, as in Fuel).
func selected(sources, whichSources []string) []bool {
	sel := make([]bool, len(sources))
	for i, s := range sources {
		sel[i] = whichSources == nil || slices.Contains(whichSources, s)
	}
	return sel
}

// sourcewise builds a transformer that applies fn to the selected sources
// and passes the others through (Fuel's SourcewiseTransformer).
func sourcewise(name string, child fuel.Stream, whichSources []string, axisLabels map[string][]string,
	fn func(a *nd.Array, source string, example bool) (*nd.Array, error)) (*Transformer, error) {
	if child == nil {
		return nil, fmt.Errorf("transformers: %s: no data stream", name)
	}
	sources := child.Sources()
	sel := selected(sources, whichSources)
	example := child.ProducesExamples()
	return &Transformer{
		name:             name,
		child:            child,
		sources:          sources,
		axisLabels:       axisLabels,
		producesExamples: example,
		numChildSources:  len(sources),
		sourceFn:         fn,
		passesLoans:      true,
		transform: func(data []*nd.Array) ([]*nd.Array, error) {
			out := slices.Clone(data)
			for i, a := range data {
				if !sel[i] {
					continue
				}
				// A ragged batch (or an example that is itself a list of
				// differently shaped arrays): each element on its own, as
				// numpy applies arithmetic to an object array's elements.
				var apply func(a *nd.Array, example bool) (*nd.Array, error)
				apply = func(a *nd.Array, example bool) (*nd.Array, error) {
					if a.DType() == nd.Object {
						return eachPart(a, func(p *nd.Array) (*nd.Array, error) { return apply(p, true) })
					}
					return fn(a, sources[i], example)
				}
				b, err := apply(a, example)
				if err != nil {
					return nil, fmt.Errorf("source %q: %w", sources[i], err)
				}
				out[i] = b
			}
			return out, nil
		},
	}, nil
}

// eachPart applies f to every element of an object array.
func eachPart(a *nd.Array, f func(*nd.Array) (*nd.Array, error)) (*nd.Array, error) {
	parts := a.Data.([]*nd.Array)
	out := make([]*nd.Array, len(parts))
	for k, p := range parts {
		var err error
		if out[k], err = f(p); err != nil {
			return nil, fmt.Errorf("example %d: %w", k, err)
		}
	}
	return nd.Objects(out), nil
}

// BatchesPerEpoch is the wrapped stream's count for a transformer that
// maps each item to one item (Flatten, Mapping, ScaleAndShift, ...) and
// for MultiProcessing; transformers that drop, merge or split items
// (Filter, Batch, Unpack, ...) do not know it.
func (t *Transformer) BatchesPerEpoch() (int, bool) {
	if t.open != nil && t.name != "MultiProcessing" {
		return 0, false
	}
	src := t.child
	if t.iterated != nil {
		src = t.iterated
	}
	if l, ok := src.(interface{ BatchesPerEpoch() (int, bool) }); ok {
		return l.BatchesPerEpoch()
	}
	return 0, false
}
