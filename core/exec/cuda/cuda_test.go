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

// These tests need a GPU: make gpu-check runs them there (the CUDA build's
// test binary, built here). Each op runs on the CPU backend and on the
// CUDA backend from the same inputs; results and gradients agree within
// float32 tolerance (relative 1e-5, absolute 1e-6 near zero).

func gpuBackend(t *testing.T) core.Backend {
	t.Helper()
	b, err := core.BackendFor(device.Device{Kind: device.CUDA})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func randArray(rng *numpyrand.RandomState, lo, hi float64, shape ...int) *nd.Array {
	a := nd.New(nd.Float32, shape...)
	for i := range a.Size() {
		a.SetFlat(i, lo+(hi-lo)*rng.RandomSample())
	}
	return a
}

// run compiles outs on backend b and calls it.
func run(t *testing.T, b core.Backend, ins, outs []*core.Variable, args []*nd.Array) ([]*nd.Array, []string) {
	t.Helper()
	f, err := core.CompileOn(b, ins, outs, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Call(args)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := f.Program(args)
	if err != nil {
		t.Fatal(err)
	}
	return res, prog
}

func near(t *testing.T, what string, got, want *nd.Array, rel float64) {
	t.Helper()
	if !nd.SameShape(got.Shape, want.Shape) {
		t.Fatalf("%s: shape %v, CPU %v", what, got.Shape, want.Shape)
	}
	worst, at := 0.0, -1
	for i := range want.Size() {
		g, w := got.Flat(i), want.Flat(i)
		if math.IsNaN(w) != math.IsNaN(g) {
			t.Fatalf("%s[%d]: %v, CPU %v", what, i, g, w)
		}
		if d := math.Abs(g-w) / (math.Abs(w) + 1e-6/rel); d > worst {
			worst, at = d, i
		}
	}
	if worst > rel {
		t.Errorf("%s: element %d is %v on the GPU, %v on the CPU (relative %.2g > %.0g)", what, at, got.Flat(at), want.Flat(at), worst, rel)
	}
}

type opCase struct {
	name  string
	build func(x, y *core.Variable) (*core.Variable, error)
	xs    []int
	ys    []int
	lo    float64 // inputs drawn from [lo, lo+2)
}

func opCases() []opCase {
	bin := func(f func(a, b *core.Variable) *core.Variable) func(x, y *core.Variable) (*core.Variable, error) {
		return func(x, y *core.Variable) (*core.Variable, error) { return f(x, y), nil }
	}
	un := func(f func(a *core.Variable) *core.Variable) func(x, y *core.Variable) (*core.Variable, error) {
		return func(x, y *core.Variable) (*core.Variable, error) { return core.Add(f(x), y), nil }
	}
	var cases []opCase
	for name, f := range map[string]func(a, b *core.Variable) *core.Variable{
		"add": core.Add, "sub": core.Sub, "mul": core.Mul, "div": core.Div, "maximum": core.Maximum, "minimum": core.Minimum,
	} {
		cases = append(cases,
			opCase{name + " same shape", bin(f), []int{37, 129}, []int{37, 129}, 0.5},
			opCase{name + " row broadcast", bin(f), []int{37, 129}, []int{129}, 0.5},
			opCase{name + " column broadcast", bin(f), []int{37, 129}, []int{37, 1}, 0.5},
		)
	}
	cases = append(cases, opCase{"pow", bin(core.Pow), []int{33, 65}, []int{33, 65}, 0.5})
	for name, f := range map[string]func(a *core.Variable) *core.Variable{
		"neg": core.Neg, "exp": core.Exp, "log": core.Log, "tanh": core.Tanh, "sigmoid": core.Sigmoid, "softplus": core.Softplus,
		"sqr": core.Sqr, "sqrt": core.Sqrt, "abs": core.Abs, "relu": core.Relu, "log1p": core.Log1p, "inv": core.Inv,
	} {
		cases = append(cases, opCase{name, un(f), []int{65, 129}, []int{65, 129}, 0.25})
	}
	cases = append(cases,
		opCase{"relu around zero", un(core.Relu), []int{65, 129}, []int{65, 129}, -1},
		opCase{"dot", func(x, y *core.Variable) (*core.Variable, error) { return core.Dot(x, y) }, []int{64, 300}, []int{300, 50}, -1},
		opCase{"dot A.T", func(x, y *core.Variable) (*core.Variable, error) { return core.Dot(core.Transpose(x), y) }, []int{300, 64}, []int{300, 50}, -1},
		opCase{"dot B.T", func(x, y *core.Variable) (*core.Variable, error) { return core.Dot(x, core.Transpose(y)) }, []int{64, 300}, []int{50, 300}, -1},
		opCase{"softmax", func(x, y *core.Variable) (*core.Variable, error) {
			s, err := core.Softmax(x)
			return mulSum(s, y, err)
		}, []int{256, 10}, []int{256, 10}, -1},
		opCase{"log-softmax", func(x, y *core.Variable) (*core.Variable, error) {
			s, err := core.LogSoftmax(x)
			return mulSum(s, y, err)
		}, []int{256, 10}, []int{256, 10}, -1},
	)
	for _, r := range []struct {
		name string
		f    func(*core.Variable, []int, bool, *nd.DType) (*core.Variable, error)
	}{{"sum", core.Sum}, {"mean", core.Mean}} {
		for _, axes := range [][]int{nil, {0}, {1}, {0, 2}} {
			cases = append(cases, opCase{fmt.Sprintf("%s axes %v", r.name, axes), func(x, y *core.Variable) (*core.Variable, error) {
				s, err := r.f(x, axes, false, nil)
				if err != nil {
					return nil, err
				}
				return core.Add(s, core.SumAll(y)), nil
			}, []int{17, 300, 5}, []int{3}, -1})
		}
	}
	for _, r := range []struct {
		name string
		f    func(*core.Variable, []int, bool) (*core.Variable, error)
	}{{"max", core.Max}, {"min", core.Min}} {
		cases = append(cases, opCase{r.name + " axis 1", func(x, y *core.Variable) (*core.Variable, error) {
			s, err := r.f(x, []int{1}, false)
			if err != nil {
				return nil, err
			}
			return core.Add(s, y), nil
		}, []int{40, 300}, []int{40}, -1})
	}
	cases = append(cases, opCase{"dimshuffle", func(x, y *core.Variable) (*core.Variable, error) {
		d, err := core.Dimshuffle(x, []int{2, 0, 1})
		if err != nil {
			return nil, err
		}
		return core.Mul(d, y), nil
	}, []int{4, 6, 8}, []int{8, 4, 6}, -1})
	return cases
}

func mulSum(s *core.Variable, y *core.Variable, err error) (*core.Variable, error) {
	if err != nil {
		return nil, err
	}
	return core.Mul(s, y), nil
}

// TestOpsMatchCPU: every op the backend has a kernel for, forward and
// backward (the gradients of sum(out²)), against the CPU.
func TestOpsMatchCPU(t *testing.T) {
	gpu := gpuBackend(t)
	for _, c := range opCases() {
		t.Run(c.name, func(t *testing.T) {
			rng := numpyrand.New(7)
			x := core.NewInput("x", nd.Float32, len(c.xs))
			y := core.NewInput("y", nd.Float32, len(c.ys))
			out, err := c.build(x, y)
			if err != nil {
				t.Fatal(err)
			}
			xa, ya := randArray(rng, c.lo, c.lo+2, c.xs...), randArray(rng, c.lo, c.lo+2, c.ys...)
			// The gradients of sum(out²): each element of out weighs
			// differently.
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
			for _, l := range prog {
				if strings.Contains(l, "on the CPU") {
					t.Errorf("%s: a step ran on the CPU: %s", c.name, l)
				}
			}
		})
	}
}

// trainMLP trains a 784-300-10 ReLU/softmax MLP with SGD for steps
// batches on device d, from a fixed seed, and returns its parameters and
// the function's program.
func trainMLP(t *testing.T, d device.Device, steps int) ([]*nd.Array, []string) {
	t.Helper()
	if err := device.Check(d); err != nil {
		t.Fatal(err)
	}
	dims, batch := []int{784, 300, 10}, 256
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
	cg := graph.New([]*core.Variable{costs[0]})
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{
		Cost: costs[0], Parameters: cg.Parameters(), StepRule: algorithms.NewScale(nd.Float32, 0.1), Device: d})
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
	data := map[string]*nd.Array{"features": features, "targets": targets}
	var args []*nd.Array
	for _, in := range gd.Inputs() {
		args = append(args, data[in.Name])
	}
	prog, err := gd.Function().Program(args)
	must(t, err)
	for range steps {
		must(t, gd.ProcessBatch(data))
	}
	var params []*nd.Array
	for _, p := range cg.Parameters() {
		params = append(params, p.Value().Copy())
	}
	return params, prog
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMLPTrainingMatchesCPU: 20 SGD steps of the MLP on the GPU end within
// 1e-4 of the CPU's parameters, every step of the training function on
// the GPU, and a second GPU run gives the same bits.
func TestMLPTrainingMatchesCPU(t *testing.T) {
	gpu := device.Device{Kind: device.CUDA}
	want, _ := trainMLP(t, device.Device{Kind: device.CPU}, 20)
	got, prog := trainMLP(t, gpu, 20)
	for i := range want {
		near(t, fmt.Sprintf("parameter %d", i), got[i], want[i], 1e-4)
	}
	for _, l := range prog {
		if strings.Contains(l, "on the CPU") {
			t.Errorf("a step of the MLP's training ran on the CPU: %s", l)
		}
	}
	again, _ := trainMLP(t, gpu, 20)
	for i := range got {
		for k := range got[i].Size() {
			if math.Float32bits(float32(got[i].Flat(k))) != math.Float32bits(float32(again[i].Flat(k))) {
				t.Fatalf("two GPU runs differ: parameter %d element %d: %v and %v", i, k, got[i].Flat(k), again[i].Flat(k))
			}
		}
	}
}

// A process runs on one GPU: functions compiled for cuda:0 run there (and
// say so), and one compiled for another index is refused with an error
// that names both GPUs, whatever the machine has.
func TestOneGPUPerProcess(t *testing.T) {
	x := core.NewInput("x", nd.Float32, 1)
	y := core.Mul(x, core.Const(nd.Float32, 2))
	f, err := core.CompileFor(device.Device{Kind: device.CUDA, Index: 0}, []*core.Variable{x}, []*core.Variable{y}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Device(); d != (device.Device{Kind: device.CUDA, Index: 0}) {
		t.Errorf("compiled for cuda:0, the function says %v", d)
	}
	out, err := f.Call([]*nd.Array{nd.FromSlice([]float32{1, 2}, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Flat(0) != 2 || out[0].Flat(1) != 4 {
		t.Errorf("2x on the GPU gave %v", out[0])
	}
	_, err = core.CompileFor(device.Device{Kind: device.CUDA, Index: 1}, []*core.Variable{x}, []*core.Variable{y}, nil)
	if err == nil || !strings.Contains(err.Error(), "one process uses one GPU") || !strings.Contains(err.Error(), "GPU 0") || !strings.Contains(err.Error(), "GPU 1") {
		t.Errorf("cuda:1 after cuda:0: %v; want the one-GPU error naming both", err)
	}
}
