package monitoring

import (
	"math"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// countAbove counts, over all batches, the examples whose value exceeds 2.
type countAbove struct{ n float64 }

func (c *countAbove) Initialize() error { c.n = 0; return nil }
func (c *countAbove) Aggregate(v []*nd.Array) error {
	for _, x := range v[0].Float64s() {
		if x > 2 {
			c.n++
		}
	}
	return nil
}
func (c *countAbove) Readout() (*nd.Array, error) { return nd.Scalar(nd.Float64, c.n), nil }

func TestMonitoredQuantityInEvaluator(t *testing.T) {
	x := core.NewInput("x", nd.Float64, 1)
	doubled := core.Mul(x, core.Const(nd.Float64, 2))
	q := &MonitoredQuantity{Name: "above_two", Requires: []*core.Variable{doubled}, New: func() QuantityAccumulator { return &countAbove{} }}
	qv, err := q.Variable()
	if err != nil {
		t.Fatal(err)
	}
	mean := core.MeanAll(x)
	mean.Name = "mean"
	ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{qv, mean}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev.InitializeAggregators()
	for _, b := range [][]float64{{0.5, 1.5, 2}, {3, 0}} {
		if err := ev.ProcessBatch(map[string]*nd.Array{"x": nd.FromSlice(b)}); err != nil {
			t.Fatal(err)
		}
	}
	vals, err := ev.GetAggregatedValues()
	if err != nil {
		t.Fatal(err)
	}
	// 2x > 2 for 1.5, 2 and 3.
	if got := vals["above_two"].Flat(0); got != 3 {
		t.Errorf("above_two = %v, want 3", got)
	}
	if got := vals["mean"].Flat(0); math.Abs(got-(4.0/3+1.5)/2) > 1e-15 {
		t.Errorf("mean = %v", got)
	}
}
