package cpu

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
	"math"
)

// The kernels of the networks' ops: softmax and log-softmax (float32
// rows through internal/vec's batch exponentials), pick, maxout.

// softmax is core.SoftmaxOp's kernel: the (log-)softmax of each row of the last axis, the max subtracted first.
func softmax(op core.Op, out *nd.Array, in []*nd.Array) {
	log := op.(core.SoftmaxOp).Log()
	n := in[0].Shape[len(in[0].Shape)-1]
	switch x := in[0].Data.(type) {
	case []float32:
		softmaxKernel(log, out.Data.([]float32), x, n)
	case []float64:
		softmaxKernel(log, out.Data.([]float64), x, n)
	default:
		panic(core.Unsupported(op, out.DType()))
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

// softmaxGrad is core.SoftmaxGradOp's kernel.
func softmaxGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	log := op.(core.SoftmaxGradOp).Log()
	n := in[0].Shape[len(in[0].Shape)-1]
	switch s := in[0].Data.(type) {
	case []float32:
		softmaxGradKernel(log, out.Data.([]float32), s, in[1].Data.([]float32), n)
	case []float64:
		softmaxGradKernel(log, out.Data.([]float64), s, in[1].Data.([]float64), n)
	default:
		panic(core.Unsupported(op, out.DType()))
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

// pick is core.PickOp's kernel: x[i, y[i]] for each row i (NaN for an index out of range, which Check refuses first).
func pick(op core.Op, out *nd.Array, in []*nd.Array) {
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

// pickGrad is core.PickGradOp's kernel: gz scattered into zeros at (i, y[i]).
func pickGrad(op core.Op, out *nd.Array, in []*nd.Array) {
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

// maxout is core.MaxoutOp's kernel: the maximum of each group of pieces.
func maxout(op core.Op, out *nd.Array, in []*nd.Array) {
	k := op.(core.MaxoutOp).Pieces()
	switch y := out.Data.(type) {
	case []float32:
		maxoutKernel(k, y, in[0].F32())
	case []float64:
		maxoutKernel(k, y, in[0].F64())
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}

func maxoutKernel[T float](k int, y, x []T) {
	for i := range y {
		m := x[i*k]
		for _, v := range x[i*k+1 : (i+1)*k] {
			if v > m {
				m = v
			}
		}
		y[i] = m
	}
}

// maxoutGrad is core.MaxoutGradOp's kernel: gz to every piece equal to its group's maximum.
func maxoutGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	k := op.(core.MaxoutGradOp).Pieces()
	switch gx := out.Data.(type) {
	case []float32:
		maxoutGradKernel(k, gx, in[0].F32(), in[1].F32(), in[2].F32())
	case []float64:
		maxoutGradKernel(k, gx, in[0].F64(), in[1].F64(), in[2].F64())
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}

func maxoutGradKernel[T float](k int, gx, x, y, gz []T) {
	for i, m := range y {
		for p := i * k; p < (i+1)*k; p++ {
			if x[p] == m {
				gx[p] = gz[i]
			} else {
				gx[p] = 0
			}
		}
	}
}
