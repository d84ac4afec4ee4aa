package cpu

import (
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// Helpers of the kernels that move parts of arrays.

// part is the array of shape shape whose data are a's from element off.
func part(a *nd.Array, off int, shape []int) *nd.Array {
	return &nd.Array{Shape: shape, Data: nd.SliceData(a.Data, off, off+nd.Prod(shape))}
}

// copyInto copies src into dst (same shape), converting the dtype.
func copyInto(dst, src *nd.Array) { kernels.CopyInto(dst, src) }

// addInto adds src into dst (same size) elementwise.
func addInto(dst, src *nd.Array) {
	switch d := dst.Data.(type) {
	case []float32:
		if s, ok := src.Data.([]float32); ok {
			for i := range d {
				d[i] += s[i]
			}
			return
		}
	case []float64:
		if s, ok := src.Data.([]float64); ok {
			for i := range d {
				d[i] += s[i]
			}
			return
		}
	}
	for i, n := 0, dst.Size(); i < n; i++ {
		dst.SetFlat(i, dst.Flat(i)+src.Flat(i))
	}
}

// zero sets a's elements to 0.
func zero(a *nd.Array) {
	switch d := a.Data.(type) {
	case []float32:
		clear(d)
	case []float64:
		clear(d)
	default:
		for i, n := 0, a.Size(); i < n; i++ {
			a.SetFlat(i, 0)
		}
	}
}

// sliceRows copies rows blocks of width elements from src (the first at
// srcOff, one every srcStride) to dst (from dstOff, every dstStride), for
// float data of one dtype; false (nothing done) otherwise.
func sliceRows(dst any, dstOff, dstStride int, src any, srcOff, srcStride, rows, width int) bool {
	switch d := dst.(type) {
	case []float32:
		if s, ok := src.([]float32); ok {
			copyRows(d, dstOff, dstStride, s, srcOff, srcStride, rows, width)
			return true
		}
	case []float64:
		if s, ok := src.([]float64); ok {
			copyRows(d, dstOff, dstStride, s, srcOff, srcStride, rows, width)
			return true
		}
	}
	return false
}

func copyRows[T float32 | float64](d []T, dOff, dStride int, s []T, sOff, sStride, rows, width int) {
	for r := range rows {
		copy(d[dOff+r*dStride:dOff+r*dStride+width], s[sOff+r*sStride:sOff+r*sStride+width])
	}
}

// setView points out at data[lo:hi], unless it already does: the executor
// reuses its arrays from call to call, so after the first call a view op
// allocates nothing (a new slice in an interface would).
func setView(out *nd.Array, data any, lo, hi int) {
	switch d := data.(type) {
	case []float32:
		if o, ok := out.Data.([]float32); ok && len(o) == hi-lo && hi > lo && &o[0] == &d[lo] {
			return
		}
	case []float64:
		if o, ok := out.Data.([]float64); ok && len(o) == hi-lo && hi > lo && &o[0] == &d[lo] {
			return
		}
	case []int64:
		if o, ok := out.Data.([]int64); ok && len(o) == hi-lo && hi > lo && &o[0] == &d[lo] {
			return
		}
	case []int32:
		if o, ok := out.Data.([]int32); ok && len(o) == hi-lo && hi > lo && &o[0] == &d[lo] {
			return
		}
	}
	out.Data = nd.SliceData(data, lo, hi)
}
