package algorithms

import (
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// symbolicAdam is Adam written with elementwise graph ops, as Blocks
// writes it in Theano: the independent path the fused kernel is measured
// against.
type symbolicAdam struct{ *Adam }

func (r symbolicAdam) ComputeStep(parameter, g *core.Variable) (*core.Variable, []core.Update, error) {
	bufs, err := newBuffers(nd.Float32, parameter, "mean", "variance")
	if err != nil {
		return nil, nil, err
	}
	time := sharedFloatX("time", nil)
	one := core.Const(time.DType(), 1)
	t1 := core.Add(time, one)
	b1 := core.Mul(r.Beta1, core.Pow(r.DecayFactor, core.Sub(t1, one)))
	lr := core.Div(core.Mul(r.LearningRate, core.Sqrt(core.Sub(one, core.Pow(r.Beta2, t1)))), core.Sub(one, core.Pow(b1, t1)))
	m := core.Add(core.Mul(b1, bufs[0]), core.Mul(core.Sub(one, b1), g))
	v := core.Add(core.Mul(r.Beta2, bufs[1]), core.Mul(core.Sub(one, r.Beta2), core.Sqr(g)))
	step := core.Div(core.Mul(lr, m), core.Add(core.Sqrt(v), r.Epsilon))
	return step, []core.Update{{Shared: bufs[0], Value: m}, {Shared: bufs[1], Value: v}, {Shared: time, Value: t1}}, nil
}

func (r symbolicAdam) ComputeSteps(p, s []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(r, p, s)
}

// adamStepper trains a 784×100 float32 parameter (the tutorial's first
// layer) with a given gradient, the step rule alone.
func adamStepper(tb testing.TB, rule StepRule) (*GradientDescent, *core.Variable) {
	W := sharedFloatX("W", []int{784, 100})
	G := sharedFloatX("G", []int{784, 100})
	for i, n := 0, 784*100; i < n; i++ {
		W.Value().SetFlat(i, float64(i%7)*0.01)
		G.Value().SetFlat(i, float64(i%13-6)*0.1)
	}
	gd, err := NewGradientDescent(GradientDescentConfig{Gradients: []Gradient{{W, G}}, StepRule: rule})
	if err != nil {
		tb.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		tb.Fatal(err)
	}
	return gd, W
}

// TestFusedAdamMatchesSymbolic: the fused kernel and the graph-op Adam
// give the same float32 parameters after 5 steps, up to rounding.
func TestFusedAdamMatchesSymbolic(t *testing.T) {
	fused, wf := adamStepper(t, NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 0.99))
	sym, ws := adamStepper(t, symbolicAdam{NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 0.99)})
	for range 5 {
		if err := fused.ProcessBatch(map[string]*nd.Array{}); err != nil {
			t.Fatal(err)
		}
		if err := sym.ProcessBatch(map[string]*nd.Array{}); err != nil {
			t.Fatal(err)
		}
	}
	a, b := wf.Value().F32(), ws.Value().F32()
	for i := range a {
		if d := a[i] - b[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("W[%d]: fused %v, symbolic %v", i, a[i], b[i])
		}
	}
}

func benchAdam(b *testing.B, rule StepRule) {
	gd, _ := adamStepper(b, rule)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := gd.ProcessBatch(map[string]*nd.Array{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdamFused and BenchmarkAdamSymbolic: one Adam update of a
// 784×100 float32 parameter.
func BenchmarkAdamFused(b *testing.B) { benchAdam(b, NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 1)) }
func BenchmarkAdamSymbolic(b *testing.B) {
	benchAdam(b, symbolicAdam{NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 1)})
}
