package monitoring

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// State is the partial aggregate of every aggregator of the buffer, for
// checkpoints taken between two readouts (a TrainingDataMonitoring that
// records after each epoch, saved mid-epoch): per aggregator, the arrays
// it has accumulated (nil entries: nothing yet; a nil slice for a
// variable computed at readout). The arrays are copies.
func (b *AggregationBuffer) State() ([][]*nd.Array, error) {
	out := make([][]*nd.Array, len(b.aggs))
	cp := func(a *nd.Array) *nd.Array {
		if a == nil {
			return nil
		}
		return a.Copy()
	}
	for i, a := range b.aggs {
		switch x := a.(type) {
		case nil:
		case *meanAggregator:
			out[i] = []*nd.Array{cp(x.num), cp(x.den)}
		case *quantityAggregator:
			if !savedByOwner(x.acc) {
				return nil, fmt.Errorf("monitoring: the state of monitored quantity %s cannot be saved (a MonitoredQuantity subclass's attributes can)", x.q.Name)
			}
		case *simpleAggregator:
			s := []*nd.Array{cp(x.acc)}
			for _, p := range x.parts {
				s = append(s, cp(p))
			}
			out[i] = s
		default:
			return nil, fmt.Errorf("monitoring: the state of aggregator %T cannot be saved", a)
		}
	}
	return out, nil
}

// SetState restores what State returned (from a buffer over the same
// variables).
func (b *AggregationBuffer) SetState(st [][]*nd.Array) error {
	if len(st) != len(b.aggs) {
		return fmt.Errorf("monitoring: a saved state of %d aggregators for a buffer of %d", len(st), len(b.aggs))
	}
	for i, a := range b.aggs {
		s := st[i]
		switch x := a.(type) {
		case nil:
		case *meanAggregator:
			if len(s) != 2 {
				return fmt.Errorf("monitoring: aggregator %d (mean) saved with %d arrays", i, len(s))
			}
			x.num, x.den = s[0], s[1]
		case *quantityAggregator:
			if !savedByOwner(x.acc) {
				return fmt.Errorf("monitoring: the state of monitored quantity %s cannot be restored", x.q.Name)
			}
		case *simpleAggregator:
			if len(s) < 1 {
				return fmt.Errorf("monitoring: aggregator %d saved with no arrays", i)
			}
			x.acc, x.parts = s[0], append([]*nd.Array(nil), s[1:]...)
		default:
			return fmt.Errorf("monitoring: the state of aggregator %T cannot be restored", a)
		}
	}
	return nil
}

// OwnedState is a QuantityAccumulator whose state its owner saves and
// restores (a script class's instance: its attributes go into the
// checkpoint's script objects), so the buffer's state has nothing of it.
type OwnedState interface {
	QuantityAccumulator
	StateSavedByOwner()
}

func savedByOwner(acc QuantityAccumulator) bool {
	_, ok := acc.(OwnedState)
	return ok
}
