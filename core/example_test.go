package core_test

import (
	"fmt"
	"log"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// A graph built symbolically, differentiated and compiled, as with
// Theano: cost = sum((x * w)^2), whose gradient with respect to w is
// 2 x^2 w. The compiled function applies one step of gradient descent to
// w as an update.
func Example_grad() {
	x := core.NewInput("x", nd.Float64, 1)
	w := core.NewShared(nd.FromSlice([]float64{1, 2, 3}, 3), "w")
	cost := core.SumAll(core.Sqr(core.Mul(x, w)))
	grads, err := core.Grad(cost, []*core.Variable{w}, core.GradOptions{})
	if err != nil {
		log.Fatal(err)
	}
	step := core.Sub(w, core.Mul(core.Const(nd.Float64, 0.1), grads[0]))
	f, err := core.Compile([]*core.Variable{x}, []*core.Variable{cost, grads[0]}, []core.Update{{Shared: w, Value: step}})
	if err != nil {
		log.Fatal(err)
	}
	out, err := f.Call([]*nd.Array{nd.FromSlice([]float64{1, 1, 2}, 3)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cost:", out[0].Flat(0))
	fmt.Println("gradient:", out[1].F64())
	fmt.Println("w after the update:", w.Value().F64())
	// Output:
	// cost: 41
	// gradient: [2 4 24]
	// w after the update: [0.8 1.6 0.5999999999999996]
}
