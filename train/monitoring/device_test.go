package monitoring

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// The evaluator's function and the buffer's readout compile for the
// device they are given: the zero Device evaluates on the CPU, a CUDA
// device is asked of its backend (none in these tests' build).
func TestMonitoringCompilesForItsDevice(t *testing.T) {
	x := core.NewInput("features", nd.Float32, 2)
	m := core.MeanAll(x)
	m.Name = "mean_x"
	w := core.NewShared(nd.FromSlice(f32(3), 1), "w")
	norm := core.SumAll(core.Mul(w, w)) // no data: read out once
	norm.Name = "norm"
	vars := []*core.Variable{m, norm}
	cuda := device.Device{Kind: device.CUDA}

	ev, err := NewDatasetEvaluator(device.Device{}, vars, nil)
	if err != nil {
		t.Fatal(err)
	}
	stream := &arrayStream{sources: []string{"features"}, data: []*nd.Array{nd.FromSlice(f32(1, 3), 2, 1)}, batchSize: 2}
	vals, err := ev.Evaluate(stream)
	if err != nil {
		t.Fatal(err)
	}
	if vals["mean_x"].Flat(0) != 2 || vals["norm"].Flat(0) != 9 {
		t.Errorf("on the CPU: mean_x %v, norm %v; want 2 and 9", vals["mean_x"], vals["norm"])
	}
	if _, err := NewDatasetEvaluator(cuda, vars, nil); err == nil || !strings.Contains(err.Error(), "no cuda backend") {
		t.Errorf("NewDatasetEvaluator(cuda:0): %v; want the missing backend named", err)
	}
	if _, err := NewAggregationBuffer(cuda, []*core.Variable{norm}, false); err == nil || !strings.Contains(err.Error(), "no cuda backend") {
		t.Errorf("NewAggregationBuffer(cuda:0): %v; want the missing backend named", err)
	}
}
