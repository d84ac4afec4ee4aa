// Package fuel is the data layer: Fuel's datasets, iteration schemes,
// streams and transformers, in Go, with no knowledge of Starlark or of the
// symbolic layer.
//
// This root package holds the interfaces the subpackages share (Dataset,
// IndexableDataset, Stream, EpochIterator, Request) and the saved position
// of an iterator (state.go: StatefulIterator, ResumableStream), so a run
// resumes mid-epoch. A batch travels as one *nd.Array per source, in the
// order of the stream's Sources.
//
//	config/        Fuel's configuration: data path, floatX, default seed
//	datasets/      datasets (IndexableDataset, IterableDataset, MNIST, TextFile, ...)
//	datasets/toy/  synthetic datasets (Spiral, SwissRoll)
//	schemes/       iteration schemes (SequentialScheme, ShuffledScheme, ...)
//	streams/       DataStream and DefaultStream
//	transformers/  on-the-fly transformers (Flatten, ScaleAndShift, Cast, Batch, ...)
//	h5/            Fuel's HDF5 format (H5PYDataset), through libhdf5
//	server/        the data server: a stream served over ZeroMQ
//	download/      fuel-download: fetching a dataset's files
//	converters/    fuel-convert: turning them into Fuel's HDF5 files
//	utils/         helpers datasets share (Subset, ...)
package fuel

import (
	"encoding/json"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// Request asks a dataset for data: either the examples at Indices, or the
// slice [Start, Stop) when Indices is nil. A Single request asks for the
// one example at Indices[0] and gets arrays without the batch axis (the
// request of an example scheme).
type Request struct {
	Indices     []int
	Start, Stop int
	Single      bool
}

// Len is the number of examples the request asks for.
func (r Request) Len() int {
	if r.Single {
		return 1
	}
	if r.Indices != nil {
		return len(r.Indices)
	}
	return r.Stop - r.Start
}

// Dataset is Fuel's Dataset: named sources of examples.
type Dataset interface {
	// Sources are the names of the sources the dataset provides, in order.
	Sources() []string
	// AxisLabels maps a source to the names of its axes (may be nil).
	AxisLabels() map[string][]string
	// NumExamples is the number of examples, or -1 when unknown.
	NumExamples() int
}

// IndexableDataset is a dataset whose examples can be fetched by index.
type IndexableDataset interface {
	Dataset
	// GetData returns one array per source, in Sources order.
	GetData(req Request) ([]*nd.Array, error)
}

// A LendingDataset is an IndexableDataset that can put a request's
// examples into buffers a Recycler lends. A DataStream's epoch iterator
// whose consumer asked for lent items (Lender) reads through it, so that
// an epoch reuses a few batch buffers instead of allocating (and the
// kernel zeroing) one per batch; what the arrays hold is GetData's.
type LendingDataset interface {
	IndexableDataset
	// GetDataLent is GetData with the batches' buffers drawn from r where
	// it lends them (nd.Recycler.Lent).
	GetDataLent(req Request, r *nd.Recycler) ([]*nd.Array, error)
}

// A ViewingDataset is a LendingDataset that can give some sources of a
// slice request as views of its own storage instead of copies: for a
// consumer that only reads them, each before it asks for the next item
// (fuel.Viewer).
type ViewingDataset interface {
	LendingDataset
	// GetDataView is GetDataLent, except that the uint8 arrays of the
	// sources marked in view are views of the dataset's storage where
	// the request is a slice (Release leaves them alone). The caller must
	// not write them.
	GetDataView(req Request, r *nd.Recycler, view []bool) ([]*nd.Array, error)
}

// Stream is Fuel's data stream: something that gives epoch iterators over
// batches (or examples).
type Stream interface {
	Sources() []string
	AxisLabels() map[string][]string
	// ProducesExamples is true when each item is one example, not a batch.
	ProducesExamples() bool
	// GetEpochIterator starts the next epoch.
	GetEpochIterator() (EpochIterator, error)
}

// EpochIterator walks one epoch of a stream.
type EpochIterator interface {
	// Next returns the next batch, one array per source in the stream's
	// Sources order, or io.EOF at the end of the epoch.
	Next() ([]*nd.Array, error)
}

// RequestPosition is where a scheme's request iterator stands in its
// epoch, as plain data a checkpoint can store (it marshals to JSON). The
// scheme that made the iterator rebuilds it from this (see
// schemes.Scheme.RestoreRequestIterator).
type RequestPosition struct {
	// Order is the epoch's order of example indices when the epoch drew
	// one (a shuffled scheme); nil when the order is the scheme's own.
	Order []int `json:"order,omitempty"`
	// Next is the number of requests the iterator has already given.
	Next int `json:"next"`
	// RNG is the state of the scheme's generator after it drew Order
	// (shuffled schemes), so that the epochs after a resumed one draw the
	// orders the uninterrupted run draws.
	RNG *numpyrand.State `json:"rng,omitempty"`
	// Parts is the position within each scheme of a ConcatenatedScheme
	// (Next is then the index of the current one).
	Parts []RequestPosition `json:"parts,omitempty"`
	// Requests are the epoch's requests of a scheme defined in a script
	// (its get_request_iterator's, each a list of indices), so that a
	// resumed epoch does not call it again.
	Requests [][]int `json:"requests,omitempty"`
	// Singles marks the requests of Requests that ask for one example
	// (an index, not a list of one).
	Singles []bool `json:"singles,omitempty"`
}

// IteratorState is the position of an epoch iterator: that of the request
// iterator of the DataStream at the bottom of a pipeline, wrapped once per
// transformer above it. Stateless transformers add nothing of their own.
type IteratorState struct {
	// Requests is the position of a DataStream's request iterator.
	Requests *RequestPosition `json:"requests,omitempty"`
	// Child is the state of the iterator a transformer wraps.
	Child *IteratorState `json:"child,omitempty"`
	// Children are the states of the iterators of a transformer over
	// several streams (Merge), in the order of its streams.
	Children []IteratorState `json:"children,omitempty"`
	// RNG is the state of a random transformer's generator (crops,
	// rotations) after the items returned so far.
	RNG *numpyrand.State `json:"rng,omitempty"`
	// Buffer holds the items a transformer has read from its child but
	// not yet given out (Cache's cache, Unpack's rest of a batch,
	// Window's current sequence), each one array per source.
	Buffer []SavedItem `json:"buffer,omitempty"`
	// Index is a transformer's position within its buffer (Window).
	Index int `json:"index,omitempty"`
	// Served counts the examples an IterableDataset's stream has given.
	Served int `json:"served,omitempty"`
	// Data is the state of a dataset that keeps one between its
	// requests (Fuel's dataset.open() state that a DataStream holds),
	// after the items returned so far, encoded by the dataset's face (a
	// dataset defined in a script).
	Data json.RawMessage `json:"data,omitempty"`
}

// StatefulIterator is an epoch iterator that can report its position.
type StatefulIterator interface {
	EpochIterator
	// State is the position after the items returned so far.
	State() (IteratorState, error)
}

// ResumableStream is a stream whose epoch iterators can be rebuilt at a
// saved position, so that a checkpoint taken mid-epoch resumes exactly.
type ResumableStream interface {
	Stream
	// ResumeEpochIterator returns an iterator at state, as reported by a
	// StatefulIterator of the same pipeline. It continues that epoch: it
	// draws no new order and consumes no random numbers.
	ResumeEpochIterator(state IteratorState) (EpochIterator, error)
}
