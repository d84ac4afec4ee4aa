package core_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// benchConvStep times the forward pass and both gradients of one
// convolution at the benchmark LeNet's shapes (batch 64).
func benchConvStep(b *testing.B, xs, ws []int, border string) {
	r := rand.New(rand.NewPCG(1, 2))
	x := NewShared(randArray(r, -1, 1, xs...).Astype(nd.Float32), "x")
	w := NewShared(randArray(r, -1, 1, ws...).Astype(nd.Float32), "w")
	y := mustVar(Conv2d(x, w, Conv2dOptions{Border: Border{Mode: border}}))
	cost := SumAll(Sqr(y))
	g, err := Grad(cost, []*Variable{x, w}, GradOptions{})
	if err != nil {
		b.Fatal(err)
	}
	f, err := Compile(nil, g, nil)
	if err != nil {
		b.Fatal(err)
	}
	f.Call(nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.Call(nil)
	}
}

func BenchmarkConvLeNet1(b *testing.B) {
	benchConvStep(b, []int{64, 1, 28, 28}, []int{20, 1, 5, 5}, "valid")
}
func BenchmarkConvLeNet2(b *testing.B) {
	benchConvStep(b, []int{64, 20, 12, 12}, []int{50, 20, 5, 5}, "valid")
}
