//go:build cuda

package bench

// The CUDA build of the benchmarks (make gpu-check) links the CUDA
// backend, so that BLOCKS_DEVICE=cuda times the steps on the GPU.
import (
	"math"
	"testing"

	"github.com/blocks-go/blocks/core/device"
	_ "github.com/blocks-go/blocks/core/exec/cuda"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/algorithms"
)

// TestBenchModelsGPUMatchCPU trains the benchmark's LeNet (batch 64) and
// lstm-lm (as torch_rnn.py's) for 5 steps on the GPU and on the CPU: every
// variable the steps update within 1e-4 (relative, 1e-6 absolute near
// zero). GPU only: make gpu-check runs it.
func TestBenchModelsGPUMatchCPU(t *testing.T) {
	build := map[string]func(device.Device) (*algorithms.GradientDescent, map[string]*nd.Array){
		"lenet": func(d device.Device) (*algorithms.GradientDescent, map[string]*nd.Array) { return lenetModel(t, 64, d) },
		"lstm-lm": func(d device.Device) (*algorithms.GradientDescent, map[string]*nd.Array) {
			m := buildRNN(t, "lstm-lm")
			gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{
				Cost: m.cost, Parameters: m.params, StepRule: algorithms.NewScale(nd.Float32, rnnConfigs["lstm-lm"].lr), Device: d})
			if err != nil {
				t.Fatal(err)
			}
			if err := gd.Initialize(); err != nil {
				t.Fatal(err)
			}
			return gd, m.data
		},
	}
	for _, name := range []string{"lenet", "lstm-lm"} {
		t.Run(name, func(t *testing.T) {
			train := func(d device.Device) []*nd.Array {
				if err := device.Check(d); err != nil {
					t.Fatal(err)
				}
				gd, data := build[name](d)
				for range 5 {
					if err := gd.ProcessBatch(data); err != nil {
						t.Fatal(err)
					}
				}
				var out []*nd.Array
				for _, u := range gd.Function().Graph().Updates {
					out = append(out, u.Shared.Value().Copy())
				}
				return out
			}
			want := train(device.Device{Kind: device.CPU})
			got := train(device.Device{Kind: device.CUDA})
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("%d updated variables on the GPU, %d on the CPU", len(got), len(want))
			}
			for k := range want {
				worst := 0.0
				for i := range want[k].Size() {
					w, g := want[k].Flat(i), got[k].Flat(i)
					if d := math.Abs(g-w) / (math.Abs(w) + 1e-2); d > worst || math.IsNaN(g) {
						worst = d
					}
				}
				if worst > 1e-4 || math.IsNaN(worst) {
					t.Errorf("%s: variable %d differs by %.3g (relative)", name, k, worst)
				}
			}
		})
	}
}
