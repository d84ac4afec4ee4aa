package core

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// softmaxOp is the softmax over the last axis; log is log-softmax,
// computed stably (max subtracted, log-sum-exp).
type softmaxOp struct{ log bool }

func (o softmaxOp) String() string {
	if o.log {
		return "LogSoftmax"
	}
	return "Softmax"
}
func (o softmaxOp) Type(in []*Variable) (nd.DType, int, error) {
	if in[0].ndim < 1 || !in[0].dtype.IsFloat() {
		return 0, 0, fmt.Errorf("%s needs a float variable with at least one axis, got %s", o, in[0].TypeString())
	}
	return in[0].dtype, in[0].ndim, nil
}
func (o softmaxOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (o softmaxOp) Run(out *nd.Array, in []*nd.Array) {
	n := in[0].Shape[len(in[0].Shape)-1]
	switch x := in[0].Data.(type) {
	case []float32:
		softmaxKernel(o.log, out.Data.([]float32), x, n)
	case []float64:
		softmaxKernel(o.log, out.Data.([]float64), x, n)
	default:
		panic(Unsupported(o, out.DType()))
	}
}

func softmaxKernel[T float](log bool, out, x []T, n int) {
	if n == 0 {
		return
	}
	// float32 takes float32's exponential (vec.Exp32, within 1 ulp;
	// float64's costs twice as much and was a tenth of the tutorial MLP's
	// step); the sums are float64 either way.
	o32, is32 := any(out).([]float32)
	if x32, _ := any(x).([]float32); is32 && len(o32) > 0 && &o32[0] != &x32[0] {
		softmaxRows32(log, o32, x32, n)
		return
	}
	for r := 0; r < len(x)/n; r++ {
		row, o := x[r*n:(r+1)*n], out[r*n:(r+1)*n]
		m := row[0]
		for _, v := range row {
			if v > m {
				m = v
			}
		}
		s := 0.0
		for i, v := range row {
			var e T
			if is32 {
				e = T(vec.Exp32(float32(v - m)))
			} else {
				e = T(math.Exp(float64(v - m)))
			}
			s += float64(e)
			o[i] = e
		}
		finishSoftmaxRow(log, o, row, m, s)
	}
}

// finishSoftmaxRow ends one row of the softmax, o holding exp(row - m)
// and s their sum: o / s, or for the log-softmax row - m - log(s).
func finishSoftmaxRow[T float](log bool, o, row []T, m T, s float64) {
	if log {
		ls := T(math.Log(s))
		for i, v := range row {
			o[i] = v - m - ls
		}
		return
	}
	inv := 1 / s
	for i := range o {
		o[i] = T(float64(o[i]) * inv)
	}
}

// softmaxRows32 is softmaxKernel's float32 work with the exponentials of
// the whole batch in one vectorized pass (vec.ExpSlice32, Exp32's bits):
// the same values as the loop, row by row; out must not be x.
func softmaxRows32(log bool, out, x []float32, n int) {
	rows := len(x) / n
	out = out[:rows*n]
	for r := range rows {
		row, o := x[r*n:(r+1)*n], out[r*n:(r+1)*n]
		m := rowMax(row)
		for i, v := range row {
			o[i] = v - m
		}
	}
	vec.ExpSlice32(out, out)
	for r := range rows {
		row, o := x[r*n:(r+1)*n], out[r*n:(r+1)*n]
		s := 0.0
		for _, e := range o {
			s += float64(e)
		}
		var m float32
		if log {
			m = rowMax(row)
		}
		finishSoftmaxRow(log, o, row, m, s)
	}
}

// rowMax is softmaxKernel's maximum: the first value any later one
// exceeds (NaNs and signed zeros as that loop takes them).
func rowMax(row []float32) float32 {
	m := row[0]
	for _, v := range row {
		if v > m {
			m = v
		}
	}
	return m
}

func (o softmaxOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(softmaxGradOp{o.log}, out, gz)}
}

// softmaxGradOp: for softmax s, gx = s·(g − Σg·s); for log-softmax l,
// gx = g − exp(l)·Σg (sums over the last axis).
type softmaxGradOp struct{ log bool }

