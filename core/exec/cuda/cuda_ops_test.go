//go:build cuda

package cuda_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
)

// The ops wired after the MLP's (their kernels in kernels_*.go), each with its
// gradients, against the CPU; then LeNet and the recurrent language model
// trained on both devices. GPU only (make gpu-check).

func extCases() []opCase {
	conv := func(opts core.Conv2dOptions) func(x, y *core.Variable) (*core.Variable, error) {
		return func(x, y *core.Variable) (*core.Variable, error) { return core.Conv2d(x, y, opts) }
	}
	pool := func(o core.PoolOptions) func(x, y *core.Variable) (*core.Variable, error) {
		return func(x, y *core.Variable) (*core.Variable, error) {
			p, err := core.Pool2d(x, o)
			if err != nil {
				return nil, err
			}
			return core.Add(p, core.SumAll(y)), nil
		}
	}
	return []opCase{
		{"conv2d valid", conv(core.Conv2dOptions{}), []int{8, 3, 12, 12}, []int{6, 3, 5, 5}, -1},
		{"conv2d step (2, 3) full", conv(core.Conv2dOptions{Step: [2]int{2, 3}, Border: core.Border{Mode: "full"}}), []int{4, 2, 9, 11}, []int{5, 2, 3, 2}, -1},
		{"conv2d half no flip", conv(core.Conv2dOptions{Border: core.Border{Mode: "half"}, NoFlip: true}), []int{3, 4, 8, 7}, []int{3, 4, 3, 3}, -1},
		{"conv2d with biases", func(x, y *core.Variable) (*core.Variable, error) {
			b, err := core.Sum(y, []int{1, 2, 3}, false, nil)
			if err != nil {
				return nil, err
			}
			return core.Conv2dBias(x, y, b, core.Conv2dOptions{})
		}, []int{5, 2, 10, 10}, []int{4, 2, 3, 3}, -1},
		{"max pool 2x2", pool(core.PoolOptions{Size: [2]int{2, 2}, IgnoreBorder: true}), []int{4, 3, 10, 12}, []int{2}, -1},
		{"max pool overlapping, partial windows", pool(core.PoolOptions{Size: [2]int{3, 2}, Step: [2]int{1, 2}}), []int{2, 3, 7, 9}, []int{2}, -1},
		{"sum pool", pool(core.PoolOptions{Size: [2]int{2, 3}, Step: [2]int{1, 1}, Mode: core.PoolSum}), []int{2, 3, 7, 9}, []int{2}, -1},
		{"average pool, padding included", pool(core.PoolOptions{Size: [2]int{3, 3}, Step: [2]int{2, 2}, Pad: [2]int{2, 1}, IgnoreBorder: true, Mode: core.PoolAverageInc}), []int{2, 3, 7, 9}, []int{2}, -1},
		{"average pool, padding excluded", pool(core.PoolOptions{Size: [2]int{3, 3}, Step: [2]int{2, 2}, Pad: [2]int{2, 1}, IgnoreBorder: true, Mode: core.PoolAverageExc}), []int{2, 3, 7, 9}, []int{2}, -1},
		{"dot n-d", func(x, y *core.Variable) (*core.Variable, error) { return core.DotND(x, y) }, []int{5, 7, 30}, []int{30, 20}, -1},
		{"concatenate", func(x, y *core.Variable) (*core.Variable, error) {
			return core.Concatenate([]*core.Variable{x, y, x}, 1)
		}, []int{10, 7}, []int{10, 5}, -1},
		{"slice of the last axis", func(x, y *core.Variable) (*core.Variable, error) {
			s, err := core.SliceLast(x, 2, 9)
			return mulSum(s, y, err)
		}, []int{6, 4, 12}, []int{6, 4, 7}, -1},
		{"maxout", func(x, y *core.Variable) (*core.Variable, error) {
			m, err := core.Maxout(x, 3)
			return mulSum(m, y, err)
		}, []int{6, 5, 12}, []int{6, 5, 4}, -1},
		{"subtensor", func(x, y *core.Variable) (*core.Variable, error) {
			i := func(v int) *int { return &v }
			s, err := core.Subtensor(x, []core.Index{{Slice: true, Start: i(-1), Stop: i(0), Step: i(-2)}, {I: 3}, {Slice: true, Start: i(1)}})
			return mulSum(s, y, err)
		}, []int{6, 5, 4}, []int{3, 3}, -1},
		{"repeat like", func(x, y *core.Variable) (*core.Variable, error) {
			r, err := core.RepeatLike(x, y, 0)
			if err != nil {
				return nil, err
			}
			return core.Add(r, core.SumAll(y)), nil
		}, []int{20}, []int{6, 3}, -1},
	}
}

