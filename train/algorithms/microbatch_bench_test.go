package algorithms

import (
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// benchMLP times one step of the tutorial's MLP shape (784-100-10, a
// batch of 256, float32) cut into k microbatches on one process (k = 1:
// the plain fused step), to compare the microbatching overhead.
func benchMLP(b *testing.B, k int) {
	r := rand.New(rand.NewPCG(1, 2))
	w := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 0.01)
		}
		return v
	}
	W1 := core.NewShared(nd.FromSlice(w(784*100), 784, 100), "W1")
	b1 := core.NewShared(nd.FromSlice(w(100), 100), "b1")
	W2 := core.NewShared(nd.FromSlice(w(1000), 100, 10), "W2")
	x := core.NewInput("x", nd.Float32, 2)
	y := core.NewInput("y", nd.Float32, 2)
	h1, _ := core.Dot(x, W1)
	h := core.Tanh(core.Add(h1, b1))
	o, _ := core.Dot(h, W2)
	cost := core.MeanAll(core.Sqr(core.Sub(o, y)))
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W1, b1, W2}, StepRule: NewScale(nd.Float32, 0.1)})
	if err != nil {
		b.Fatal(err)
	}
	if k > 1 {
		gd.Microbatching = &Microbatching{K: k}
	}
	if err := gd.Initialize(); err != nil {
		b.Fatal(err)
	}
	batch := map[string]*nd.Array{"x": nd.FromSlice(w(256*784), 256, 784), "y": nd.FromSlice(w(2560), 256, 10)}
	b.ResetTimer()
	for range b.N {
		if err := gd.ProcessBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMicrobatchMLPK1(b *testing.B) { benchMLP(b, 1) }
func BenchmarkMicrobatchMLPK4(b *testing.B) { benchMLP(b, 4) }
