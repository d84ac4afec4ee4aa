package schemes

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/numpyrand"
)

// Scheme is an iteration scheme that gives index requests (Fuel's
// BatchScheme and IndexScheme).
type Scheme interface {
	// RequestsExamples is true when each request is one example.
	RequestsExamples() bool
	// GetRequestIterator starts a new epoch (a shuffled scheme draws its
	// order now).
	GetRequestIterator() (RequestIterator, error)
	// RestoreRequestIterator rebuilds an iterator of this scheme at a
	// position one of its iterators reported.
	RestoreRequestIterator(pos fuel.RequestPosition) (RequestIterator, error)
}

// RequestIterator walks the requests of one epoch.
type RequestIterator interface {
	// Next returns the next request, or io.EOF at the end of the epoch.
	Next() (fuel.Request, error)
	// Position is where the iterator stands: after the requests given.
	Position() fuel.RequestPosition
}

// Shuffler shuffles a slice in place. Fuel's schemes call
// numpy.random.RandomState.shuffle on a Python list; the numpy-exact
// generator (*numpyrand.RandomState) satisfies this interface.
type Shuffler interface {
	ShuffleInts(x []int)
}

// DefaultRNG is the generator a shuffled scheme gets when given none, as
// in Fuel: numpy.random.RandomState(config.default_seed), default_seed
// being 1 unless the configuration file sets it. Each call returns a new
// generator.
func DefaultRNG() (*numpyrand.RandomState, error) {
	c, err := config.Load()
	if err != nil {
		return nil, err
	}
	if c.DefaultSeed < 0 || int64(c.DefaultSeed) > math.MaxUint32 {
		return nil, fmt.Errorf("schemes: default_seed %d is outside [0, 2**32)", c.DefaultSeed)
	}
	return numpyrand.New(uint32(c.DefaultSeed)), nil
}

func defaultRNG(scheme string, rng Shuffler) (Shuffler, error) {
	if rng != nil {
		return rng, nil
	}
	r, err := DefaultRNG()
	if err != nil {
		return nil, fmt.Errorf("schemes: %s: %w", scheme, err)
	}
	return r, nil
}

// Examples is Fuel's `examples` argument: range(n), or a list of indices.
type Examples struct {
	n       int
	indices []int
	isList  bool
}

// Range is range(n): the examples 0, 1, ..., n-1.
func Range(n int) Examples { return Examples{n: n} }

// List is an explicit list of example indices, used in the given order
// (and copied).
func List(indices []int) Examples {
	return Examples{indices: slices.Clone(indices), isList: true}
}

// Len is the number of examples.
func (e Examples) Len() int {
	if e.isList {
		return len(e.indices)
	}
	return e.n
}

// IsList reports whether the examples were given as a list.
func (e Examples) IsList() bool { return e.isList }

// Indices returns the examples as a new slice.
func (e Examples) Indices() []int {
	if e.isList {
		return slices.Clone(e.indices)
	}
	out := make([]int, e.n)
	for i := range out {
		out[i] = i
	}
	return out
}

func (e Examples) at(i int) int {
	if e.isList {
		return e.indices[i]
	}
	return i
}

func (e Examples) String() string {
	if e.isList {
		return fmt.Sprint(e.indices)
	}
	return fmt.Sprintf("range(%d)", e.n)
}

func (e Examples) check(scheme string) error {
	if !e.isList && e.n < 0 {
		return fmt.Errorf("schemes: %s: negative number of examples %d", scheme, e.n)
	}
	return nil
}

func checkBatchSize(scheme string, batchSize int) error {
	if batchSize < 1 {
		return fmt.Errorf("schemes: %s: batch_size must be a positive integer, got %d", scheme, batchSize)
	}
	return nil
}

func numBatches(n, batchSize int) int { return (n + batchSize - 1) / batchSize }

// checkNext validates a restored request count.
func checkNext(scheme string, pos fuel.RequestPosition, total int) error {
	if pos.Next < 0 || pos.Next > total {
		return fmt.Errorf("schemes: %s: cannot restore at request %d: an epoch has %d requests", scheme, pos.Next, total)
	}
	return nil
}

// checkPermutation verifies that order holds exactly the scheme's
// examples, in any order.
func checkPermutation(scheme string, order []int, ex Examples) error {
	if len(order) != ex.Len() {
		return fmt.Errorf("schemes: %s: saved order has %d indices, the scheme %d", scheme, len(order), ex.Len())
	}
	a, b := slices.Clone(order), ex.Indices()
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		return fmt.Errorf("schemes: %s: saved order is not a permutation of the scheme's examples %v", scheme, ex)
	}
	return nil
}

// batchIterator gives consecutive chunks of an order. When order is nil
// the examples are used directly, and chunks of Range(n) are slices.
type batchIterator struct {
	ex        Examples
	order     []int // nil: ex's own order
	batchSize int
	sorted    bool
	next      int
	rng       *numpyrand.State // the generator after drawing order
}