// TestExtOpsMatchCPU: each newly wired op and its gradients within 1e-5
// of the CPU, every step on the GPU.
func TestExtOpsMatchCPU(t *testing.T) {
	gpu := gpuBackend(t)
	for _, c := range extCases() {
		t.Run(c.name, func(t *testing.T) { checkCase(t, gpu, c) })
	}
}

func checkCase(t *testing.T, gpu core.Backend, c opCase) {
	t.Helper()
	rng := numpyrand.New(7)
	x := core.NewInput("x", nd.Float32, len(c.xs))
	y := core.NewInput("y", nd.Float32, len(c.ys))
	out, err := c.build(x, y)
	if err != nil {
		t.Fatal(err)
	}
	xa, ya := randArray(rng, c.lo, c.lo+2, c.xs...), randArray(rng, c.lo, c.lo+2, c.ys...)
	cost := core.SumAll(core.Sqr(out))
	grads, err := core.Grad(cost, []*core.Variable{x, y}, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	outs := append([]*core.Variable{out}, grads...)
	args := []*nd.Array{xa, ya}
	want, _ := run(t, cpu.Backend{}, []*core.Variable{x, y}, outs, args)
	got, prog := run(t, gpu, []*core.Variable{x, y}, outs, args)
	for k, what := range []string{"value", "gradient wrt x", "gradient wrt y"} {
		near(t, c.name+" "+what, got[k], want[k], 1e-5)
	}
	noCPU(t, c.name, prog)
}

func noCPU(t *testing.T, what string, prog []string) {
	t.Helper()
	for _, l := range prog {
		if strings.Contains(l, "on the CPU") {
			t.Errorf("%s: a step ran on the CPU: %s", what, l)
		}
	}
}

// TestTakeMatchesCPU: a lookup table's rows and their gradient (rows
// picked several times, one never), and the refusal of an index past the
// table.
func TestTakeMatchesCPU(t *testing.T) {
	gpu := gpuBackend(t)
	rng := numpyrand.New(3)
	w := core.NewInput("w", nd.Float32, 2)
	idx := core.NewInput("idx", nd.Int64, 2)
	y, err := core.Take(w, idx)
	must(t, err)
	g, err := core.Grad(core.SumAll(core.Sqr(y)), []*core.Variable{w}, core.GradOptions{})
	must(t, err)
	wa := randArray(rng, -1, 1, 64, 100)
	ia := nd.New(nd.Int64, 50, 32)
	for i := range ia.Size() {
		ia.SetFlat(i, float64(rng.Randint(0, 63)))
	}
	args := []*nd.Array{wa, ia}
	want, _ := run(t, cpu.Backend{}, []*core.Variable{w, idx}, []*core.Variable{y, g[0]}, args)
	got, prog := run(t, gpu, []*core.Variable{w, idx}, []*core.Variable{y, g[0]}, args)
	near(t, "take", got[0], want[0], 1e-7)
	near(t, "take's gradient", got[1], want[1], 1e-5)
	noCPU(t, "take", prog)
	f, err := core.CompileOn(gpu, []*core.Variable{w, idx}, []*core.Variable{y}, nil)
	must(t, err)
	ia.SetFlat(5, 64)
	if _, err := f.Call(args); err == nil || !strings.Contains(err.Error(), "out of bounds") {
		t.Errorf("an index past the table: %v", err)
	}
}

// TestMisclassificationMatchesCPU: argmax, the int64 comparison and the
// mean of its truth values (Blocks' MisclassificationRate) on the GPU.
func TestMisclassificationMatchesCPU(t *testing.T) {
	gpu := gpuBackend(t)
	rng := numpyrand.New(5)
	yHat := core.NewInput("y_hat", nd.Float32, 2)
	y := core.NewInput("y", nd.Int64, 1)
	cfg := bricks.NewConfig(nd.Float32, 1)
	mr, err := bricks.NewCost(cfg, "MisclassificationRate", "", 1)
	must(t, err)
	rate, err := bricks.Apply(mr, "apply", y, yHat)
	must(t, err)
	axis := 0
	am, err := core.Argmin(yHat, &axis, false)
	must(t, err)
	ya := randArray(rng, 0, 1, 300, 10)
	ta := nd.New(nd.Int64, 300)
	for i := range 300 {
		ta.SetFlat(i, float64(rng.Randint(0, 10)))
	}
	args := []*nd.Array{ya, ta}
	outs := []*core.Variable{rate[0], am}
	want, _ := run(t, cpu.Backend{}, []*core.Variable{yHat, y}, outs, args)
	got, prog := run(t, gpu, []*core.Variable{yHat, y}, outs, args)
	near(t, "misclassification rate", got[0], want[0], 1e-6)
	near(t, "argmin", got[1], want[1], 1e-7)
	noCPU(t, "misclassification", prog)
}

// trainOn trains with gd's data for steps batches on device d and returns
// the parameters and the training function's program.
func trainOn(t *testing.T, d device.Device, steps int, build func(device.Device) (*algorithms.GradientDescent, []*core.Variable, map[string]*nd.Array)) ([]*nd.Array, []string) {
	t.Helper()
	if err := device.Check(d); err != nil {
		t.Fatal(err)
	}
	gd, params, data := build(d)
	var args []*nd.Array
	for _, in := range gd.Inputs() {
		args = append(args, data[in.Name])
	}
	prog, err := gd.Function().Program(args)
	must(t, err)
	for range steps {
		must(t, gd.ProcessBatch(data))
	}
	var out []*nd.Array
	for _, p := range params {
		out = append(out, p.Value().Copy())
	}
	return out, prog
}

// compareTraining trains on the CPU and twice on the GPU: parameters
// within rel, every step on the GPU, the two GPU runs bit-identical.
func compareTraining(t *testing.T, name string, steps int, rel float64, build func(device.Device) (*algorithms.GradientDescent, []*core.Variable, map[string]*nd.Array)) {
	t.Helper()
	gpu := device.Device{Kind: device.CUDA}
	want, _ := trainOn(t, device.Device{Kind: device.CPU}, steps, build)
	got, prog := trainOn(t, gpu, steps, build)
	for i := range want {
		near(t, fmt.Sprintf("%s parameter %d", name, i), got[i], want[i], rel)
	}
	noCPU(t, name, prog)
	again, _ := trainOn(t, gpu, steps, build)
	for i := range got {
		for k := range got[i].Size() {
			if math.Float32bits(float32(got[i].Flat(k))) != math.Float32bits(float32(again[i].Flat(k))) {
				t.Fatalf("%s: two GPU runs differ: parameter %d element %d: %v and %v", name, i, k, got[i].Flat(k), again[i].Flat(k))
			}
		}
	}
}

// mlpWith is trainMLP's model and data with another step rule.
func mlpWith(t *testing.T, rule func() algorithms.StepRule) func(device.Device) (*algorithms.GradientDescent, []*core.Variable, map[string]*nd.Array) {
	return func(dev device.Device) (*algorithms.GradientDescent, []*core.Variable, map[string]*nd.Array) {
		dims, batch := []int{784, 100, 10}, 128
		x := core.NewInput("features", nd.Float32, 2)
		y := core.NewInput("targets", nd.Int64, 2)
		cfg := bricks.NewConfig(nd.Float32, 1)
		relu, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
		must(t, err)
		mlp, err := bricks.NewMLP(cfg, "", []bricks.Brick{relu, bricks.NewSoftmax(cfg, "")}, dims)
		must(t, err)
		must(t, bricks.SetInitSchemes(mlp, initialization.IsotropicGaussian{Std: 0.05}, nil))
		must(t, bricks.SetInitSchemes(mlp, nil, initialization.Constant{Value: 0.01}))
		must(t, bricks.Initialize(mlp))
		out, err := bricks.Apply(mlp, "apply", x)
		must(t, err)
		yFlat, err := core.Flatten(y, 1)
		must(t, err)
		cce, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
		must(t, err)
		costs, err := bricks.Apply(cce, "apply", yFlat, out[0])
		must(t, err)
		params := graph.New([]*core.Variable{costs[0]}).Parameters()
		gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: costs[0], Parameters: params, StepRule: rule(), Device: dev})
		must(t, err)
		must(t, gd.Initialize())
		rng := numpyrand.New(3)
		features := nd.New(nd.Float32, batch, dims[0])
		for i := range features.Size() {
			features.SetFlat(i, rng.RandomSample()-0.3)
		}
		targets := nd.New(nd.Int64, batch, 1)
		for i := range batch {
			targets.SetFlat(i, float64((i*7)%dims[2]))
		}
		return gd, params, map[string]*nd.Array{"features": features, "targets": targets}
	}
}

