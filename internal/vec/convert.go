package vec

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
