package streams

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

// DatasetStream is Fuel's DataStream over an indexable dataset.
type DatasetStream struct {
	dataset    fuel.IndexableDataset
	scheme     schemes.Scheme // the given scheme, nil for none
	iterScheme schemes.Scheme // the scheme iterated: scheme, or sequential examples
	sources    []string
	axisLabels map[string][]string
	epochs     int
	shard      *shardState // set on a shard (see Shard)
	// batches lends the buffers of the batches of the epoch iterators
	// whose consumer asked for lent items (made at the first Lend).
	batches *nd.Recycler
}

var (
	_ fuel.Stream          = (*DatasetStream)(nil)
	_ fuel.ResumableStream = (*DatasetStream)(nil)
)

// DataStream is Fuel's DataStream(dataset, iteration_scheme=scheme). With
// a nil scheme it is an example stream over the dataset's examples in
// order (what Fuel's dataset.get_example_stream() gives).
func DataStream(dataset fuel.IndexableDataset, scheme schemes.Scheme) (*DatasetStream, error) {
	if dataset == nil {
		return nil, errors.New("streams: DataStream: no dataset")
	}
	if it, ok := dataset.(interface{ Iterable() bool }); ok && it.Iterable() && scheme != nil {
		return nil, errors.New("streams: DataStream: an IterableDataset takes no iteration scheme")
	}
	s := &DatasetStream{dataset: dataset, scheme: scheme, iterScheme: scheme, sources: dataset.Sources()}
	if scheme == nil {
		n := dataset.NumExamples()
		if n < 0 {
			return nil, errors.New("streams: DataStream: without an iteration scheme the dataset must know its number of examples")
		}
		ex, err := schemes.SequentialExampleScheme(schemes.Range(n))
		if err != nil {
			return nil, fmt.Errorf("streams: DataStream: %w", err)
		}
		s.iterScheme = ex
	}
	if labels := dataset.AxisLabels(); len(labels) > 0 {
		s.axisLabels = make(map[string][]string, len(labels))
		for src, l := range labels {
			if s.ProducesExamples() && l != nil {
				l = slices.DeleteFunc(slices.Clone(l), func(x string) bool { return x == "batch" })
			}
			s.axisLabels[src] = l
		}
	}
	return s, nil
}

// DefaultStream is Fuel's DataStream.default_stream(dataset,
// iteration_scheme=scheme): a DataStream wrapped in the dataset's default
// transformers when it has some (transformers.DefaultTransformerer), else the
// DataStream itself. Either way the result is a fuel.ResumableStream.
func DefaultStream(dataset fuel.IndexableDataset, scheme schemes.Scheme) (fuel.Stream, error) {
	s, err := DataStream(dataset, scheme)
	if err != nil {
		return nil, err
	}
	d, ok := dataset.(transformers.DefaultTransformerer)
	if !ok {
		return s, nil
	}
	out, err := transformers.Apply(s, d.DefaultTransformers())
	if err != nil {
		return nil, fmt.Errorf("streams: DefaultStream: %w", err)
	}
	return out, nil
}

// Dataset is the stream's dataset.
func (s *DatasetStream) Dataset() fuel.IndexableDataset { return s.dataset }

// IterationScheme is the scheme given (nil for none).
func (s *DatasetStream) IterationScheme() schemes.Scheme { return s.scheme }

// Components are the stream's scheme and dataset (fuel.Composite).
func (s *DatasetStream) Components() []any { return []any{s.scheme, s.dataset} }

// Sources are the dataset's sources.
func (s *DatasetStream) Sources() []string { return slices.Clone(s.sources) }

// AxisLabels are the dataset's, less the "batch" axis in an example
// stream (a copy; nil when the dataset has none).
func (s *DatasetStream) AxisLabels() map[string][]string {
	if s.axisLabels == nil {
		return nil
	}
	out := make(map[string][]string, len(s.axisLabels))
	for k, v := range s.axisLabels {
		out[k] = slices.Clone(v)
	}
	return out
}

// ProducesExamples is the scheme's RequestsExamples (true with no scheme).
func (s *DatasetStream) ProducesExamples() bool { return s.iterScheme.RequestsExamples() }

// Epochs is the number of epoch iterators started or resumed so far.
func (s *DatasetStream) Epochs() int { return s.epochs }

