package schemes

import (
	"errors"
	"fmt"
	"io"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/numpyrand"
)

// StatefulRNG is a generator whose state a position can record and
// restore (numpyrand.RandomState is one). A shuffled scheme whose RNG is
// not one resumes its saved epoch but cannot restore the generator.
type StatefulRNG interface {
	State() numpyrand.State
	SetState(numpyrand.State)
}

func rngState(r Shuffler) *numpyrand.State {
	s, ok := r.(StatefulRNG)
	if !ok {
		return nil
	}
	st := s.State()
	return &st
}

func cloneState(s *numpyrand.State) *numpyrand.State {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

func restoreRNG(scheme string, r Shuffler, st *numpyrand.State) error {
	if st == nil {
		return nil
	}
	s, ok := r.(StatefulRNG)
	if !ok {
		return fmt.Errorf("schemes: %s: the saved position has a generator state but the scheme's rng (%T) cannot restore one", scheme, r)
	}
	if st.Pos < 0 || st.Pos > 624 {
		return fmt.Errorf("schemes: %s: saved generator position %d is outside [0, 624]", scheme, st.Pos)
	}
	s.SetState(*st)
	return nil
}

// Concatenated is Fuel's ConcatenatedScheme: the requests of several
// schemes, one after the other. All request examples or all request
// batches.
type Concatenated struct {
	Schemes []Scheme
}

// Components are the concatenated schemes (fuel.Composite).
func (c *Concatenated) Components() []any {
	out := make([]any, len(c.Schemes))
	for i, s := range c.Schemes {
		out[i] = s
	}
	return out
}

// ConcatenatedScheme is Fuel's ConcatenatedScheme(schemes). As in Fuel,
// every scheme's epoch starts (shuffled schemes draw their orders, in the
// schemes' order) when the concatenated epoch starts.
func ConcatenatedScheme(schemes []Scheme) (*Concatenated, error) {
	if len(schemes) == 0 {
		return nil, errors.New("schemes: ConcatenatedScheme: no schemes")
	}
	for i, s := range schemes {
		if s == nil {
			return nil, fmt.Errorf("schemes: ConcatenatedScheme: scheme %d is None", i)
		}
		if s.RequestsExamples() != schemes[0].RequestsExamples() {
			return nil, errors.New("schemes: ConcatenatedScheme: all schemes must produce the same type of requests (batches or examples)")
		}
	}
	return &Concatenated{Schemes: append([]Scheme(nil), schemes...)}, nil
}

// RequestsExamples is that of the schemes.
func (c *Concatenated) RequestsExamples() bool { return c.Schemes[0].RequestsExamples() }

// GetRequestIterator starts an epoch of every scheme.
func (c *Concatenated) GetRequestIterator() (RequestIterator, error) {
	its := make([]RequestIterator, len(c.Schemes))
	for i, s := range c.Schemes {
		var err error
		if its[i], err = s.GetRequestIterator(); err != nil {
			return nil, fmt.Errorf("schemes: ConcatenatedScheme: scheme %d: %w", i, err)
		}
	}
	return &concatIterator{its: its}, nil
}

// RestoreRequestIterator rebuilds every scheme's iterator at its saved
// position (Parts) and continues with scheme Next.
func (c *Concatenated) RestoreRequestIterator(pos fuel.RequestPosition) (RequestIterator, error) {
	if len(pos.Parts) != len(c.Schemes) {
		return nil, fmt.Errorf("schemes: ConcatenatedScheme: the saved position has %d parts, the scheme %d schemes", len(pos.Parts), len(c.Schemes))
	}
	if pos.Next < 0 || pos.Next > len(c.Schemes) {
		return nil, fmt.Errorf("schemes: ConcatenatedScheme: cannot restore at scheme %d of %d", pos.Next, len(c.Schemes))
	}
	its := make([]RequestIterator, len(c.Schemes))
	for i, s := range c.Schemes {
		var err error
		if its[i], err = s.RestoreRequestIterator(pos.Parts[i]); err != nil {
			return nil, fmt.Errorf("schemes: ConcatenatedScheme: scheme %d: %w", i, err)
		}
	}
	return &concatIterator{its: its, cur: pos.Next}, nil
}

type concatIterator struct {
	its []RequestIterator
	cur int
}

func (it *concatIterator) Next() (fuel.Request, error) {
	for it.cur < len(it.its) {
		r, err := it.its[it.cur].Next()
		if errors.Is(err, io.EOF) {
			it.cur++
			continue
		}
		return r, err
	}
	return fuel.Request{}, io.EOF
}

func (it *concatIterator) Position() fuel.RequestPosition {
	parts := make([]fuel.RequestPosition, len(it.its))
	for i, s := range it.its {
		parts[i] = s.Position()
	}
	return fuel.RequestPosition{Next: it.cur, Parts: parts}
}

// Fold is one fold of cross_validation: the training scheme over the
// other folds' examples, the validation scheme over this fold's, and the
// fold's size.
type Fold struct {
	Train, Valid Scheme
	Size         int
}

// CrossValidation is Fuel's cross_validation(scheme_class, num_examples,
// num_folds, strict=True, **kwargs): fold i validates on examples
// [n*i//k, n*(i+1)//k) and trains on the others in order. make builds a
// scheme of the class over the given examples (newScheme, kwargs bound). With
// strict, num_examples must divide into num_folds equal folds. The cases
// Fuel's Python handles by its arithmetic are handled as it does: strict with
// num_folds 0 is its ZeroDivisionError, the divisibility test is Python's %
// (10 % -5 == 0), num_folds <= 0 gives no folds, and a negative
// num_examples folds of no examples.
func CrossValidation(newScheme func(Examples) (Scheme, error), numExamples, numFolds int, strict bool) ([]Fold, error) {
	if strict {
		if numFolds == 0 {
			return nil, fmt.Errorf("schemes: cross_validation: ZeroDivisionError: integer division or modulo by zero (num_folds is 0)")
		}
		if pyMod(numExamples, numFolds) != 0 {
			return nil, fmt.Errorf("schemes: cross_validation: ValueError: %d examples are not divisible in %d evenly-sized folds. To allow this, have a look at the `strict` argument.", numExamples, numFolds)
		}
	}
	if numFolds <= 0 {
		return nil, nil // Fuel's xrange(num_folds) is empty
	}
	folds := make([]Fold, numFolds)
	for i := range folds {
		begin, end := pyFloorDiv(numExamples*i, numFolds), pyFloorDiv(numExamples*(i+1), numFolds)
		var train, valid []int
		for j := 0; j < numExamples; j++ {
			if j >= begin && j < end {
				valid = append(valid, j)
			} else {
				train = append(train, j)
			}
		}
		tr, err := newScheme(List(train))
		if err != nil {
			return nil, fmt.Errorf("schemes: cross_validation: fold %d: %w", i, err)
		}
		// Fuel passes xrange(begin, end) for the validation examples.
		va, err := newScheme(rangeFrom(begin, end))
		if err != nil {
			return nil, fmt.Errorf("schemes: cross_validation: fold %d: %w", i, err)
		}
		folds[i] = Fold{Train: tr, Valid: va, Size: max(end-begin, 0)}
	}
	return folds, nil
}

// pyMod and pyFloorDiv are Python's % and // on ints (the sign of the
// divisor, flooring).
func pyMod(a, b int) int {
	m := a % b
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

func pyFloorDiv(a, b int) int { return (a - pyMod(a, b)) / b }

// rangeFrom is range(begin, end): a list unless it starts at 0.
func rangeFrom(begin, end int) Examples {
	if begin == 0 && end >= 0 {
		return Range(end)
	}
	idx := make([]int, 0, max(end-begin, 0))
	for j := begin; j < end; j++ {
		idx = append(idx, j)
	}
	return List(idx)
}
