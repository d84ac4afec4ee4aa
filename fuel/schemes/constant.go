package schemes

import (
	"errors"
	"fmt"
	"io"

	"github.com/blocks-go/blocks/fuel"
)

// BatchSizeIterator walks the batch sizes of one epoch.
type BatchSizeIterator interface {
	// Next returns the next batch size, or io.EOF at the end of the epoch.
	Next() (int, error)
	// Position is where the iterator stands: Next is the number of batch
	// sizes given.
	Position() fuel.RequestPosition
}

// BatchSizeScheme is Fuel's BatchSizeScheme: a scheme whose requests are
// batch sizes (ConstantScheme, or a script's subclass), for transformers
// that batch a stream of examples (Batch, Cache).
type BatchSizeScheme interface {
	// RequestsExamples is false.
	RequestsExamples() bool
	// GetBatchSizeIterator starts an epoch.
	GetBatchSizeIterator() (BatchSizeIterator, error)
	// RestoreBatchSizeIterator continues an epoch from a saved position.
	RestoreBatchSizeIterator(pos fuel.RequestPosition) (BatchSizeIterator, error)
}

var _ BatchSizeScheme = (*Constant)(nil)

// Constant is Fuel's ConstantScheme, a BatchSizeScheme: its requests are
// batch sizes, for transformers that batch a stream of examples.
type Constant struct {
	BatchSize int
	// NumExamples, when positive, ends the epoch once the sizes sum to it
	// (the last one shorter).
	NumExamples int
	// Times, when positive, is the number of batch sizes per epoch.
	Times int
}

// ConstantScheme gives batchSize again and again: times times when times
// is positive; else until the sizes add up to numExamples when that is
// positive, the last size being the remainder; else forever. Zero stands
// for Fuel's None (Fuel also treats 0 as not given), and setting both
// numExamples and times is an error, as in Fuel.
func ConstantScheme(batchSize, numExamples, times int) (*Constant, error) {
	if numExamples != 0 && times != 0 {
		return nil, errors.New("schemes: ConstantScheme: give num_examples or times, not both")
	}
	if err := checkBatchSize("ConstantScheme", batchSize); err != nil {
		return nil, err
	}
	if numExamples < 0 || times < 0 {
		return nil, fmt.Errorf("schemes: ConstantScheme: negative num_examples (%d) or times (%d)", numExamples, times)
	}
	return &Constant{BatchSize: batchSize, NumExamples: numExamples, Times: times}, nil
}

// RequestsExamples is false: the requests are batch sizes.
func (s *Constant) RequestsExamples() bool { return false }

// total is the number of sizes per epoch, or -1 for an endless epoch.
func (s *Constant) total() int {
	switch {
	case s.Times > 0:
		return s.Times
	case s.NumExamples > 0:
		return numBatches(s.NumExamples, s.BatchSize)
	}
	return -1
}

// GetBatchSizeIterator starts an epoch.
func (s *Constant) GetBatchSizeIterator() (BatchSizeIterator, error) {
	return &constantIterator{s: s}, nil
}

// RestoreBatchSizeIterator rebuilds an iterator at pos.
func (s *Constant) RestoreBatchSizeIterator(pos fuel.RequestPosition) (BatchSizeIterator, error) {
	if pos.Order != nil {
		return nil, errors.New("schemes: ConstantScheme: a saved position of a constant scheme has no order")
	}
	if total := s.total(); pos.Next < 0 || (total >= 0 && pos.Next > total) {
		return nil, fmt.Errorf("schemes: ConstantScheme: cannot restore at batch %d: an epoch has %d", pos.Next, total)
	}
	return &constantIterator{s: s, next: pos.Next}, nil
}

type constantIterator struct {
	s    *Constant
	next int
}

func (it *constantIterator) Next() (int, error) {
	total := it.s.total()
	if total >= 0 && it.next >= total {
		return 0, io.EOF
	}
	it.next++
	if it.s.Times == 0 && it.s.NumExamples > 0 && it.next == total {
		if r := it.s.NumExamples % it.s.BatchSize; r != 0 {
			return r, nil
		}
	}
	return it.s.BatchSize, nil
}

func (it *constantIterator) Position() fuel.RequestPosition {
	return fuel.RequestPosition{Next: it.next}
}