// GetEpochIterator starts a new epoch.
func (s *DatasetStream) GetEpochIterator() (fuel.EpochIterator, error) {
	it, err := s.iterScheme.GetRequestIterator()
	if err != nil {
		return nil, fmt.Errorf("streams: starting an epoch: %w", err)
	}
	s.epochs++
	return &epochIterator{s: s, requests: it}, nil
}

// Lend makes the iterator read through the dataset's GetDataLent when it
// is a fuel.LendingDataset (and the stream is not a shard), its batches'
// buffers drawn from the stream's Recycler; it reports whether it does.
func (it *epochIterator) Lend() bool {
	ld, ok := it.s.dataset.(fuel.LendingDataset)
	if !ok || it.s.shard != nil {
		return false
	}
	if it.lending.Load() {
		return true
	}
	if it.s.batches == nil {
		it.s.batches = new(nd.Recycler)
	}
	it.lent, it.batches = ld, it.s.batches
	it.lending.Store(true) // after the fields: a producer goroutine (MultiProcessing) may be calling Next
	return true
}

// ResumeEpochIterator continues an epoch at a saved state, whose
// Requests is the position of the scheme's request iterator.
func (s *DatasetStream) ResumeEpochIterator(state fuel.IteratorState) (fuel.EpochIterator, error) {
	if state.Requests == nil {
		return nil, errors.New("streams: the saved iterator state has no request position for a DataStream")
	}
	if state.Child != nil {
		return nil, errors.New("streams: the saved iterator state is a transformer's, not a DataStream's")
	}
	it, err := s.iterScheme.RestoreRequestIterator(*state.Requests)
	if err != nil {
		return nil, fmt.Errorf("streams: resuming an epoch: %w", err)
	}
	s.epochs++
	return &epochIterator{s: s, requests: it, served: state.Requests.Next}, nil
}

type epochIterator struct {
	s        *DatasetStream
	requests schemes.RequestIterator
	served   int // requests given in the epoch, counting those before a resume
	// lent, once the consumer asked for lent items (Lend), is the dataset
	// read through with batches' buffers from the stream's Recycler.
	lent    fuel.LendingDataset
	batches *nd.Recycler
	lending atomic.Bool
	// viewing and view, once a reader inside the pipeline asked for views
	// (View), are the dataset and the sources it gives as views.
	viewing fuel.ViewingDataset
	view    atomic.Pointer[[]bool]
}

// View makes the dataset's uint8 sources marked in which views of its
// storage from the next item on, when the dataset can give them
// (fuel.ViewingDataset) and the iterator lends; it reports whether it does.
func (it *epochIterator) View(which []bool) bool {
	vd, ok := it.s.dataset.(fuel.ViewingDataset)
	if !ok || !it.lending.Load() {
		return false
	}
	it.viewing = vd
	w := slices.Clone(which)
	it.view.Store(&w) // after viewing: a producer goroutine may be calling Next
	return true
}

var _ fuel.Viewer = (*epochIterator)(nil)

var _ fuel.StatefulIterator = (*epochIterator)(nil)

func (it *epochIterator) Next() ([]*nd.Array, error) {
	req, err := it.requests.Next()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("streams: request %d of the epoch: %w", it.served, err)
	}
	it.served++
	var data []*nd.Array
	if it.lending.Load() {
		if v := it.view.Load(); v != nil {
			data, err = it.viewing.GetDataView(req, it.batches, *v)
		} else {
			data, err = it.lent.GetDataLent(req, it.batches)
		}
	} else {
		data, err = it.s.read(req)
	}
	if err != nil {
		return nil, fmt.Errorf("streams: request %d of the epoch: %w", it.served-1, err)
	}
	if len(data) != len(it.s.sources) {
		return nil, fmt.Errorf("streams: the dataset returned %d arrays for its %d sources", len(data), len(it.s.sources))
	}
	return data, nil
}

// State is the position of the scheme's request iterator.
func (it *epochIterator) State() (fuel.IteratorState, error) {
	pos := it.requests.Position()
	return fuel.IteratorState{Requests: &pos}, nil
}

// BatchesPerEpoch is the number of batches (or examples) an epoch gives,
// when the scheme knows it.
func (s *DatasetStream) BatchesPerEpoch() (int, bool) {
	if l, ok := s.iterScheme.(schemes.Lengther); ok {
		return l.NumRequests()
	}
	return 0, false
}
