package schemes

// A Lengther is a scheme that knows how many requests an epoch has (a
// progress bar's length). Schemes that cannot know it (a ConstantScheme
// that goes on forever) do not implement it or report false.
type Lengther interface {
	NumRequests() (int, bool)
}

func ceilDiv(n, d int) int { return (n + d - 1) / d }

// NumRequests is the number of batches: ceil(examples / batch size).
func (s *Sequential) NumRequests() (int, bool) { return ceilDiv(s.Examples.Len(), s.BatchSize), true }

// NumRequests is the number of batches: ceil(examples / batch size).
func (s *Shuffled) NumRequests() (int, bool) { return ceilDiv(s.Examples.Len(), s.BatchSize), true }

// NumRequests is the number of examples.
func (s *SequentialExample) NumRequests() (int, bool) { return s.Examples.Len(), true }

// NumRequests is the number of examples.
func (s *ShuffledExample) NumRequests() (int, bool) { return s.Examples.Len(), true }

// NumRequests is times, or ceil(num_examples / batch size); unknown when
// the scheme goes on forever.
func (s *Constant) NumRequests() (int, bool) {
	switch {
	case s.Times > 0:
		return s.Times, true
	case s.NumExamples > 0:
		return ceilDiv(s.NumExamples, s.BatchSize), true
	}
	return 0, false
}

// NumRequests is the sum over the schemes, when each knows its own.
func (s *Concatenated) NumRequests() (int, bool) {
	total := 0
	for _, sc := range s.Schemes {
		l, ok := sc.(Lengther)
		if !ok {
			return 0, false
		}
		n, ok := l.NumRequests()
		if !ok {
			return 0, false
		}
		total += n
	}
	return total, true
}
