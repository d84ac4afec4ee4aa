package monitoring

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// Scheme is an aggregation scheme (Blocks' AggregationScheme): how to
// compute a variable's value on a whole dataset from its values on the
// batches. Attach one to a variable's Tag.Aggregation, or use MeanOf,
// TakeLastOf, MinimumOf, MaximumOf, ConcatenateOf or PerplexityOf, which
// return a tagged variable.
type Scheme interface {
	// NewAggregator returns a fresh aggregator (Blocks' get_aggregator).
	NewAggregator() Aggregator
}

// Aggregator incrementally computes a value over batches (Blocks'
// Aggregator). The values it needs per batch are those of Requires,
// computed by the caller's compiled function; the aggregation itself is
// done on the host, in the dtype Theano's accumulators would have.
type Aggregator interface {
	// Requires are the variables whose per-batch values Aggregate takes,
	// in order. Constants among them are read directly, never computed.
	Requires() []*core.Variable
	// Initialize forgets every batch aggregated so far.
	Initialize()
	// Aggregate adds one batch: values are those of Requires.
	Aggregate(values []*nd.Array) error
	// Readout is the aggregated value.
	Readout() (*nd.Array, error)
}

// Mean is the mean of Numerator over the batches, weighted by Denominator:
// sum of Numerator's values divided by the sum of Denominator's. A variable
// monitored without a scheme and depending on data gets Mean(v, 1): the
// unweighted mean of its per-batch values.
type Mean struct {
	Numerator, Denominator *core.Variable
}

// NewAggregator returns a Mean aggregator.
func (m *Mean) NewAggregator() Aggregator { return &meanAggregator{scheme: m} }

// Perplexity is exp(-Mean): the Numerator is a total log-likelihood and
// the Denominator a number of examples.
type Perplexity struct {
	Numerator, Denominator *core.Variable
}

// NewAggregator returns a Perplexity aggregator.
func (p *Perplexity) NewAggregator() Aggregator {
	return &meanAggregator{scheme: &Mean{p.Numerator, p.Denominator}, perplexity: true}
}

// TakeLast remembers the value of the last batch.
type TakeLast struct{ Variable *core.Variable }

// NewAggregator returns a TakeLast aggregator.
func (s *TakeLast) NewAggregator() Aggregator {
	return &simpleAggregator{v: s.Variable, kind: aggTakeLast}
}

// Minimum is the elementwise minimum over the batches.
type Minimum struct{ Variable *core.Variable }

// NewAggregator returns a Minimum aggregator.
func (s *Minimum) NewAggregator() Aggregator {
	return &simpleAggregator{v: s.Variable, kind: aggMinimum}
}

// Maximum is the elementwise maximum over the batches.
type Maximum struct{ Variable *core.Variable }

// NewAggregator returns a Maximum aggregator.
func (s *Maximum) NewAggregator() Aggregator {
	return &simpleAggregator{v: s.Variable, kind: aggMaximum}
}

// Concatenate stacks the values of all batches along a new first axis.
type Concatenate struct{ Variable *core.Variable }

// NewAggregator returns a Concatenate aggregator.
func (s *Concatenate) NewAggregator() Aggregator {
	return &simpleAggregator{v: s.Variable, kind: aggConcatenate}
}

// MeanOf is Blocks' aggregation.mean: numerator/denominator, named after
// the numerator and tagged so that it is aggregated as
// sum(numerator)/sum(denominator) over batches. A nil denominator is 1,
// of the numerator's dtype (as Theano casts Blocks' default 1.0).
func MeanOf(numerator, denominator *core.Variable) *core.Variable {
	if denominator == nil {
		denominator = oneLike(numerator)
	}
	v := core.Div(numerator, denominator)
	v.Tag.Aggregation = &Mean{numerator, denominator}
	v.Name = numerator.Name
	return v
}

// oneLike is the constant 1 of v's dtype when it is a float, else of
// float64 (Theano's result dtype for an integer divided by a Python
// float).
func oneLike(v *core.Variable) *core.Variable {
	if dt := v.DType(); dt == nd.Float32 || dt == nd.Float64 {
		return core.Const(dt, 1)
	}
	return core.Const(nd.Float64, 1)
}

