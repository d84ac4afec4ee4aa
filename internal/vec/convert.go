package vec

import "math"

// ScaleShiftUint8ToFloat32 sets dst[i] = float32(float64(src[i])*scale + shift),
// the product and the sum each rounded in float64, as numpy computes
// uint8 * scale + shift before a cast to float32. dst must be at least as
// long as src.
func ScaleShiftUint8ToFloat32(dst []float32, src []uint8, scale, shift float64) {
	dst = dst[:len(src)]
	done := scaleShiftUint8ToFloat32(dst, src, scale, shift)
	scaleShiftUint8ToFloat32Go(dst[done:], src[done:], scale, shift)
}

func scaleShiftUint8ToFloat32Go(dst []float32, src []uint8, scale, shift float64) {
	dst = dst[:len(src)]
	for i, v := range src {
		p := float64(v) * scale
		dst[i] = float32(p + shift)
	}
}

// ByteScaler is ScaleShiftUint8ToFloat32 for one scale and shift, made
// once and applied to many batches (a data pipeline's ScaleAndShift and
// Cast). Its result is a function of the byte alone, so NewByteScaler
// can prove a faster kernel right for every input: it runs the kernel on
// all 256 byte values and keeps it only where each gives the bits of the
// float64 computation. The fast kernel works in float32: the quotient of
// the byte by the float32 reciprocal of scale, corrected by one fused
// multiply-add step (Markstein's), then the shift added; eight bytes an
// instruction where the float64 kernel does four. Where the proof fails
// (a scale whose quotients round differently, most shifts) the bytes go
// through a table of the 256 results, or the float64 kernel.
type ByteScaler struct {
	scale, shift float64
	fast         bool
	r, d, h      float32       // the fast kernel's scale, divisor, shift
	table        *[256]float32 // the 256 results, for the tail
}

// NewByteScaler returns the converter of bytes x to float32(float64(x)*scale + shift).
func NewByteScaler(scale, shift float64) ByteScaler {
	s := ByteScaler{scale: scale, shift: shift, table: new([256]float32), r: float32(scale), d: float32(1 / scale), h: float32(shift)}
	var all [256]uint8
	for v := range all {
		all[v] = uint8(v)
	}
	scaleShiftUint8ToFloat32Go(s.table[:], all[:], scale, shift)
	if !useFMA || math.IsNaN(scale) || math.IsInf(scale, 0) || scale == 0 {
		return s
	}
	var got [256]float32
	scaleUint8ToFloat32FMA(&got[0], &all[0], len(all), s.r, s.d, s.h)
	for v := range got {
		if math.Float32bits(got[v]) != math.Float32bits(s.table[v]) {
			return s
		}
	}
	s.fast = true
	return s
}

// Fast reports whether the float32 kernel was proven right for this
// scale and shift (for tests and benchmarks).
func (s ByteScaler) Fast() bool { return s.fast }

// Convert sets dst[i] = float32(float64(src[i])*scale + shift) bit for bit.
// dst must be at least as long as src.
func (s ByteScaler) Convert(dst []float32, src []uint8) {
	dst = dst[:len(src)]
	done := 0
	if s.fast {
		done = len(src) &^ 15
		if done > 0 {
			scaleUint8ToFloat32FMA(&dst[0], &src[0], done, s.r, s.d, s.h)
		}
	} else {
		done = scaleShiftUint8ToFloat32(dst, src, s.scale, s.shift)
	}
	t := s.table
	for i, v := range src[done:] {
		dst[done+i] = t[v]
	}
}