// TestStepRulesMatchCPU: the step rules' fused updates (fused_rule) in 10
// steps of an MLP, against the CPU within 1e-4.
func TestStepRulesMatchCPU(t *testing.T) {
	for name, rule := range map[string]func() algorithms.StepRule{
		"momentum": func() algorithms.StepRule { return algorithms.NewMomentum(nd.Float32, 0.1, 0.9) },
		"adadelta": func() algorithms.StepRule { r, _ := algorithms.NewAdaDelta(nd.Float32, 0.95, 1e-6); return r },
		"rmsprop":  func() algorithms.StepRule { r, _ := algorithms.NewRMSProp(nd.Float32, 0.01, 0.9, 1e5); return r },
		"adagrad":  func() algorithms.StepRule { return algorithms.NewAdaGrad(nd.Float32, 0.01, 1e-6) },
		"adam":     func() algorithms.StepRule { return algorithms.NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 1-1e-8) },
	} {
		t.Run(name, func(t *testing.T) { compareTraining(t, name, 10, 1e-4, mlpWith(t, rule)) })
	}
}

// lenet is the benchmark's LeNet (bench/lenet_test.go) at batch 32 on
// random images.
func lenet(t *testing.T) func(device.Device) (*algorithms.GradientDescent, []*core.Variable, map[string]*nd.Array) {
	return func(dev device.Device) (*algorithms.GradientDescent, []*core.Variable, map[string]*nd.Array) {
		cfg := bricks.NewConfig(nd.Float32, 1)
		c0, c1 := bricks.NewConvolutional(cfg, "conv_0"), bricks.NewConvolutional(cfg, "conv_1")
		c0.FilterSize = []int{5, 5}
		c0.NumFilters = 20
		c1.FilterSize = []int{5, 5}
		c1.NumFilters = 50
		r0, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
		must(t, err)
		r1, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
		must(t, err)
		p0, err := bricks.NewPooling(cfg, "MaxPooling", "pool_0")
		must(t, err)
		p0.PoolingSize = []int{2, 2}
		p1, err := bricks.NewPooling(cfg, "MaxPooling", "pool_1")
		must(t, err)
		p1.PoolingSize = []int{2, 2}
		var layers []bricks.AppRef
		for _, br := range []bricks.Brick{c0, r0, p0, c1, r1, p1} {
			layers = append(layers, bricks.AppRef{Brick: br, Name: "apply"})
		}
		seq := bricks.NewConvolutionalSequence(cfg, "", layers)
		seq.NumChannels = 1
		seq.ImageSize = bricks.Size{28, 28}
		relu, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
		must(t, err)
		mlp, err := bricks.NewMLP(cfg, "", []bricks.Brick{relu, bricks.NewSoftmax(cfg, "")}, []int{800, 500, 10})
		must(t, err)
		for _, br := range []bricks.Brick{seq, mlp} {
			must(t, bricks.SetInitSchemes(br, initialization.IsotropicGaussian{Std: 0.05}, nil))
			must(t, bricks.SetInitSchemes(br, nil, initialization.Constant{Value: 0}))
			must(t, bricks.Initialize(br))
		}
		x := core.NewInput("features", nd.Float32, 4)
		y := core.NewInput("targets", nd.Int64, 1)
		h, err := bricks.Apply(seq, "apply", x)
		must(t, err)
		flat, err := core.Flatten(h[0], 2)
		must(t, err)
		out, err := bricks.Apply(mlp, "apply", flat)
		must(t, err)
		cce, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
		must(t, err)
		cost, err := bricks.Apply(cce, "apply", y, out[0])
		must(t, err)
		params := append(bricks.AllParameters(seq), bricks.AllParameters(mlp)...)
		gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: cost[0], Parameters: params, StepRule: algorithms.NewScale(nd.Float32, 0.05), Device: dev})
		must(t, err)
		must(t, gd.Initialize())
		rng := numpyrand.New(2)
		batch := 32
		xs := nd.New(nd.Float32, batch, 1, 28, 28)
		for i := range xs.Size() {
			xs.SetFlat(i, rng.RandomSample())
		}
		ys := nd.New(nd.Int64, batch)
		for i := range batch {
			ys.SetFlat(i, float64(rng.Randint(0, 10)))
		}
		return gd, params, map[string]*nd.Array{"features": xs, "targets": ys}
	}
}

