package monitoring

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// QuantityAccumulator is the state of a MonitoredQuantity over an epoch
// (Blocks' MonitoredQuantity.initialize, aggregate and
// get_aggregated_value).
type QuantityAccumulator interface {
	Initialize() error
	// Aggregate takes the batch's values of Requires, in order.
	Aggregate(values []*nd.Array) error
	Readout() (*nd.Array, error)
}

// MonitoredQuantity is Blocks' MonitoredQuantity: a quantity computed on
// the host, batch by batch, from the values of symbolic variables
// (Requires) — e.g. a BLEU score or an error rate computed from
// predictions. Variable returns a placeholder to put among a monitoring
// extension's variables; only Requires are computed by the compiled
// function.
type MonitoredQuantity struct {
	Name     string
	Requires []*core.Variable
	// New makes a fresh accumulator (one per monitoring extension).
	New func() QuantityAccumulator
}

// Variable is the quantity's placeholder: a variable named Name whose
// aggregation scheme is the quantity. It cannot be computed itself.
func (q *MonitoredQuantity) Variable() (*core.Variable, error) {
	if q.Name == "" {
		return nil, fmt.Errorf("MonitoredQuantity: no name")
	}
	if q.New == nil {
		return nil, fmt.Errorf("MonitoredQuantity %s: no accumulator", q.Name)
	}
	// A placeholder, never computed: its value comes from the quantity.
	v := core.Const(nd.Float64, 0).Copy()
	v.Name = q.Name
	v.Tag.Aggregation = q
	return v, nil
}

// NewAggregator is the quantity as an aggregation scheme.
func (q *MonitoredQuantity) NewAggregator() Aggregator {
	return &quantityAggregator{q: q, acc: q.New()}
}

type quantityAggregator struct {
	q   *MonitoredQuantity
	acc QuantityAccumulator
	err error // from Initialize, reported at the next Aggregate or Readout
}

func (a *quantityAggregator) Requires() []*core.Variable { return a.q.Requires }
func (a *quantityAggregator) Initialize()                { a.err = a.acc.Initialize() }
func (a *quantityAggregator) Aggregate(values []*nd.Array) error {
	if a.err != nil {
		return fmt.Errorf("monitored quantity %s: initialize: %w", a.q.Name, a.err)
	}
	if err := a.acc.Aggregate(values); err != nil {
		return fmt.Errorf("monitored quantity %s: aggregate: %w", a.q.Name, err)
	}
	return nil
}
func (a *quantityAggregator) Readout() (*nd.Array, error) {
	if a.err != nil {
		return nil, fmt.Errorf("monitored quantity %s: initialize: %w", a.q.Name, a.err)
	}
	v, err := a.acc.Readout()
	if err != nil {
		return nil, fmt.Errorf("monitored quantity %s: readout: %w", a.q.Name, err)
	}
	return v, nil
}
