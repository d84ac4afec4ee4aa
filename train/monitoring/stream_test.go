package monitoring

import (
	"io"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// arrayStream is a minimal fuel.Stream over in-memory arrays: sequential
// batches of batchSize examples (the last one short).
type arrayStream struct {
	sources   []string
	data      []*nd.Array
	batchSize int
	epochs    int // epoch iterators handed out
}

func (s *arrayStream) Sources() []string               { return s.sources }
func (s *arrayStream) AxisLabels() map[string][]string { return nil }
func (s *arrayStream) ProducesExamples() bool          { return false }
func (s *arrayStream) GetEpochIterator() (fuel.EpochIterator, error) {
	s.epochs++
	return &arrayIterator{s: s}, nil
}

type arrayIterator struct {
	s   *arrayStream
	pos int
}

func (it *arrayIterator) Next() ([]*nd.Array, error) {
	n := it.s.data[0].Shape[0]
	if it.pos >= n {
		return nil, io.EOF
	}
	stop := min(it.pos+it.s.batchSize, n)
	out := make([]*nd.Array, len(it.s.data))
	for i, a := range it.s.data {
		out[i] = a.Slice(it.pos, stop).Copy()
	}
	it.pos = stop
	return out, nil
}