func (o softmaxGradOp) String() string {
	if o.log {
		return "LogSoftmaxGrad"
	}
	return "SoftmaxGrad"
}
func (o softmaxGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o softmaxGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (o softmaxGradOp) Run(out *nd.Array, in []*nd.Array) {
	n := in[0].Shape[len(in[0].Shape)-1]
	switch s := in[0].Data.(type) {
	case []float32:
		softmaxGradKernel(o.log, out.Data.([]float32), s, in[1].Data.([]float32), n)
	case []float64:
		softmaxGradKernel(o.log, out.Data.([]float64), s, in[1].Data.([]float64), n)
	default:
		panic(Unsupported(o, out.DType()))
	}
}

func softmaxGradKernel[T float](log bool, out, s, g []T, n int) {
	if n == 0 {
		return
	}
	if o32, ok := any(out).([]float32); ok && log && len(o32) > 0 && &o32[0] != &any(g).([]float32)[0] {
		// The exponentials of the whole batch in one vectorized pass
		// (Exp32's bits), then the rows as below.
		rows := len(s) / n
		o32 = o32[:rows*n]
		vec.ExpSlice32(o32, any(s).([]float32)[:rows*n])
		g32 := any(g).([]float32)
		for r := range rows {
			gr, o := g32[r*n:(r+1)*n], o32[r*n:(r+1)*n]
			acc := 0.0
			for _, v := range gr {
				acc += float64(v)
			}
			for i := range o {
				o[i] = gr[i] - float32(float64(o[i])*acc)
			}
		}
		return
	}
	for r := 0; r < len(s)/n; r++ {
		sr, gr, o := s[r*n:(r+1)*n], g[r*n:(r+1)*n], out[r*n:(r+1)*n]
		acc := 0.0
		if log {
			for _, v := range gr {
				acc += float64(v)
			}
			if o32, ok := any(o).([]float32); ok {
				s32, g32 := any(sr).([]float32), any(gr).([]float32)
				for i := range o32 {
					o32[i] = g32[i] - float32(float64(vec.Exp32(s32[i]))*acc)
				}
				continue
			}
			for i := range o {
				o[i] = gr[i] - T(math.Exp(float64(sr[i]))*acc)
			}
			continue
		}
		for i, v := range gr {
			acc += float64(v) * float64(sr[i])
		}
		for i := range o {
			o[i] = sr[i] * (gr[i] - T(acc))
		}
	}
}

func (o softmaxGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	// Second derivatives of the softmax are not needed by Blocks' rules.
	return []*Variable{nil, nil}
}

// Softmax is the softmax over the last axis.
func Softmax(x *Variable) (*Variable, error) { return tryApply(softmaxOp{}, x) }

// LogSoftmax is the numerically stable log of the softmax.
func LogSoftmax(x *Variable) (*Variable, error) { return tryApply(softmaxOp{log: true}, x) }

// pickOp picks x[i, y[i]] from a matrix x for an integer vector y.
type pickOp struct{}

func (pickOp) String() string { return "Pick" }
func (pickOp) Type(in []*Variable) (nd.DType, int, error) {
	x, y := in[0], in[1]
	if x.ndim != 2 || y.ndim != 1 || y.dtype.IsFloat() {
		return 0, 0, fmt.Errorf("pick needs a matrix and an integer vector, got %s and %s", x.TypeString(), y.TypeString())
	}
	return x.dtype, 1, nil
}
func (pickOp) Shape(in [][]int) ([]int, error) {
	if in[0][0] != in[1][0] {
		return nil, fmt.Errorf("%d rows of predictions for %d targets", in[0][0], in[1][0])
	}
	return []int{in[0][0]}, nil
}
func (pickOp) Run(out *nd.Array, in []*nd.Array) {
	x, y := in[0], in[1]
	k := x.Shape[1]
	for i := 0; i < x.Shape[0]; i++ {
		j := int(y.Flat(i))
		if j < 0 || j >= k {
			out.SetFlat(i, math.NaN()) // checked in Check below
			continue
		}
		out.SetFlat(i, x.Flat(i*k+j))
	}
}
func (pickOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(pickGradOp{}, in[0], in[1], gz), nil}
}

// pickGradOp scatters gz into zeros shaped like x at (i, y[i]).
type pickGradOp struct{}

func (pickGradOp) String() string { return "PickGrad" }
func (pickGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 2, nil
}
func (pickGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (pickGradOp) Run(out *nd.Array, in []*nd.Array) {
	k := out.Shape[1]
	for i, n := 0, out.Size(); i < n; i++ {
		out.SetFlat(i, 0)
	}
	for i := 0; i < out.Shape[0]; i++ {
		j := int(in[1].Flat(i))
		if j >= 0 && j < k {
			out.SetFlat(i*k+j, in[2].Flat(i))
		}
	}
}
func (pickGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, nil, apply(pickOp{}, gz, in[1])}
}

// Pick returns x[arange(n), y]: for each row of x the entry y names.
func Pick(x, y *Variable) (*Variable, error) { return tryApply(pickOp{}, x, y) }

// CategoricalCrossEntropy is Theano's categorical_crossentropy(p, y) for
// integer targets y: −log p[i, y[i]] per row. When p is a softmax (seen
// through copies), it is computed from the log-softmax of the softmax's
// input, as Theano's optimizer does, so that it stays finite.
func CategoricalCrossEntropy(p, y *Variable) (*Variable, error) {
	if y.dtype.IsFloat() {
		if y.ndim != p.ndim {
			return nil, fmt.Errorf("categorical_crossentropy: one-hot targets must be %d-d like the predictions, got %s", p.ndim, y.TypeString())
		}
		// Σ_j −y_j log p_j per row.
		s, err := Sum(Mul(y, Log(p)), []int{-1}, false, nil)
		if err != nil {
			return nil, err
		}
		return Neg(s), nil
	}
	base := p
	for base.kind == KindOp {
		if _, ok := base.op.(CopyOp); !ok {
			break
		}
		base = base.inputs[0]
	}
	var logp *Variable
	if op, ok := base.op.(softmaxOp); ok && !op.log {
		logp = apply(softmaxOp{log: true}, base.inputs[0])
	} else {
		logp = Log(p)
	}
	picked, err := Pick(logp, y)
	if err != nil {
		return nil, fmt.Errorf("categorical_crossentropy: %v", err)
	}
	return Neg(picked), nil
}

// Check refuses targets outside the predictions' columns.
func (pickOp) Check(in []*nd.Array) error {
	x, y := in[0], in[1]
	k := x.Shape[1]
	for i := 0; i < y.Size(); i++ {
		if j := int(y.Flat(i)); j < 0 || j >= k {
			return fmt.Errorf("target %d of row %d is outside the %d classes [0, %d)", j, i, k, k)
		}
	}
	return nil
}