// PerplexityOf is Blocks' aggregation.perplexity: exp(-logLikelihood /
// nExamples) named "perplexity", aggregated as a Perplexity.
func PerplexityOf(logLikelihood, nExamples *core.Variable) *core.Variable {
	v := core.Exp(core.Neg(core.Div(logLikelihood, nExamples)))
	v.Tag.Aggregation = &Perplexity{logLikelihood, nExamples}
	v.Name = "perplexity"
	return v
}

func simpleAggregation(v *core.Variable, scheme func(*core.Variable) Scheme) *core.Variable {
	c := v.Copy()
	c.Tag.Aggregation = scheme(c)
	return c
}

// TakeLastOf is Blocks' take_last: a copy of v (same name) aggregated as
// TakeLast.
func TakeLastOf(v *core.Variable) *core.Variable {
	return simpleAggregation(v, func(c *core.Variable) Scheme { return &TakeLast{c} })
}

// MinimumOf is Blocks' minimum: a copy of v aggregated as Minimum.
func MinimumOf(v *core.Variable) *core.Variable {
	return simpleAggregation(v, func(c *core.Variable) Scheme { return &Minimum{c} })
}

// MaximumOf is Blocks' maximum: a copy of v aggregated as Maximum.
func MaximumOf(v *core.Variable) *core.Variable {
	return simpleAggregation(v, func(c *core.Variable) Scheme { return &Maximum{c} })
}

// ConcatenateOf is Blocks' concatenate: a copy of v aggregated as
// Concatenate.
func ConcatenateOf(v *core.Variable) *core.Variable {
	return simpleAggregation(v, func(c *core.Variable) Scheme { return &Concatenate{c} })
}

// accDType is the dtype an accumulator of values of dt has: the same for
// floats, int64 for integers.
func accDType(dt nd.DType) nd.DType {
	if dt.IsFloat() {
		return dt
	}
	return nd.Int64
}

// divDType is the dtype of a / b, as Theano's true division upcasts.
func divDType(a, b nd.DType) nd.DType {
	switch {
	case a.IsFloat() && b.IsFloat():
		if a == nd.Float64 || b == nd.Float64 {
			return nd.Float64
		}
		return nd.Float32
	case a.IsFloat() || b.IsFloat():
		f, i := a, b
		if !f.IsFloat() {
			f, i = b, a
		}
		if f == nd.Float32 && (i == nd.Uint8 || i == nd.Bool) {
			return nd.Float32
		}
		return nd.Float64
	}
	return nd.Float64
}

// emptyLike is what an accumulator reads before any batch: Theano's
// shared_like, an array of shape (0,)*ndim (a 0-d zero for scalars).
func emptyLike(dt nd.DType, ndim int) *nd.Array {
	return nd.New(dt, make([]int, ndim)...)
}

// accumulate adds v into *acc (allocating it on the first batch).
func accumulate(acc **nd.Array, v *nd.Array, what *core.Variable) error {
	if *acc == nil {
		*acc = v.Astype(accDType(v.DType()))
		return nil
	}
	a := *acc
	if !nd.SameShape(a.Shape, v.Shape) {
		return fmt.Errorf("aggregating %s: this batch's value has shape %s, the earlier ones %s", what, nd.ShapeString(v.Shape), nd.ShapeString(a.Shape))
	}
	switch d := a.Data.(type) {
	case []float32:
		if s, ok := v.Data.([]float32); ok {
			for i := range d {
				d[i] += s[i]
			}
			return nil
		}
	case []float64:
		if s, ok := v.Data.([]float64); ok {
			for i := range d {
				d[i] += s[i]
			}
			return nil
		}
	}
	for i, n := 0, a.Size(); i < n; i++ {
		a.SetFlat(i, a.Flat(i)+v.Flat(i))
	}
	return nil
}

type meanAggregator struct {
	scheme     *Mean
	perplexity bool
	num, den   *nd.Array
}

func (m *meanAggregator) Requires() []*core.Variable {
	return []*core.Variable{m.scheme.Numerator, m.scheme.Denominator}
}

func (m *meanAggregator) Initialize() { m.num, m.den = nil, nil }

func (m *meanAggregator) Aggregate(values []*nd.Array) error {
	if err := accumulate(&m.num, values[0], m.scheme.Numerator); err != nil {
		return err
	}
	return accumulate(&m.den, values[1], m.scheme.Denominator)
}

