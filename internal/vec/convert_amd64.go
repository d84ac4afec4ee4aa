package vec

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// scaleShiftUint8ToFloat32 converts the longest prefix of src that the
// AVX2 kernel takes (a multiple of 16) and returns its length.
func scaleShiftUint8ToFloat32(dst []float32, src []uint8, scale, shift float64) int {
	n := len(src) &^ 15
	if !hasAVX2 || n == 0 {
		return 0
	}
	scaleShiftUint8ToFloat32AVX2(&dst[0], &src[0], n, scale, shift)
	return n
}

//go:noescape
func scaleShiftUint8ToFloat32AVX2(dst *float32, src *uint8, n int, scale, shift float64)
