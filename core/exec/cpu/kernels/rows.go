package kernels

import (
	"math"

	"github.com/blocks-go/blocks/internal/vec"
)

// Row kernels: the CPU backend's fused elementwise kernels over rows (the
// bias + ReLU of a Linear brick with a Rectifier, the ReLU's backward,
// SGD's p − s·g), float32 through internal/vec's AVX2 loops, float64 in
// Go, each split across the workers when large with a partition in whole
// rows (so a broadcast bias lines up) that never changes a result.

type rowKind int

const (
	rkBiasRelu  rowKind = iota // out = relu(a + b[j mod n])
	rkReluGrad                 // out = b where a > 0, else 0
	rkScaledSub                // out = a − s·b
)

// rowKernel is one fused kernel over size elements, rows of n elements
// (parts are whole rows, so a broadcast b lines up).
type rowKernel[T Float] struct {
	kind    rowKind
	out     []T
	a, b    []T
	s       T
	size, n int
}

// BiasRelu is out = relu(x + b) over size elements in rows of n, b of n
// elements broadcast along the rows (n = size: b as large as x). NaN gives
// 0, as Theano's relu of a NaN sum.
func BiasRelu[T Float](out, x, b []T, size, n int) {
	runRows(&rowKernel[T]{kind: rkBiasRelu, out: out, a: x, b: b}, size, n)
}

// ReluGrad is out = g where the ReLU's output y is positive, else +0, by a
// bit mask (no branches), over size elements.
func ReluGrad[T Float](out, y, g []T, size int) {
	runRows(&rowKernel[T]{kind: rkReluGrad, out: out, a: y, b: g}, size, size)
}

// ScaledSub is out = p − s·g over size elements, the product rounded to
// the dtype first (Theano's sub(p, mul(s, g)), no fused multiply-add).
func ScaledSub[T Float](out, p []T, s T, g []T, size int) {
	runRows(&rowKernel[T]{kind: rkScaledSub, out: out, a: p, s: s, b: g}, size, size)
}

// RunPart computes the rows of part i of parts.
func (k *rowKernel[T]) RunPart(i, parts int) {
	rows := k.size / k.n
	lo, hi := PartRange(rows, 1, i, parts)
	k.span(lo*k.n, hi*k.n)
}

// span computes out[lo:hi].
func (k *rowKernel[T]) span(lo, hi int) {
	out, a := k.out[lo:hi], k.a[lo:hi]
	if o, ok := any(out).([]float32); ok { // vectorized (internal/vec)
		a, b := any(a).([]float32), any(k.b).([]float32)
		switch k.kind {
		case rkBiasRelu:
			n := k.n
			for r := 0; r < len(o); r += n {
				vec.BiasRelu32(o[r:r+n], a[r:r+n], b[:n])
			}
		case rkReluGrad:
			vec.ReluGrad32(o, a, b[lo:hi])
		case rkScaledSub:
			vec.ScaledSub32(o, a, b[lo:hi], any(k.s).(float32))
		}
		return
	}
	switch k.kind {
	case rkBiasRelu:
		n := k.n
		b := k.b[:n]
		for r := 0; r < len(out); r += n {
			o, x := out[r:r+n], a[r:r+n]
			for j := range o {
				v := x[j] + b[j]
				if !(v > 0) {
					v = 0
				}
				o[j] = v
			}
		}
	case rkReluGrad:
		reluGrad64(any(out).([]float64), any(a).([]float64), any(k.b[lo:hi]).([]float64))
	case rkScaledSub:
		g, s := k.b[lo:hi], k.s
		for j := range out {
			out[j] = a[j] - T(s*g[j]) // the conversion keeps the product rounded (no FMA)
		}
	}
}

// reluGrad64 is out = g where y > 0, else +0, by a bit mask (float32:
// vec.ReluGrad32).
func reluGrad64(out, y, g []float64) {
	y, g = y[:len(out)], g[:len(out)]
	for j := range out {
		var m uint64
		if y[j] > 0 {
			m = ^uint64(0)
		}
		out[j] = math.Float64frombits(math.Float64bits(g[j]) & m)
	}
}

// Preallocated kernels for the running split (guarded by the split lock).
var (
	rowJob32 rowKernel[float32]
	rowJob64 rowKernel[float64]
)

// runRows runs k over size elements in rows of n: split across the
// workers when large, else (or when another split is running) serially.
func runRows[T Float](k *rowKernel[T], size, n int) {
	if size == 0 || n == 0 {
		return
	}
	k.size, k.n = size, n
	parts := ElemParts(size)
	if size/n < parts {
		parts = 1
	}
	if !LockParts(parts) {
		k.span(0, size)
		return
	}
	defer UnlockParts()
	switch kk := any(k).(type) {
	case *rowKernel[float32]:
		rowJob32 = *kk
		RunLocked(&rowJob32, parts)
		rowJob32 = rowKernel[float32]{}
	case *rowKernel[float64]:
		rowJob64 = *kk
		RunLocked(&rowJob64, parts)
		rowJob64 = rowKernel[float64]{}
	}
}
