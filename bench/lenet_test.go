package bench

import (
	"testing"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
)

// lenetStep builds the PyTorch baseline's LeNet (../shared/bench/
// torch_mnist.py: valid 5×5 convolutions of 20 and 50 filters, ReLU, 2×2
// max pooling, 800-500-10 with ReLU and softmax, SGD 0.05) from the
// project's bricks, with a fixed batch of 64 random images, and returns
// one training step.
func lenetStep(tb testing.TB) func() error { return lenetStepBatch(tb, 64) }

// lenetStepBatch is lenetStep with another batch size.
func lenetStepBatch(tb testing.TB, batch int) func() error {
	gd, data := lenetModel(tb, batch, benchDevice)
	return func() error { return gd.ProcessBatch(data) }
}

// lenetModel is lenetStepBatch's training algorithm, training on dev,
// and batch.
func lenetModel(tb testing.TB, batch int, dev device.Device) (*algorithms.GradientDescent, map[string]*nd.Array) {
	cfg := bricks.NewConfig(nd.Float32, 1)
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	c0, c1 := bricks.NewConvolutional(cfg, "conv_0"), bricks.NewConvolutional(cfg, "conv_1")
	c0.FilterSize = []int{5, 5}
	c0.NumFilters = 20
	c1.FilterSize = []int{5, 5}
	c1.NumFilters = 50
	r0, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
	must(err)
	r1, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
	must(err)
	p0, err := bricks.NewPooling(cfg, "MaxPooling", "pool_0")
	must(err)
	p0.PoolingSize = []int{2, 2}
	p1, err := bricks.NewPooling(cfg, "MaxPooling", "pool_1")
	must(err)
	p1.PoolingSize = []int{2, 2}
	var layers []bricks.AppRef
	for _, br := range []bricks.Brick{c0, r0, p0, c1, r1, p1} {
		layers = append(layers, bricks.AppRef{Brick: br, Name: "apply"})
	}
	seq := bricks.NewConvolutionalSequence(cfg, "", layers)
	seq.NumChannels = 1
	seq.ImageSize = bricks.Size{28, 28}
	relu, err := bricks.NewActivation(cfg, "Rectifier", "", 0)
	must(err)
	mlp, err := bricks.NewMLP(cfg, "", []bricks.Brick{relu, bricks.NewSoftmax(cfg, "")}, []int{800, 500, 10})
	must(err)
	for _, br := range []bricks.Brick{seq, mlp} {
		must(bricks.SetInitSchemes(br, initialization.IsotropicGaussian{Std: 0.05}, nil))
		must(bricks.SetInitSchemes(br, nil, initialization.Constant{Value: 0}))
		must(bricks.Initialize(br))
	}
	x := core.NewInput("features", nd.Float32, 4)
	y := core.NewInput("targets", nd.Int64, 1)
	h, err := bricks.Apply(seq, "apply", x)
	must(err)
	flat, err := core.Flatten(h[0], 2)
	must(err)
	out, err := bricks.Apply(mlp, "apply", flat)
	must(err)
	cce, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
	must(err)
	cost, err := bricks.Apply(cce, "apply", y, out[0])
	must(err)
	params := append(bricks.AllParameters(seq), bricks.AllParameters(mlp)...)
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: cost[0], Parameters: params, StepRule: algorithms.NewScale(nd.Float32, 0.05), Device: dev})
	must(err)
	must(gd.Initialize())
	rng := numpyrand.New(2)
	xs := nd.New(nd.Float32, batch, 1, 28, 28)
	for i := range xs.Size() {
		xs.SetFlat(i, rng.RandomSample())
	}
	ys := nd.New(nd.Int64, batch)
	for i := range batch {
		ys.SetFlat(i, float64(rng.Randint(0, 10)))
	}
	return gd, map[string]*nd.Array{"features": xs, "targets": ys}
}

// BenchmarkLeNetStep is one training step of the benchmark LeNet at
// batch 64 and 256, with its allocations (the same at both sizes: nothing
// allocated per step grows with the batch).
func BenchmarkLeNetStep(b *testing.B) {
	b.Run("batch=64", func(b *testing.B) { benchLeNet(b, 64) })
	b.Run("batch=256", func(b *testing.B) { benchLeNet(b, 256) })
}

func benchLeNet(b *testing.B, batch int) {
	step := lenetStepBatch(b, batch)
	for range 3 {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "examples/s")
}

// TestLeNetStepDoesNotAllocate: after the first steps, a training step of
// the benchmark LeNet allocates nothing, as the MLPs' and the recurrent
// models' (the convolutions' and poolings' parallel regions keep their
// jobs in the ops' workspaces; it allocated 83 times a step before).
func TestLeNetStepDoesNotAllocate(t *testing.T) {
	if kernels.BLASName != "OpenBLAS" {
		t.Skipf("the pure-Go build multiplies with %s, whose parallel products allocate; a step allocates nothing in the cgo build", kernels.BLASName)
	}
	step := lenetStep(t)
	for range 2 {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	// 20 steps: AllocsPerRun floors the mean, so a step that allocates
	// counts, while a few stray mallocs on a loaded machine do not (6 in 3
	// steps at load 8, in none of the step's code: none idle or with GOGC=1).
	if n := testing.AllocsPerRun(20, func() {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per step, want 0", n)
	}
}
