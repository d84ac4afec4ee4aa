package fuel

import (
	"github.com/blocks-go/blocks/fuel/schemes"
)

// BatchesPerEpoch is the scheme's count for a stream of an
// IterableDataset with an iteration scheme (which Fuel makes, and refuses
// when it is read): Blocks' ProgressBar asks the scheme.
func (s *schemedIterable) BatchesPerEpoch() (int, bool) {
	if l, ok := s.s.(schemes.Lengther); ok {
		return l.NumRequests()
	}
	if s.count != nil {
		return s.count.NumRequests()
	}
	return 0, false
}

// BatchesPerEpoch is the scheme's count (Blocks' ProgressBar asks the
// scheme; an epoch that get_data ends early is shorter).
func (s *scriptDataStream) BatchesPerEpoch() (int, bool) {
	var sc any = s.scheme
	if s.sizes != nil {
		sc = s.sizes
	}
	if l, ok := sc.(schemes.Lengther); ok {
		return l.NumRequests()
	}
	return 0, false
}