func (it *batchIterator) Next() (fuel.Request, error) {
	n := it.ex.Len()
	start := it.next * it.batchSize
	if start >= n {
		return fuel.Request{}, io.EOF
	}
	stop := min(start+it.batchSize, n)
	it.next++
	if it.order == nil && !it.ex.isList {
		return fuel.Request{Start: start, Stop: stop}, nil
	}
	idx := make([]int, stop-start)
	for k := range idx {
		if it.order != nil {
			idx[k] = it.order[start+k]
		} else {
			idx[k] = it.ex.at(start + k)
		}
	}
	if it.sorted {
		slices.Sort(idx)
	}
	return fuel.Request{Indices: idx}, nil
}

func (it *batchIterator) Position() fuel.RequestPosition {
	return fuel.RequestPosition{Order: slices.Clone(it.order), Next: it.next, RNG: cloneState(it.rng)}
}

// exampleIterator gives one Single request per example of an order.
type exampleIterator struct {
	ex    Examples
	order []int // nil: ex's own order
	next  int
	rng   *numpyrand.State // the generator after drawing order
}

func (it *exampleIterator) Next() (fuel.Request, error) {
	if it.next >= it.ex.Len() {
		return fuel.Request{}, io.EOF
	}
	i := it.ex.at(it.next)
	if it.order != nil {
		i = it.order[it.next]
	}
	it.next++
	return fuel.Request{Indices: []int{i}, Single: true}, nil
}

func (it *exampleIterator) Position() fuel.RequestPosition {
	return fuel.RequestPosition{Order: slices.Clone(it.order), Next: it.next, RNG: cloneState(it.rng)}
}

// Sequential is Fuel's SequentialScheme.
type Sequential struct {
	Examples  Examples
	BatchSize int
}

// SequentialScheme iterates over examples in order, in batches of
// batchSize (the last one shorter). Over Range(n) the requests are slices
// [start, stop); over a List they are index lists (Fuel always gives
// lists; a dataset returns the same data for both).
func SequentialScheme(examples Examples, batchSize int) (*Sequential, error) {
	if err := examples.check("SequentialScheme"); err != nil {
		return nil, err
	}
	if err := checkBatchSize("SequentialScheme", batchSize); err != nil {
		return nil, err
	}
	return &Sequential{Examples: examples, BatchSize: batchSize}, nil
}

// RequestsExamples is false: the requests are batches.
func (s *Sequential) RequestsExamples() bool { return false }

// GetRequestIterator starts an epoch.
func (s *Sequential) GetRequestIterator() (RequestIterator, error) {
	return &batchIterator{ex: s.Examples, batchSize: s.BatchSize}, nil
}

// RestoreRequestIterator rebuilds an iterator at pos.
func (s *Sequential) RestoreRequestIterator(pos fuel.RequestPosition) (RequestIterator, error) {
	if pos.Order != nil {
		return nil, errors.New("schemes: SequentialScheme: a saved position of a sequential scheme has no order")
	}
	if err := checkNext("SequentialScheme", pos, numBatches(s.Examples.Len(), s.BatchSize)); err != nil {
		return nil, err
	}
	return &batchIterator{ex: s.Examples, batchSize: s.BatchSize, next: pos.Next}, nil
}

// Shuffled is Fuel's ShuffledScheme.
type Shuffled struct {
	Examples      Examples
	BatchSize     int
	RNG           Shuffler
	SortedIndices bool
}

// Generators is the scheme's generator when it is numpy's RandomState
// (fuel.Random: checkpoints save it).
func (s *Shuffled) Generators() []*numpyrand.RandomState { return randomStates(s.RNG) }

func randomStates(rng Shuffler) []*numpyrand.RandomState {
	if r, ok := rng.(*numpyrand.RandomState); ok {
		return []*numpyrand.RandomState{r}
	}
	return nil
}

// ShuffledScheme iterates over examples in an order drawn anew each epoch
// (indices = list(examples); rng.shuffle(indices)), in batches of
// batchSize (the last one shorter). With sortedIndices each batch's
// indices are sorted. A nil rng is Fuel's default, a new
// numpy.random.RandomState(config.default_seed) (see DefaultRNG).
//
// The scheme keeps using rng from epoch to epoch, so a checkpoint must
// save rng's state (numpyrand.RandomState.State) along with the request
// iterator's position.
func ShuffledScheme(examples Examples, batchSize int, rng Shuffler, sortedIndices bool) (*Shuffled, error) {
	if err := examples.check("ShuffledScheme"); err != nil {
		return nil, err
	}
	if err := checkBatchSize("ShuffledScheme", batchSize); err != nil {
		return nil, err
	}
	rng, err := defaultRNG("ShuffledScheme", rng)
	if err != nil {
		return nil, err
	}
	return &Shuffled{Examples: examples, BatchSize: batchSize, RNG: rng, SortedIndices: sortedIndices}, nil
}

