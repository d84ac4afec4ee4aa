package bricks

import (
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/algorithms"
	"github.com/blocks-go/blocks/nd"
)

// BenchmarkLeNetStep is one SGD step of the benchmark LeNet (PyTorch
// baseline's: valid 5×5 convolutions of 20 and 50 filters, ReLU, 2×2 max
// pooling, 800-500-10 MLP, float32) on a random batch of 64 (the
// baseline's) and of 256. With -benchmem it reports the allocations of a
// step after the first: equal for both batch sizes, so none grows with the
// batch.
func BenchmarkLeNetStep(b *testing.B) {
	b.Run("batch=64", func(b *testing.B) { benchLeNetStep(b, 64) })
	b.Run("batch=256", func(b *testing.B) { benchLeNetStep(b, 256) })
}

func benchLeNetStep(b *testing.B, batchSize int) {
	cfg := NewConfig(nd.Float32, 1)
	c0, c1 := NewConvolutional(cfg, "conv_0"), NewConvolutional(cfg, "conv_1")
	c0.SetAttr("filter_size", []int{5, 5})
	c0.SetAttr("num_filters", 20)
	c1.SetAttr("filter_size", []int{5, 5})
	c1.SetAttr("num_filters", 50)
	r0, _ := NewActivation(cfg, "Rectifier", "", 0)
	r1, _ := NewActivation(cfg, "Rectifier", "", 0)
	p0, _ := NewPooling(cfg, "MaxPooling", "pool_0")
	p0.SetAttr("pooling_size", []int{2, 2})
	p1, _ := NewPooling(cfg, "MaxPooling", "pool_1")
	p1.SetAttr("pooling_size", []int{2, 2})
	seq := NewConvolutionalSequence(cfg, "", []AppRef{{c0, "apply"}, {r0, "apply"}, {p0, "apply"}, {c1, "apply"}, {r1, "apply"}, {p1, "apply"}})
	seq.SetAttr("num_channels", 1)
	seq.SetAttr("image_size", Size{28, 28})
	relu, _ := NewActivation(cfg, "Rectifier", "", 0)
	sm := NewSoftmax(cfg, "")
	mlp, _ := NewMLP(cfg, "", []Brick{relu, sm}, []int{800, 500, 10})
	for _, br := range []Brick{seq, mlp} {
		br.BaseBrick().SetAttr("weights_init", initialization.IsotropicGaussian{Std: 0.05})
		br.BaseBrick().SetAttr("biases_init", initialization.Constant{Value: 0})
		if err := Initialize(br); err != nil {
			b.Fatal(err)
		}
	}
	x := core.NewInput("features", nd.Float32, 4)
	y := core.NewInput("targets", nd.Int64, 1)
	h, err := Apply(seq, "apply", x)
	if err != nil {
		b.Fatal(err)
	}
	flat, err := core.Flatten(h[0], 2)
	if err != nil {
		b.Fatal(err)
	}
	lin, err := Apply(mlp.Linears[0], "apply", flat)
	if err != nil {
		b.Fatal(err)
	}
	hid, _ := Apply(relu, "apply", lin[0])
	logits, _ := Apply(mlp.Linears[1], "apply", hid[0])
	p, _ := core.Softmax(logits[0])
	ce, err := core.CategoricalCrossEntropy(p, y)
	if err != nil {
		b.Fatal(err)
	}
	cost := core.MeanAll(ce)
	params := append(AllParameters(seq), AllParameters(mlp)...)
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: cost, Parameters: params, StepRule: algorithms.NewScale(0.05)})
	if err != nil {
		b.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	xs := nd.New(nd.Float32, batchSize, 1, 28, 28)
	for i := range xs.F32() {
		xs.F32()[i] = float32(r.Float64())
	}
	ys := nd.New(nd.Int64, batchSize)
	for i := range batchSize {
		ys.SetFlat(i, float64(r.IntN(10)))
	}
	batch := map[string]*nd.Array{"features": xs, "targets": ys}
	if err := gd.ProcessBatch(batch); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := gd.ProcessBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
}
