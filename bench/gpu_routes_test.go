package bench

import (
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/core/exec/cuda"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/algorithms"
)

// Every op of the benchmark models' training steps (the MLPs, LeNet, the
// LSTM and GRU language models; SGD and Adam) is of a kind the CUDA
// backend runs on the GPU (core/exec/cuda's route table), so that a GPU
// run of them does not fall back to the CPU. Checked without a GPU; make
// gpu-check runs them with BLOCKS_CUDA_STRICT=1 on one.
func TestBenchModelsRouteToGPU(t *testing.T) {
	check := func(name string, f *core.Function) {
		t.Helper()
		n := 0
		for _, v := range f.Graph().Nodes {
			if v.Op() == nil {
				continue
			}
			n++
			if ok, why := cuda.OnGPU(core.Spec(v.Op()).Kind); !ok {
				t.Errorf("%s: %s = %s would run on the CPU: %s", name, v, v.Op(), why)
			}
		}
		if n == 0 {
			t.Errorf("%s: no ops", name)
		}
	}
	gd, _ := mlpStep(t, []int{784, 100, 10}, 256, 0.1)
	check("mlp-tutorial", gd.Function())
	gd, _ = lenetModel(t, 64, device.Device{})
	check("lenet", gd.Function())
	for _, name := range []string{"lstm-lm", "gru-lm"} {
		for _, rule := range []algorithms.StepRule{algorithms.NewScale(nd.Float32, 0.1), algorithms.NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 1-1e-8)} {
			m := buildRNN(t, name)
			gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: m.cost, Parameters: m.params, StepRule: rule})
			if err != nil {
				t.Fatal(err)
			}
			if err := gd.Initialize(); err != nil {
				t.Fatal(err)
			}
			check(name, gd.Function())
		}
	}
}