// RequestsExamples is false: the requests are batches.
func (s *Shuffled) RequestsExamples() bool { return false }

// GetRequestIterator starts an epoch: it shuffles the examples with the
// scheme's rng.
func (s *Shuffled) GetRequestIterator() (RequestIterator, error) {
	order := s.Examples.Indices()
	s.RNG.ShuffleInts(order)
	return &batchIterator{ex: s.Examples, order: order, batchSize: s.BatchSize, sorted: s.SortedIndices, rng: rngState(s.RNG)}, nil
}

// RestoreRequestIterator rebuilds an iterator at pos, with pos's order.
func (s *Shuffled) RestoreRequestIterator(pos fuel.RequestPosition) (RequestIterator, error) {
	if err := checkPermutation("ShuffledScheme", pos.Order, s.Examples); err != nil {
		return nil, err
	}
	if err := checkNext("ShuffledScheme", pos, numBatches(s.Examples.Len(), s.BatchSize)); err != nil {
		return nil, err
	}
	if err := restoreRNG("ShuffledScheme", s.RNG, pos.RNG); err != nil {
		return nil, err
	}
	return &batchIterator{ex: s.Examples, order: slices.Clone(pos.Order), batchSize: s.BatchSize,
		sorted: s.SortedIndices, next: pos.Next, rng: pos.RNG}, nil
}

// SequentialExample is Fuel's SequentialExampleScheme.
type SequentialExample struct {
	Examples Examples
}

// SequentialExampleScheme gives the examples one at a time, in order.
func SequentialExampleScheme(examples Examples) (*SequentialExample, error) {
	if err := examples.check("SequentialExampleScheme"); err != nil {
		return nil, err
	}
	return &SequentialExample{Examples: examples}, nil
}

// RequestsExamples is true.
func (s *SequentialExample) RequestsExamples() bool { return true }

// GetRequestIterator starts an epoch.
func (s *SequentialExample) GetRequestIterator() (RequestIterator, error) {
	return &exampleIterator{ex: s.Examples}, nil
}

// RestoreRequestIterator rebuilds an iterator at pos.
func (s *SequentialExample) RestoreRequestIterator(pos fuel.RequestPosition) (RequestIterator, error) {
	if pos.Order != nil {
		return nil, errors.New("schemes: SequentialExampleScheme: a saved position of a sequential scheme has no order")
	}
	if err := checkNext("SequentialExampleScheme", pos, s.Examples.Len()); err != nil {
		return nil, err
	}
	return &exampleIterator{ex: s.Examples, next: pos.Next}, nil
}

// ShuffledExample is Fuel's ShuffledExampleScheme.
type ShuffledExample struct {
	Examples Examples
	RNG      Shuffler
}

// Generators is the scheme's generator when it is numpy's RandomState
// (fuel.Random: checkpoints save it).
func (s *ShuffledExample) Generators() []*numpyrand.RandomState { return randomStates(s.RNG) }

// ShuffledExampleScheme gives the examples one at a time, in an order
// drawn anew each epoch as ShuffledScheme draws it. A nil rng is Fuel's
// default (see DefaultRNG).
func ShuffledExampleScheme(examples Examples, rng Shuffler) (*ShuffledExample, error) {
	if err := examples.check("ShuffledExampleScheme"); err != nil {
		return nil, err
	}
	rng, err := defaultRNG("ShuffledExampleScheme", rng)
	if err != nil {
		return nil, err
	}
	return &ShuffledExample{Examples: examples, RNG: rng}, nil
}

// RequestsExamples is true.
func (s *ShuffledExample) RequestsExamples() bool { return true }

// GetRequestIterator starts an epoch: it shuffles the examples.
func (s *ShuffledExample) GetRequestIterator() (RequestIterator, error) {
	order := s.Examples.Indices()
	s.RNG.ShuffleInts(order)
	return &exampleIterator{ex: s.Examples, order: order, rng: rngState(s.RNG)}, nil
}

// RestoreRequestIterator rebuilds an iterator at pos, with pos's order.
func (s *ShuffledExample) RestoreRequestIterator(pos fuel.RequestPosition) (RequestIterator, error) {
	if err := checkPermutation("ShuffledExampleScheme", pos.Order, s.Examples); err != nil {
		return nil, err
	}
	if err := checkNext("ShuffledExampleScheme", pos, s.Examples.Len()); err != nil {
		return nil, err
	}
	if err := restoreRNG("ShuffledExampleScheme", s.RNG, pos.RNG); err != nil {
		return nil, err
	}
	return &exampleIterator{ex: s.Examples, order: slices.Clone(pos.Order), next: pos.Next, rng: pos.RNG}, nil
}
