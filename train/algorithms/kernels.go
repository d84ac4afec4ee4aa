package algorithms

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// The fused update kernels of the stateful step rules: each computes a
// rule's step and the new values of its buffers in one pass over the
// parameter (core.Fused). Inputs are the previous step, the buffers (cast
// to the step's dtype when they differ) and 0-d hyperparameters.

type float interface{ ~float32 | ~float64 }

// kernel adapts a generic loop to core.FusedKernel.
type kernel struct {
	name   string
	parts  int
	f32    func(out, in [][]float32, s []float32)
	f64    func(out, in [][]float64, s []float64)
	nFull  int       // number of full-size inputs; the rest are scalars
	consts []float64 // constants of the loop (rmsprop's epsilon)
}

func (k *kernel) Name() string { return k.name }
func (k *kernel) Parts() int   { return k.parts }

// FullInputs and Consts describe the kernel to backends with kernels of
// their own (core.DescribedKernel): the CUDA backend runs each rule's
// loop by its name.
func (k *kernel) FullInputs() int   { return k.nFull }
func (k *kernel) Consts() []float64 { return k.consts }
func (k *kernel) Run(out, in []*nd.Array) {
	switch out[0].Data.(type) {
	case []float32:
		o, i, s := split[float32](out, in, k.nFull)
		k.f32(o, i, s)
	case []float64:
		o, i, s := split[float64](out, in, k.nFull)
		k.f64(o, i, s)
	}
}

func split[T float](out, in []*nd.Array, nFull int) (o, i [][]T, s []T) {
	o = make([][]T, len(out))
	for p, a := range out {
		o[p] = a.Data.([]T)
	}
	i = make([][]T, nFull)
	for p := range nFull {
		i[p] = in[p].Data.([]T)
	}
	for _, a := range in[nFull:] {
		s = append(s, T(a.Flat(0)))
	}
	return o, i, s
}

// fuse runs k on the full-size inputs (cast to the dtype of the first)
// and the scalars.
func fuse(k *kernel, full []*core.Variable, scalars ...*core.Variable) ([]*core.Variable, error) {
	dt := full[0].DType()
	if !dt.IsFloat() {
		return nil, fmt.Errorf("%s: the step %s is %s, want floats", k.name, full[0], dt)
	}
	in := make([]*core.Variable, 0, len(full)+len(scalars))
	for _, v := range full {
		if v.DType() != dt {
			v = core.Cast(v, dt)
		}
		in = append(in, v)
	}
	in = append(in, scalars...)
	k.nFull = len(full)
	return core.Fused(k, in...)
}

func momentumKernel() *kernel {
	return &kernel{name: "momentum", parts: 1,
		f32: momentumLoop[float32], f64: momentumLoop[float64]}
}

// momentumLoop: step = momentum·velocity + previous.
func momentumLoop[T float](out, in [][]T, s []T) {
	step, prev, vel, m := out[0], in[0], in[1], s[0]
	for i := range step {
		step[i] = m*vel[i] + prev[i]
	}
}

func adaDeltaKernel() *kernel {
	return &kernel{name: "adadelta", parts: 3, f32: adaDeltaLoop[float32], f64: adaDeltaLoop[float64]}
}

// adaDeltaLoop: Zeiler's AdaDelta as Blocks writes it.
func adaDeltaLoop[T float](out, in [][]T, s []T) {
	step, msStep, msDelta := out[0], out[1], out[2]
	prev, msStepOld, msDeltaOld := in[0], in[1], in[2]
	decay, eps := s[0], s[1]
	for i := range step {
		g := prev[i]
		ms := decay*msStepOld[i] + (1-decay)*g*g
		dx := T(math.Sqrt(float64(msDeltaOld[i]+eps))) / T(math.Sqrt(float64(ms+eps))) * g
		step[i] = dx
		msStep[i] = ms
		msDelta[i] = decay*msDeltaOld[i] + (1-decay)*dx*dx
	}
}

func rmsPropKernel(epsilon float64) *kernel {
	return &kernel{name: "rmsprop", parts: 2, consts: []float64{epsilon},
		f32: func(out, in [][]float32, s []float32) { rmsPropLoop(out, in, s, float32(epsilon)) },
		f64: func(out, in [][]float64, s []float64) { rmsPropLoop(out, in, s, epsilon) }}
}

// rmsPropLoop: step = previous / max(sqrt(ms_t), 1/max_scaling).
func rmsPropLoop[T float](out, in [][]T, s []T, eps T) {
	step, msNew, prev, ms, decay := out[0], out[1], in[0], in[1], s[0]
	for i := range step {
		g := prev[i]
		m := decay*ms[i] + (1-decay)*g*g
		msNew[i] = m
		step[i] = g / max(T(math.Sqrt(float64(m))), eps)
	}
}

func adaGradKernel() *kernel {
	return &kernel{name: "adagrad", parts: 2, f32: adaGradLoop[float32], f64: adaGradLoop[float64]}
}

// adaGradLoop: ssq_t = g² + ssq; step = lr·g / (sqrt(ssq_t) + ε).
func adaGradLoop[T float](out, in [][]T, s []T) {
	step, ssqNew, prev, ssq, lr, eps := out[0], out[1], in[0], in[1], s[0], s[1]
	for i := range step {
		g := prev[i]
		q := g*g + ssq[i]
		ssqNew[i] = q
		step[i] = lr * g / (T(math.Sqrt(float64(q))) + eps)
	}
}

func adamKernel() *kernel {
	return &kernel{name: "adam", parts: 3, f32: adamLoop[float32], f64: adamLoop[float64]}
}

// adamLoop: mean_t = β1'·mean + (1-β1')·g; variance_t = β2·variance +
// (1-β2)·g²; step = lr_t·mean_t / (sqrt(variance_t) + ε), with lr_t and
// β1' (the decayed β1) computed once per call.
func adamLoop[T float](out, in [][]T, s []T) {
	step, meanNew, varNew := out[0], out[1], out[2]
	prev, mean, variance := in[0], in[1], in[2]
	lr, b1, b2, eps := s[0], s[1], s[2], s[3]
	for i := range step {
		g := prev[i]
		m := b1*mean[i] + (1-b1)*g
		v := b2*variance[i] + (1-b2)*g*g
		meanNew[i] = m
		varNew[i] = v
		step[i] = lr * m / (T(math.Sqrt(float64(v))) + eps)
	}
}