func (m *meanAggregator) Readout() (*nd.Array, error) {
	num, den := m.num, m.den
	if num == nil {
		num = emptyLike(accDType(m.scheme.Numerator.DType()), m.scheme.Numerator.NDim())
		den = emptyLike(accDType(m.scheme.Denominator.DType()), m.scheme.Denominator.NDim())
		if num.NDim() == 0 && den.NDim() == 0 {
			// 0/0, as Theano computes it.
			out := nd.Scalar(divDType(num.DType(), den.DType()), math.NaN())
			return m.finish(out), nil
		}
	}
	dt := divDType(num.DType(), den.DType())
	var out *nd.Array
	switch {
	case nd.SameShape(num.Shape, den.Shape):
		out = nd.New(dt, num.Shape...)
		for i, n := 0, out.Size(); i < n; i++ {
			out.SetFlat(i, num.Flat(i)/den.Flat(i))
		}
	case den.Size() == 1:
		out = nd.New(dt, num.Shape...)
		d := den.Flat(0)
		for i, n := 0, out.Size(); i < n; i++ {
			out.SetFlat(i, num.Flat(i)/d)
		}
	case num.Size() == 1:
		out = nd.New(dt, den.Shape...)
		x := num.Flat(0)
		for i, n := 0, out.Size(); i < n; i++ {
			out.SetFlat(i, x/den.Flat(i))
		}
	default:
		return nil, fmt.Errorf("aggregating the mean of %s: numerator of shape %s and denominator of shape %s do not broadcast",
			m.scheme.Numerator, nd.ShapeString(num.Shape), nd.ShapeString(den.Shape))
	}
	return m.finish(out), nil
}

func (m *meanAggregator) finish(out *nd.Array) *nd.Array {
	if m.perplexity {
		for i, n := 0, out.Size(); i < n; i++ {
			out.SetFlat(i, math.Exp(-out.Flat(i)))
		}
	}
	return out
}

type aggKind int

const (
	aggTakeLast aggKind = iota
	aggMinimum
	aggMaximum
	aggConcatenate
)

type simpleAggregator struct {
	v     *core.Variable
	kind  aggKind
	acc   *nd.Array
	parts []*nd.Array
}

func (s *simpleAggregator) Requires() []*core.Variable { return []*core.Variable{s.v} }

func (s *simpleAggregator) Initialize() { s.acc, s.parts = nil, nil }

func (s *simpleAggregator) Aggregate(values []*nd.Array) error {
	v := values[0]
	switch s.kind {
	case aggTakeLast:
		s.acc = v.Copy()
	case aggConcatenate:
		if len(s.parts) > 0 && !nd.SameShape(s.parts[0].Shape[1:], v.Shape) {
			return fmt.Errorf("concatenating %s: this batch's value has shape %s, the first one %s", s.v, nd.ShapeString(v.Shape), nd.ShapeString(s.parts[0].Shape[1:]))
		}
		p, err := v.Copy().Reshape(append([]int{1}, v.Shape...)...)
		if err != nil {
			return err
		}
		s.parts = append(s.parts, p)
	default:
		if s.acc == nil {
			s.acc = v.Copy()
			return nil
		}
		if !nd.SameShape(s.acc.Shape, v.Shape) {
			return fmt.Errorf("aggregating %s: this batch's value has shape %s, the earlier ones %s", s.v, nd.ShapeString(v.Shape), nd.ShapeString(s.acc.Shape))
		}
		for i, n := 0, s.acc.Size(); i < n; i++ {
			a, b := s.acc.Flat(i), v.Flat(i)
			var r float64
			switch {
			case math.IsNaN(a) || math.IsNaN(b):
				r = math.NaN()
			case s.kind == aggMinimum:
				r = math.Min(a, b)
			default:
				r = math.Max(a, b)
			}
			s.acc.SetFlat(i, r)
		}
	}
	return nil
}

func (s *simpleAggregator) Readout() (*nd.Array, error) {
	if s.kind == aggConcatenate {
		if len(s.parts) == 0 {
			return emptyLike(s.v.DType(), s.v.NDim()+1), nil
		}
		return nd.Concat(s.parts)
	}
	if s.acc == nil {
		return emptyLike(s.v.DType(), s.v.NDim()), nil
	}
	return s.acc.Copy(), nil
}
