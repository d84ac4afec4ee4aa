package algorithms

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// GradientDescent compiles its training function for GradientDescentConfig's
// Device, plainly and microbatched: the zero Device trains on the CPU, a
// CUDA device is asked of its backend (none in these tests' build, so the
// error names it).
func TestGradientDescentCompilesForItsDevice(t *testing.T) {
	build := func(d device.Device, micro *Microbatching) (*GradientDescent, *core.Variable) {
		x := core.NewInput("x", nd.Float64, 1)
		w := core.NewShared(vec(1), "w")
		cost := core.MeanAll(core.Mul(core.Mul(w, w), x))
		gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{w}, StepRule: NewScale(nd.Float64, 0.1), Device: d})
		if err != nil {
			t.Fatal(err)
		}
		if gd.Device != d {
			t.Errorf("the algorithm's Device is %v, the config's %v", gd.Device, d)
		}
		gd.Microbatching = micro
		return gd, w
	}
	for _, micro := range []*Microbatching{nil, {K: 2}} {
		gd, w := build(device.Device{}, micro)
		if err := gd.Initialize(); err != nil {
			t.Fatalf("microbatching %v: %v", micro, err)
		}
		if err := gd.ProcessBatch(map[string]*nd.Array{"x": vec(1, 1)}); err != nil {
			t.Fatal(err)
		}
		// d(mean(w*w*x))/dw = 2*w*mean(x) = 2: w = 1 - 0.1*2.
		if got := w.Value().Flat(0); got != 0.8 {
			t.Errorf("microbatching %v: w = %v after one step, want 0.8", micro, got)
		}
		gd, _ = build(device.Device{Kind: device.CUDA}, micro)
		if err := gd.Initialize(); err == nil || !strings.Contains(err.Error(), "no cuda backend") {
			t.Errorf("microbatching %v on cuda:0: %v; want the missing backend named", micro, err)
		}
	}
	acc := core.NewShared(vec(0), "acc")
	ua, err := NewUpdatesAlgorithm([]core.Update{{Shared: acc, Value: core.Add(acc, core.Const(nd.Float64, 1))}}, "")
	if err != nil {
		t.Fatal(err)
	}
	ua.Device = device.Device{Kind: device.CUDA}
	if err := ua.Initialize(); err == nil || !strings.Contains(err.Error(), "no cuda backend") {
		t.Errorf("UpdatesAlgorithm on cuda:0: %v; want the missing backend named", err)
	}
}