// TestLeNetTrainingMatchesCPU: 10 SGD steps of LeNet, every step on the
// GPU, within 1e-4 of the CPU, two GPU runs bit-identical.
func TestLeNetTrainingMatchesCPU(t *testing.T) {
	compareTraining(t, "LeNet", 10, 1e-4, lenet(t))
}

// rnnLM is the benchmark's language model (bench/rnn_test.go) at a smaller
// size: LookupTable → Linear → LSTM or GatedRecurrent → Linear → Softmax,
// cross-entropy over every position.
func rnnLM(t *testing.T, cell string, rule func() algorithms.StepRule) func(device.Device) (*algorithms.GradientDescent, []*core.Variable, map[string]*nd.Array) {
	return func(dev device.Device) (*algorithms.GradientDescent, []*core.Variable, map[string]*nd.Array) {
		vocab, emb, hidden, seq, batch := 40, 24, 48, 12, 8
		cfg := bricks.NewConfig(nd.Float32, 1)
		lookup := bricks.NewLookupTable(cfg, "lookup", vocab, emb)
		inits := []bricks.Brick{lookup}
		x := core.NewInput("features", nd.Int64, 2)
		y := core.NewInput("targets", nd.Int64, 2)
		e, err := bricks.Apply(lookup, "apply", x)
		must(t, err)
		linear := func(name string, out int) *bricks.Linear {
			l := bricks.NewLinear(cfg, name)
			l.InputDim, l.OutputDim = emb, out
			inits = append(inits, l)
			return l
		}
		var h *core.Variable
		if cell == "lstm" {
			in, err := bricks.Apply(linear("fork", 4*hidden), "apply", e[0])
			must(t, err)
			lstm := bricks.NewLSTM(cfg, "lstm", hidden, nil, nil)
			inits = append(inits, lstm)
			outs, err := bricks.ApplyRecurrent(lstm, "apply", map[string]*core.Variable{"inputs": in[0]}, bricks.RecurrentOptions{})
			must(t, err)
			h = outs[0]
		} else {
			in, err := bricks.Apply(linear("fork_inputs", hidden), "apply", e[0])
			must(t, err)
			gin, err := bricks.Apply(linear("fork_gates", 2*hidden), "apply", e[0])
			must(t, err)
			gru := bricks.NewGatedRecurrent(cfg, "gru", hidden, nil, nil)
			inits = append(inits, gru)
			outs, err := bricks.ApplyRecurrent(gru, "apply", map[string]*core.Variable{"inputs": in[0], "gate_inputs": gin[0]}, bricks.RecurrentOptions{})
			must(t, err)
			h = outs[0]
		}
		flat, err := core.Reshape(h, []int{-1, hidden})
		must(t, err)
		mlp, err := bricks.NewMLP(cfg, "output", []bricks.Brick{bricks.NewSoftmax(cfg, "")}, []int{hidden, vocab})
		must(t, err)
		inits = append(inits, mlp)
		for _, br := range inits {
			must(t, bricks.SetInitSchemes(br, initialization.Uniform{Width: 0.2}, nil))
			if br != bricks.Brick(lookup) {
				_ = bricks.SetInitSchemes(br, nil, initialization.Constant{Value: 0})
			}
			must(t, bricks.Initialize(br))
		}
		probs, err := bricks.Apply(mlp, "apply", flat)
		must(t, err)
		yFlat, err := core.Flatten(y, 1)
		must(t, err)
		cce, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
		must(t, err)
		costs, err := bricks.Apply(cce, "apply", yFlat, probs[0])
		must(t, err)
		params := graph.New([]*core.Variable{costs[0]}).Parameters()
		gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: costs[0], Parameters: params, StepRule: rule(), Device: dev})
		must(t, err)
		must(t, gd.Initialize())
		rng := numpyrand.New(2)
		xs, ys := nd.New(nd.Int64, seq, batch), nd.New(nd.Int64, seq, batch)
		for i := range xs.Size() {
			xs.SetFlat(i, float64(rng.Randint(0, int64(vocab))))
			ys.SetFlat(i, float64(rng.Randint(0, int64(vocab))))
		}
		return gd, params, map[string]*nd.Array{"features": xs, "targets": ys}
	}
}

// TestRNNLMTrainingMatchesCPU: 10 steps of the LSTM and GRU language
// models (fused sequences, lookups, Adam and SGD) on the GPU within 1e-4
// of the CPU, every step on the GPU, two GPU runs bit-identical.
func TestRNNLMTrainingMatchesCPU(t *testing.T) {
	for _, cell := range []string{"lstm", "gru"} {
		for name, rule := range map[string]func() algorithms.StepRule{
			"sgd":  func() algorithms.StepRule { return algorithms.NewScale(nd.Float32, 0.1) },
			"adam": func() algorithms.StepRule { return algorithms.NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 1-1e-8) },
		} {
			t.Run(cell+" "+name, func(t *testing.T) { compareTraining(t, cell+" "+name, 10, 1e-4, rnnLM(t, cell, rule)) })
		}
	}
}
