package algorithms

import (
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// ProcessBatch adds no allocation to the compiled function's call (the
// batch is matched to the inputs in a reused slice; no outputs are
// copied when nothing is monitored).
func TestProcessBatchDoesNotAllocate(t *testing.T) {
	x := core.NewInput("features", nd.Float32, 2)
	y := core.NewInput("targets", nd.Float32, 2)
	W := core.NewShared(nd.New(nd.Float32, 8, 4), "W")
	b := core.NewShared(nd.New(nd.Float32, 4), "b")
	h, err := core.Dot(x, W)
	if err != nil {
		t.Fatal(err)
	}
	cost := core.MeanAll(core.Sqr(core.Sub(core.Add(h, b), y)))
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W, b}, StepRule: NewScale(nd.Float32, 0.01)})
	if err != nil {
		t.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		t.Fatal(err)
	}
	batch := map[string]*nd.Array{"features": nd.New(nd.Float32, 16, 8), "targets": nd.New(nd.Float32, 16, 4)}
	if err := gd.ProcessBatch(batch); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if err := gd.ProcessBatch(batch); err != nil {
			t.Fatal(err)
		}
	})
	args := []*nd.Array{batch["features"], batch["targets"]}
	callAllocs := testing.AllocsPerRun(50, func() {
		if _, err := gd.Function().Call(args); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > callAllocs {
		t.Errorf("ProcessBatch allocates %v times per step, the compiled function alone %v", allocs, callAllocs)
	}
	// With nothing monitored, a step (forward, backward, update and the
	// cost's finite check) allocates nothing at all.
	if allocs != 0 {
		t.Errorf("ProcessBatch allocates %v times per step after warm-up, want 0", allocs)
	}
}
